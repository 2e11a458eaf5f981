import Foundation

/// A word of a command a hint suggests, so the command works as typed in a POSIX shell.
package enum ShellWord {
    /// `text` as is when it holds only characters a shell leaves alone, else in single quotes
    /// (a single quote inside written `'\''`).
    package static func quoted(_ text: String) -> String {
        let plain =
            !text.isEmpty
            && text.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || "/._-+:=@,%".utf8.contains(b)
            }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
