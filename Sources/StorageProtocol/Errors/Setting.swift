/// Something a person can change to fix a failure, named for what it is rather than for how a
/// program spells it. A library's message names the setting (see ``Phrase``); the program
/// that shows the message spells it (`azseed` as a flag, a library caller as its own option)
/// through ``SettingNames``.
public struct Setting: Hashable, Sendable, CustomStringConvertible {
    /// Its name in code (`timeout`): how a program that spells settings tells them apart.
    public let id: String
    /// The plain name a library uses when no program spells it otherwise.
    public let plainName: String

    /// Each library declares the settings its messages name, beside its own code (this one:
    /// reaching an account; SeedKit, SeedRunner and StorageEmulator add theirs).
    public init(_ id: String, plainName: String) {
        self.id = id
        self.plainName = plainName
    }

    /// Its plain name: what a `Setting` interpolated into a plain `String` by mistake shows
    /// (only a ``Phrase`` lets the program spell it), never its id.
    public var description: String { plainName }

    public static func == (a: Setting, b: Setting) -> Bool { a.id == b.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

extension Setting {
    // Where the data is and how to reach it.
    public static let accountName = Setting("accountName", plainName: "the account name")
    public static let blobEndpoint = Setting("blobEndpoint", plainName: "the blob endpoint")
    public static let tableEndpoint = Setting("tableEndpoint", plainName: "the table endpoint")
    public static let sasToken = Setting("sasToken", plainName: "the SAS token")
    public static let loginAuth = Setting("loginAuth", plainName: "Microsoft Entra ID sign-in")
    public static let trustedCertificates = Setting(
        "trustedCertificates", plainName: "the trusted certificates (ClientConfiguration.trustedCertificates)")
    public static let timeout = Setting("timeout", plainName: "the request timeout")
    public static let logFile = Setting("logFile", plainName: "the request log file")
    /// The emulator (its messages name it, and the runner's that reach a folder it serves).
    public static let emulatorCommand = Setting("emulatorCommand", plainName: "the emulator (StorageEmulator)")
    public static let dataFolder = Setting("dataFolder", plainName: "data folder")

    /// The settings this library's messages name.
    public static let clientSettings: [Setting] = [
        .accountName, .blobEndpoint, .tableEndpoint, .sasToken, .loginAuth, .trustedCertificates, .timeout, .logFile, .emulatorCommand, .dataFolder,
    ]
}

/// How a program spells each ``Setting`` in the messages it shows. `azseed` spells them as
/// its flags; ``library`` uses each setting's ``Setting/plainName``.
public struct SettingNames: Sendable {
    private let spell: @Sendable (Setting) -> String

    public init(_ spell: @escaping @Sendable (Setting) -> String) { self.spell = spell }

    /// Each setting's plain name.
    public static let library = SettingNames { $0.plainName }

    public func callAsFunction(_ setting: Setting) -> String { spell(setting) }
}
