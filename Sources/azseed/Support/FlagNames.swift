import AzureStorage
import SeedKit
import SeedRunner
import StorageEmulator

extension SettingNames {
    /// The libraries name what to change (a ``Setting``); azseed spells it as the flag, or the
    /// command, that changes it. `FlagNamesTests` checks every library setting has one.
    static let flags = SettingNames { flagSpellings[$0] ?? $0.plainName }

    static let flagSpellings: [Setting: String] = [
        .accountName: "--account-name",
        .blobEndpoint: "--blob-endpoint",
        .tableEndpoint: "--table-endpoint",
        .sasToken: "--sas-token",
        .loginAuth: "--auth-mode login",
        .trustedCertificates: "--ca-file (or SSL_CERT_FILE)",
        .timeout: "--timeout",
        .logFile: "--log-file",
        .dataset: "--dataset DIR",
        .migrationsFolder: "--migrations DIR",
        .outputFolder: "--out",
        .backupFolder: "--backup",
        .replaceOutput: "--force",
        .dataFolder: "--data-dir",
        .table: "--table",
        .container: "--container",
        // Said by apply and verify too, whose own --output json prints counts or drift.
        .detailedPlan: "the same command with '--output json'",
        .shard: "--shard",
        .referenceTime: "--now",
        .referenceTimeToday: "--now today",
        .windowStart: "--from",
        .windowEnd: "--to",
        .sampleSize: "--sample",
        .targetsFile: "--targets",
        .copyValues: "--copy-values",
        .copyBlobs: "--copy-blobs",
        .prune: "--prune",
        .privateAccess: "--access private",
        .planCommand: "'azseed plan'",
        .importSnapshot: "'azseed import DIR'",
        .migrateStatus: "'azseed migrate status'",
        .migrateLint: "'azseed migrate lint'",
        .migratePlan: "'azseed migrate plan'",
        .migrateValidate: "'azseed migrate validate'",
        .migrateRepair: "'azseed migrate repair'",
        .migrateAcceptChecksums: "'azseed migrate repair --accept-checksums'",
        .migrateBreakLock: "break it with 'azseed migrate repair --break-lock'",
        .migrateApply: "'azseed migrate apply'",
        .migrateUndo: "'azseed migrate undo VERSION'",
        .migrateBackup: "'azseed migrate apply --backup DIR'",
        .importSnapshotPrune: "'azseed import DIR --prune'",
        .migratePlanForDataset: "azseed migrate plan --dataset",
        .lockTimeout: "--lock-timeout",
        .snapshotCommands: "'azseed export' or 'azseed generate'",
        .savePlan: "'azseed plan --out FILE'",
        .applySavedPlan: "'azseed apply --plan'",
        .exportShards: "'azseed export --shard I/N'",
        .exportShardsOfOneExport: "export --shard I/N --export-id ID",
        .emulatorCommand: "azseed emulator",
        .certificate: "--cert",
        .privateKey: "--key",
        .ports: "ports with --blob-port/--table-port (0 = any free port)",
        .tokenAuthority: "--oauth-authority",
        .allowedCopySource: "--allow-copy-source",
        .maxBlobSize: "--max-blob-mib",
        .maxCommittedBlobSize: "--max-committed-blob-mib",
    ]
}

/// An error as azseed shows it: a library's ``Phrase`` with its settings spelled as flags.
func spelled(_ error: Error) -> String {
    if let error = error as? PersonFacingError { return error.phrase.rendered(.flags) }
    return "\(error)"
}
