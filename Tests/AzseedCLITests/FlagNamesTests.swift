import AzureStorage
import SeedKit
import SeedRunner
import StorageEmulator
import Testing

@testable import azseed

/// Each library declares the settings its messages name beside its own code (AzureStorage
/// holds only reaching an account); azseed spells every one of them as a flag or a command.
@Suite struct FlagNamesTests {
    static let every = Setting.clientSettings + Setting.seedKitSettings + Setting.runnerSettings + Setting.emulatorSettings

    @Test func everyLibrarySettingHasAFlagAndAPlainNameThatIsNoFlag() {
        for setting in Self.every {
            #expect(SettingNames.flagSpellings[setting] != nil, "azseed does not spell \(setting.id)")
            #expect(!setting.plainName.isEmpty && !setting.plainName.contains("--"), "\(setting.id)")
        }
        #expect(Set(Self.every.map(\.id)).count == Self.every.count, "a setting is declared twice")
        #expect(SettingNames.flagSpellings.count == Self.every.count, "azseed spells a setting no library declares")
    }

    @Test func aPhraseIsSpelledAsFlagsByAzseedAndPlainlyForALibrary() {
        let phrase: Phrase = "run \(Setting.migrateRepair), or raise \(Setting.timeout)"
        #expect(phrase.rendered(.flags) == "run 'azseed migrate repair', or raise --timeout")
        #expect(phrase.rendered(.library) == "run Migrator.repair(acceptChecksums: false), or raise the request timeout")
    }
}
