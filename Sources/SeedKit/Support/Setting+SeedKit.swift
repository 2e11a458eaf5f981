import AzureStorage

/// What SeedKit's messages name: what a run reads, writes and generates.
extension Setting {
    public static let dataset = Setting("dataset", plainName: "the dataset folder")
    public static let migrationsFolder = Setting("migrationsFolder", plainName: "the migrations folder")
    public static let targetsFile = Setting("targetsFile", plainName: "the targets file")
    public static let outputFolder = Setting("outputFolder", plainName: "output folder")
    public static let backupFolder = Setting("backupFolder", plainName: "backup folder")
    public static let replaceOutput = Setting("replaceOutput", plainName: "the option to replace it")
    public static let table = Setting("table", plainName: "table name")
    public static let container = Setting("container", plainName: "container name")
    public static let detailedPlan = Setting("detailedPlan", plainName: "the plan as JSON")
    public static let shard = Setting("shard", plainName: "the shard")
    public static let referenceTime = Setting("referenceTime", plainName: "the reference time (now)")
    public static let referenceTimeToday = Setting("referenceTimeToday", plainName: "today as the reference time")
    public static let windowStart = Setting("windowStart", plainName: "the window's start")
    public static let windowEnd = Setting("windowEnd", plainName: "the window's end")
    public static let sampleSize = Setting("sampleSize", plainName: "the sample size")
    public static let copyValues = Setting("copyValues", plainName: "copying values")
    public static let copyBlobs = Setting("copyBlobs", plainName: "copying blobs")
    public static let prune = Setting("prune", plainName: "pruning")
    public static let privateAccess = Setting("privateAccess", plainName: "private access")
    public static let savePlan = Setting("savePlan", plainName: "a saved plan")
    public static let exportShards = Setting("exportShards", plainName: "an export in shards")
    public static let exportShardsOfOneExport = Setting("exportShardsOfOneExport", plainName: "the shards of one export (one export id)")
    public static let snapshotCommands = Setting("snapshotCommands", plainName: "an export or a generated snapshot")

    /// The settings SeedKit's messages name.
    public static let seedKitSettings: [Setting] = [
        .dataset, .migrationsFolder, .outputFolder, .backupFolder, .replaceOutput, .table, .container, .detailedPlan, .shard, .referenceTime,
        .referenceTimeToday, .windowStart, .windowEnd, .sampleSize, .targetsFile, .copyValues, .copyBlobs, .prune, .privateAccess, .snapshotCommands,
        .exportShardsOfOneExport, .exportShards, .savePlan,
    ]
}
