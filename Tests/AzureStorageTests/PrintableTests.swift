import Testing

@testable import AzureStorage
@testable import StorageProtocol

/// Text from outside reaches a terminal line escaped: it can neither end the line, drive the
/// terminal, nor reorder what the reader sees.
struct PrintableTests {
    @Test func controlsAndBidirectionalOverridesAreEscaped() {
        // From an attacker's review: a migration description holding U+202E (right-to-left
        // override) was printed raw by `migrate status` and the resume note.
        #expect(Printable.escaped("safe\u{202E}txt.exe", quotes: false) == "safe\\u202Etxt.exe")
        #expect(Printable.escaped("a\u{2066}b\u{2069}c\u{200F}d\u{061C}", quotes: false) == "a\\u2066b\\u2069c\\u200Fd\\u061C")
        // From a second review: invisible characters that hide text or shift a table's columns;
        // the joiners scripts and emoji need stay.
        #expect(Printable.escaped("a\u{200B}b\u{2060}c\u{2064}d", quotes: false) == "a\\u200Bb\\u2060c\\u2064d")
        #expect(Printable.escaped("\u{1F469}\u{200D}\u{1F4BB}", quotes: false) == "\u{1F469}\u{200D}\u{1F4BB}")
        #expect(Printable.escaped("\u{1B}]0;title\u{07}\n", quotes: false) == "\\u001B]0;title\\u0007\\n")
        #expect(Printable.escaped("Café — 東京 \u{1F600}", quotes: false) == "Café — 東京 \u{1F600}", "printable text stays as it is")
    }
}
