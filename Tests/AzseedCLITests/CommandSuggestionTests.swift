import Testing

@testable import azseed

/// An unknown command gets the one close to it suggested, as git and az do; nothing is
/// suggested when none or several are close.
@Suite struct CommandSuggestionTests {
    @Test(arguments: [
        (["aply"], "aply", "; did you mean 'apply'?"),
        (["migrate", "aplly"], "aplly", "; did you mean 'apply'?"),
        (["migrate", "stat"], "stat", "; did you mean 'status'?"),
        (["--connection-string", "x", "snapshto"], "snapshto", "; did you mean 'snapshot'?"),
        (["frobnicate"], "frobnicate", ""),
        (["migrate", "frobnicate"], "frobnicate", ""),
        (["a"], "a", ""),  // too short to say
        (["sig"], "sig", "; did you mean 'sign-requests'?"),
    ])
    func suggestsTheOneCloseCommand(arguments: [String], word: String, hint: String) {
        #expect(CommandSuggestion.hint(for: "Unexpected argument '\(word)'", arguments: arguments) == hint)
    }

    @Test func otherMessagesGetNoSuggestion() {
        #expect(CommandSuggestion.hint(for: "Missing value for '--concurrency <n>'", arguments: ["apply", "--concurrency"]).isEmpty)
        #expect(CommandSuggestion.hint(for: "Unexpected argument '--evnts'", arguments: ["apply", "--evnts"]).isEmpty)
    }

    @Test func distanceIsLevenshtein() {
        #expect(CommandSuggestion.distance("aply", "apply") == 1)
        #expect(CommandSuggestion.distance("", "abc") == 3)
        #expect(CommandSuggestion.distance("kitten", "sitting") == 3)
        #expect(CommandSuggestion.distance("same", "same") == 0)
    }
}
