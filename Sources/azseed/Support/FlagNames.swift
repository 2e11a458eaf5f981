import AzureStorage

extension SettingNames {
    /// The libraries name what to change (a ``Setting``); azseed spells it as the flag, or the
    /// command, that changes it.
    static let flags = SettingNames { setting in
        switch setting {
        case .accountName: "--account-name"
        case .blobEndpoint: "--blob-endpoint"
        case .tableEndpoint: "--table-endpoint"
        case .sasToken: "--sas-token"
        case .loginAuth: "--auth-mode login"
        case .trustedCertificates: "--ca-file (or SSL_CERT_FILE)"
        case .timeout: "--timeout"
        case .logFile: "--log-file"
        case .dataset: "--dataset DIR"
        case .migrationsFolder: "--migrations DIR"
        case .outputFolder: "--out"
        case .backupFolder: "--backup"
        case .replaceOutput: "--force"
        case .dataFolder: "--data-dir"
        case .table: "--table"
        case .container: "--container"
        case .detailedPlan: "--output json"
        case .shard: "--shard"
        case .referenceTime: "--now"
        case .referenceTimeToday: "--now today"
        case .windowStart: "--from"
        case .windowEnd: "--to"
        case .sampleSize: "--sample"
        case .copyValues: "--copy-values"
        case .copyBlobs: "--copy-blobs"
        case .prune: "--prune"
        case .privateAccess: "--access private"
        case .planCommand: "'azseed plan'"
        case .importSnapshot: "'azseed import DIR'"
        case .migrateStatus: "'azseed migrate status'"
        case .migratePlan: "'azseed migrate plan'"
        case .migrateValidate: "'azseed migrate validate'"
        case .migrateRepair: "'azseed migrate repair'"
        case .migrateAcceptChecksums: "'azseed migrate repair --accept-checksums'"
        case .migrateBreakLock: "break it with 'azseed migrate repair --break-lock'"
        case .migrateApply: "'azseed migrate apply'"
        case .migrateUndo: "'azseed migrate undo VERSION'"
        case .migrateBackup: "'azseed migrate apply --backup DIR'"
        case .importSnapshotPrune: "'azseed import DIR --prune'"
        case .migratePlanForDataset: "azseed migrate plan --dataset"
        case .lockTimeout: "--lock-timeout"
        case .snapshotCommands: "'azseed export' or 'azseed generate'"
        case .savePlan: "'azseed plan --out FILE'"
        case .applySavedPlan: "'azseed apply --plan'"
        case .exportShards: "'azseed export --shard I/N'"
        case .exportShardsOfOneExport: "export --shard I/N --export-id ID"
        case .emulatorCommand: "azseed emulator"
        case .certificate: "--cert"
        case .privateKey: "--key"
        case .ports: "ports with --blob-port/--table-port (0 = any free port)"
        case .tokenAuthority: "--oauth-authority"
        case .allowedCopySource: "--allow-copy-source"
        case .maxBlobSize: "--max-blob-mib"
        case .maxCommittedBlobSize: "--max-committed-blob-mib"
        }
    }
}

/// An error as azseed shows it: a library's ``Phrase`` with its settings spelled as flags.
func spelled(_ error: Error) -> String {
    if let error = error as? PersonFacingError { return error.phrase.rendered(.flags) }
    return "\(error)"
}
