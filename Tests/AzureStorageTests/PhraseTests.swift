import AzureStorage
import Foundation
import Testing

/// Libraries state facts and name the setting to change; the program that shows the message
/// spells it. These pin both halves: a phrase keeps its settings through nesting, and no
/// library's source spells a flag itself.
struct PhraseTests {
    @Test func aPhraseSpellsItsSettingsOnlyWhenShown() {
        let inner: Phrase = "raise \(Setting.timeout) or pass \(Setting.trustedCertificates)"
        let outer: Phrase = "h: no answer (\(3) tries); \(inner)"
        #expect(outer.settings == [.timeout, .trustedCertificates])
        #expect(
            outer.rendered(SettingNames { $0 == .timeout ? "--timeout" : "--ca-file" })
                == "h: no answer (3 tries); raise --timeout or pass --ca-file")
        #expect(
            outer.description
                == "h: no answer (3 tries); raise the request timeout or pass the trusted certificates (ClientConfiguration.trustedCertificates)")
        #expect(Phrase(verbatim: "\\(x) --y").settings.isEmpty)
    }

    @Test func anErrorsRemedyIsSpelledByTheProgram() {
        var error = AzureStorageError(kind: .transport, operation: "Get Blob", url: "http://h/c/b", message: "timed out waiting for the service")
        error.remedy = "raise \(Setting.timeout) if the service is only slow"
        let wrapped: Phrase = "reading: \(error)"
        #expect(wrapped.settings == [.timeout])
        #expect(
            wrapped.rendered(SettingNames { _ in "--timeout" }).hasSuffix(
                "timed out waiting for the service; raise --timeout if the service is only slow"))
        #expect(!error.description.contains("--"))
    }

    /// From a new user's review: "see migrateValidate" — a Setting interpolated into a String
    /// printed its case name. It shows its plain name now.
    @Test func aSettingInAPlainStringShowsItsPlainName() {
        let more = true ? " (see \(Setting.loginAuth))" : ""
        #expect(more == " (see \(Setting.loginAuth.plainName))" && !more.contains("loginAuth"))
    }

    @Test func everySettingHasAPlainNameThatIsNoFlag() {
        for setting in Setting.clientSettings {
            #expect(!setting.plainName.isEmpty && !setting.plainName.contains("--"), "\(setting.id)")
        }
    }

    /// The libraries' string literals name no flag: a `--flag` in them would reach a library
    /// caller who has no such flag. `az`'s own arguments are the one exception.
    @Test func noLibrarySpellsAFlag() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let libraries = ["AzureStorage", "SeedKit", "SeedRunner", "StorageEmulator", "EmbeddedEmulator", "AzseedTesting"]
        let flagInLiteral = #/"[^"]*--[a-z][a-z-]*/#
        var found: [String] = []
        for library in libraries {
            let folder = root.appendingPathComponent("Sources/\(library)")
            guard let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { continue }
            for case let file as URL in files where file.pathExtension == "swift" && file.lastPathComponent != "AzureCLICredential.swift" {
                for (n, line) in try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.trimmingCharacters(in: .whitespaces)
                    if code.hasPrefix("//") { continue }
                    if code.firstMatch(of: flagInLiteral) != nil { found.append("\(library)/\(file.lastPathComponent):\(n + 1)") }
                }
            }
        }
        #expect(found.isEmpty, "library messages spelling a flag: \(found)")
    }
}
