import AzureStorage

/// What the use cases' messages name: the commands (or, for a library caller, the calls) a
/// remedy suggests running.
extension Setting {
    public static let planCommand = Setting("planCommand", plainName: "a new plan")
    public static let importSnapshot = Setting("importSnapshot", plainName: "importSnapshot(_:into:…)")
    public static let migrateStatus = Setting("migrateStatus", plainName: "Migrator.status()")
    public static let migrateLint = Setting("migrateLint", plainName: "Migrator.lint()")
    public static let migratePlan = Setting("migratePlan", plainName: "Migrator.plan()")
    public static let migrateValidate = Setting("migrateValidate", plainName: "Migrator.status()")
    public static let migrateRepair = Setting("migrateRepair", plainName: "Migrator.repair(acceptChecksums: false)")
    public static let migrateAcceptChecksums = Setting("migrateAcceptChecksums", plainName: "Migrator.repair(acceptChecksums: true)")
    public static let migrateBreakLock = Setting("migrateBreakLock", plainName: "break it with Migrator.breakLock()")
    public static let migrateApply = Setting("migrateApply", plainName: "Migrator.apply()")
    public static let migrateUndo = Setting("migrateUndo", plainName: "Migrator.undo(to:)")
    public static let migrateBackup = Setting("migrateBackup", plainName: "the backup Migrator.apply(backup:) writes")
    public static let importSnapshotPrune = Setting("importSnapshotPrune", plainName: "importSnapshot(_:into:…) with pruning")
    public static let migratePlanForDataset = Setting("migratePlanForDataset", plainName: "Migrator.plan() over the migrations folder of the dataset")
    public static let lockTimeout = Setting("lockTimeout", plainName: "RunTarget.lockTimeout")
    public static let applySavedPlan = Setting("applySavedPlan", plainName: "the apply of a saved plan")

    /// The settings SeedRunner's messages name.
    public static let runnerSettings: [Setting] = [
        .planCommand, .importSnapshot, .migrateStatus, .migrateLint, .migratePlan, .migrateValidate, .migrateRepair, .migrateAcceptChecksums,
        .migrateBreakLock,
        .migrateApply, .migrateUndo, .migrateBackup, .importSnapshotPrune, .migratePlanForDataset, .lockTimeout, .applySavedPlan,
    ]
}
