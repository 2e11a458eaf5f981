/// Something a person can change to fix a failure, named for what it is rather than for how a
/// program spells it. A library's message names the setting (see ``Phrase``); the program
/// that shows the message spells it (`azseed` as a flag, a library caller as its own option)
/// through ``SettingNames``.
public enum Setting: String, Sendable, CaseIterable, CustomStringConvertible {
    // Where the data is and how to reach it.
    case accountName, blobEndpoint, tableEndpoint, sasToken, loginAuth, trustedCertificates, timeout, logFile
    // What a run reads or writes.
    case dataset, migrationsFolder, outputFolder, backupFolder, replaceOutput, dataFolder, table, container, detailedPlan, shard
    // What a run generates.
    case referenceTime, referenceTimeToday, windowStart, windowEnd, sampleSize, copyValues, copyBlobs, prune, privateAccess
    // Commands a remedy suggests running.
    case planCommand, importSnapshot, migrateStatus, migratePlan, migrateValidate, migrateRepair, migrateAcceptChecksums, migrateBreakLock,
        migrateApply, migrateUndo, migrateBackup, importSnapshotPrune, migratePlanForDataset,
        lockTimeout,
        snapshotCommands, savePlan,
        applySavedPlan, exportShards,
        exportShardsOfOneExport, emulatorCommand
    // The emulator's start-up.
    case certificate, privateKey, ports, tokenAuthority, allowedCopySource, maxBlobSize, maxCommittedBlobSize

    /// Its plain name: what a `Setting` interpolated into a plain `String` by mistake shows
    /// (only a ``Phrase`` lets the program spell it), never the case's name.
    public var description: String { plainName }

    /// The plain name a library uses when no program spells it otherwise.
    public var plainName: String {
        switch self {
        case .accountName: "the account name"
        case .blobEndpoint: "the blob endpoint"
        case .tableEndpoint: "the table endpoint"
        case .sasToken: "the SAS token"
        case .loginAuth: "Microsoft Entra ID sign-in"
        case .trustedCertificates: "the trusted certificates (ClientConfiguration.trustedCertificates)"
        case .timeout: "the request timeout"
        case .logFile: "the request log file"
        case .dataset: "the dataset folder"
        case .migrationsFolder: "the migrations folder"
        case .outputFolder: "output folder"
        case .backupFolder: "backup folder"
        case .replaceOutput: "the option to replace it"
        case .dataFolder: "data folder"
        case .table: "table name"
        case .container: "container name"
        case .detailedPlan: "the plan as JSON"
        case .shard: "the shard"
        case .referenceTime: "the reference time (now)"
        case .referenceTimeToday: "today as the reference time"
        case .windowStart: "the window's start"
        case .windowEnd: "the window's end"
        case .sampleSize: "the sample size"
        case .copyValues: "copying values"
        case .copyBlobs: "copying blobs"
        case .prune: "pruning"
        case .privateAccess: "private access"
        case .planCommand: "a new plan"
        case .importSnapshot: "importSnapshot(_:into:…)"
        case .migrateStatus: "Migrator.status()"
        case .migratePlan: "Migrator.plan()"
        case .migrateValidate: "Migrator.status()"
        case .migrateRepair: "Migrator.repair(acceptChecksums: false)"
        case .migrateAcceptChecksums: "Migrator.repair(acceptChecksums: true)"
        case .migrateBreakLock: "break it with Migrator.breakLock()"
        case .migrateApply: "Migrator.apply()"
        case .migrateUndo: "Migrator.undo(to:)"
        case .migrateBackup: "the backup Migrator.apply(backup:) writes"
        case .importSnapshotPrune: "importSnapshot(_:into:…) with pruning"
        case .migratePlanForDataset: "Migrator.plan() over the migrations folder of the dataset"
        case .lockTimeout: "RunTarget.lockTimeout"
        case .snapshotCommands: "an export or a generated snapshot"
        case .savePlan: "a saved plan"
        case .applySavedPlan: "the apply of a saved plan"
        case .exportShards: "an export in shards"
        case .exportShardsOfOneExport: "the shards of one export (one export id)"
        case .emulatorCommand: "the emulator (StorageEmulator)"
        case .certificate: "the TLS certificate"
        case .privateKey: "the TLS private key"
        case .ports: "other ports (0 = any free port)"
        case .tokenAuthority: "an OAuth authority"
        case .allowedCopySource: "an allowed copy source"
        case .maxBlobSize: "the largest blob size"
        case .maxCommittedBlobSize: "the largest committed blob size"
        }
    }
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
