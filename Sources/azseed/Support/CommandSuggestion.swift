import ArgumentParser

/// "did you mean 'apply'?" after an unknown command, as git and az say it: the command line is
/// walked down the command tree as far as its words name subcommands, and the word the parser
/// did not expect is compared with the subcommands there.
enum CommandSuggestion {
    /// `; did you mean 'X'?` when `message` is the parser's "Unexpected argument 'W'" for a
    /// word of `arguments` (the command line without the program) that is within two edits of
    /// exactly one subcommand, or (three letters or more) a prefix of exactly one; otherwise
    /// empty.
    static func hint(for message: String, arguments: [String], root: any ParsableCommand.Type = Azseed.self) -> String {
        let prefix = "Unexpected argument '"
        guard message.hasPrefix(prefix), message.hasSuffix("'") else { return "" }
        let word = String(message.dropFirst(prefix.count).dropLast())
        guard !word.isEmpty, !word.hasPrefix("-") else { return "" }
        var command = root
        for argument in arguments {
            if argument == word { break }
            guard let next = command.configuration.subcommands.first(where: { name(of: $0) == argument }) else { continue }
            command = next
        }
        let names = command.configuration.subcommands.map(name(of:))
        guard !names.contains(word) else { return "" }
        let close = names.filter { distance(word.lowercased(), $0) <= min(2, max(1, word.count / 3)) }
        let extending = word.count >= 3 ? names.filter { $0.hasPrefix(word.lowercased()) } : []
        guard let suggestion = close.count == 1 ? close.first : extending.count == 1 ? extending.first : nil else { return "" }
        return "; did you mean '\(suggestion)'?"
    }

    private static func name(of command: any ParsableCommand.Type) -> String {
        command.configuration.commandName ?? String(describing: command).lowercased()
    }

    /// Levenshtein distance by characters (command names are ASCII).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
