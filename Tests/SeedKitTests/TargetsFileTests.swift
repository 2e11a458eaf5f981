import AzseedTestSupport
import Foundation
import Testing

@testable import SeedKit

/// `--targets FILE` (issue 49, item 7): read whole, each mistake one located line, `${VAR}`
/// from the environment and never a value in a message.
@Suite struct TargetsFileTests {
    static func read(_ text: String, _ environment: [String: String] = [:]) throws(DatasetError) -> TargetsFile {
        let folder = try! Scratch.folder("targets")
        let url = folder.appendingPathComponent("targets.yaml")
        try! Data(text.utf8).write(to: url)
        return try TargetsFile.read(url, environment: environment)
    }

    @Test func targetsAreReadWithTheirOptionsAndVariables() throws {
        let file = try Self.read(
            "targets:\n  - name: contoso\n    connection-string: \"A=${X};B=${Y_2}\"\n  - name: fabrikam\n    account-name: fab\n    auth-mode: login\n",
            ["X": "1", "Y_2": "two"])
        #expect(file.entries.map(\.name) == ["contoso", "fabrikam"])
        #expect(file.entries[0].options.map { "\($0.flag)=\($0.value)" } == ["connection-string=A=1;B=two"])
        #expect(file.entries[1].options.map(\.flag) == ["account-name", "auth-mode"])
    }

    @Test func everyMistakeIsOneLocatedLineAndNoValue() {
        let cases = [
            ("targets: []\n", "targets is empty"),
            ("targets:\n  - name: a\n    account-key: k\n", "unknown key 'account-key'"),
            ("targets:\n  - data-dir: d\n", "missing 'name'"),
            ("targets:\n  - name: a b\n    data-dir: d\n", "give 1 to 63 letters"),
            ("targets:\n  - name: a\n    data-dir: d\n  - name: a\n    data-dir: e\n", "target a is named twice"),
            ("targets:\n  - name: a\n    connection-string: ${SECRET_UNSET}\n", "takes ${SECRET_UNSET}, which is not set"),
            ("targets:\n  - name: a\n    connection-string: \"${OPEN\"\n", "without its '}'"),
            ("targets:\n  - name: a\n    connection-string: \"${a-b}\"\n", "not a variable name"),
            ("other: 1\n", "unknown key 'other'"),
            ("targets:\n  - name: \"\"\n    data-dir: d\n", "give 1 to 63 letters"),
        ]
        for (text, says) in cases {
            do {
                _ = try Self.read(text, ["SET": "hunter2"])
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.description.contains(says) && error.line != nil && !error.description.contains("hunter2"), "\(text): \(error)")
            }
        }
    }

    /// From an attacker's review: an account key in a variable put under the wrong key showed
    /// up in a target's error line; a connection string's own text never shows either.
    @Test func aTargetsSecretsAreRedactedFromWhatIsShown() throws {
        let key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
        let file = try Self.read(
            "targets:\n  - name: a\n    table-endpoint: \"http://h/${KEY}\"\n    connection-string: \"AccountKey=${KEY}\"\n", ["KEY": key])
        let entry = file.entries[0]
        let shown = TargetsFile.redacted(
            "cannot reach http://h/\(key)/t; AccountKey=\(key); \(key.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)!)", entry)
        #expect(!shown.contains(key) && !shown.contains("Eby8vdM0") && shown.contains("${KEY}"), "\(shown)")
    }
}
