import StorageProtocol

/// What the emulator's messages name: its start-up options.
extension Setting {
    public static let certificate = Setting("certificate", plainName: "the TLS certificate")
    public static let privateKey = Setting("privateKey", plainName: "the TLS private key")
    public static let ports = Setting("ports", plainName: "other ports (0 = any free port)")
    public static let tokenAuthority = Setting("tokenAuthority", plainName: "an OAuth authority")
    public static let allowedCopySource = Setting("allowedCopySource", plainName: "an allowed copy source")
    public static let maxBlobSize = Setting("maxBlobSize", plainName: "the largest blob size")
    public static let maxCommittedBlobSize = Setting("maxCommittedBlobSize", plainName: "the largest committed blob size")

    /// The settings the emulator's messages name.
    public static let emulatorSettings: [Setting] = [
        .certificate, .privateKey, .ports, .tokenAuthority, .allowedCopySource, .maxBlobSize, .maxCommittedBlobSize,
    ]
}
