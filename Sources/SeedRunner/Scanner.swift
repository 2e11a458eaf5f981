import AzureStorage
import Foundation
import SeedKit

/// What `azseed scan` reads and how much of it it keeps.
public struct ScanOptions: Sendable {
    /// Containers and tables to read; nil reads every one the account has.
    public var containers: [String]?
    public var tables: [String]?
    /// At most this many entities' values per partition go into the dataset.
    public var sample: Int
    /// Copy the blobs' bytes (else placeholders of the same type and size).
    public var copyBlobs: Bool
    /// Copy values as they are (`--copy-values`); off, ``ScanInput/copyValues`` keeps people out.
    public var copyValues = false
    /// Whether the blobs' bytes are copied: asked for, or copying values (which copies
    /// everything exactly).
    public var copiesBlobs: Bool { copyBlobs || copyValues }
    /// Blobs keep their names when values or the blobs themselves are copied; otherwise they
    /// are written under made-up names (a photo's name may be its subject's).
    public var keepsBlobNames: Bool { copyValues || copyBlobs }
    /// The new dataset's name.
    public var name: String
    /// How the dataset's comments and the summary spell the settings they name.
    public var names: SettingNames = .library

    public init(containers: [String]?, tables: [String]?, sample: Int, copyBlobs: Bool, name: String) {
        self.containers = containers
        self.tables = tables
        self.sample = sample
        self.copyBlobs = copyBlobs
        self.name = name
    }
}

/// What a scan read and wrote.
public struct ScanReport: Sendable {
    public var containers = 0, blobs = 0, tables = 0, partitions = 0, entities = 0
    /// Bytes of blob data downloaded (`--copy-blobs`).
    public var bytesCopied = 0
    /// What the scan inferred, one line a finding.
    public var summary: [String] = []
    /// Blobs whose names cannot be files of a dataset folder, left out.
    public var skippedBlobs: [String] = []
    /// Properties the fidelity report compared, and the flagged ones (`fidelity.md`).
    public var fidelityCompared = 0
    public var fidelityFlags: [String] = []
}

/// Reads an account's containers and tables and writes a dataset that reproduces their
/// shape (``DatasetInference``). Entities are read page by page into bounded statistics
/// (``PartitionObservation``); files are written on `BlockingPool`'s threads.
public struct Scanner: Sendable {
    public let run: SeedRun

    public init(run: SeedRun) { self.run = run }

    /// Scans a snapshot folder (`azseed export` or `azseed generate` output) as it would the
    /// account it came from; `copyBlobs` copies its blob files.
    public static func scan(snapshot directory: URL, _ options: ScanOptions, into folder: URL) async throws -> ScanReport {
        try await BlockingPool.run { try Self.checkEmpty(folder) }
        let snapshot = try await BlockingPool.run { try SnapshotReader.read(directory) }
        var report = ScanReport()
        let wanted = { (name: String, list: [String]?) in list.map { $0.contains { $0.isExactly(name) } } ?? true }
        for name in options.containers ?? [] where !snapshot.containers.contains(where: { $0.name.isExactly(name) }) {
            throw RunError("container '\(name)' is not in the snapshot \(directory.path); pass the right \(Setting.container)")
        }
        for name in options.tables ?? [] where !snapshot.tables.contains(where: { $0.name.isExactly(name) }) {
            throw RunError("table '\(name)' is not in the snapshot \(directory.path); pass the right \(Setting.table)")
        }
        let chosen = snapshot.containers.filter { wanted($0.name, options.containers) }
        var skipped: [String] = []
        let containers = chosen.map { c in
            let writable = Self.writableNames(c.blobs.map(\.name))
            skipped += c.blobs.filter { !writable.contains(ExactString($0.name)) }.map { "\(c.name)/\($0.name)" }
            let kept = c.blobs.filter { writable.contains(ExactString($0.name)) }
            var scanned = ScannedContainer(name: c.name, access: c.access, blobs: kept.map { ($0.name, $0.size, $0.contentType) })
            if options.copyValues {
                scanned.properties = kept.map { $0.properties ?? BlobProperties(name: $0.name, contentLength: $0.size, contentType: $0.contentType) }
                scanned.metadata = c.metadata ?? [:]
            }
            return scanned
        }
        .map { options.keepsBlobNames ? $0 : $0.placeholderNames() }
        let tables = snapshot.tables.filter { wanted($0.name, options.tables) }
        let copies = options.copyValues ? CopiedEntityFiles(folder: folder) : nil
        // Reading the table files blocks: on BlockingPool's threads.
        let observations = try await Self.cleaningUp(folder) {
            try await BlockingPool.run { () -> [PartitionObservation] in
                var observations = PartitionObservations(sampleSize: options.sample)
                for table in tables {
                    var page: [TableEntity] = []
                    try table.forEachEntity { entity in
                        observations.observe(entity, table: table.name)
                        if let copies {
                            page.append(entity)
                            if page.count == 1_000 {
                                try copies.append(page, table: table.name)
                                page.removeAll(keepingCapacity: true)
                            }
                        }
                    }
                    try copies?.append(page, table: table.name)
                }
                return observations.all(copies: copies)
            }
        }
        report.containers = containers.count
        report.blobs = chosen.reduce(0) { $0 + $1.blobs.count }
        report.skippedBlobs = skipped
        report.tables = tables.count
        report.partitions = observations.count
        report.entities = observations.reduce(0) { $0 + $1.count }
        let files = Dictionary(
            chosen.flatMap { c in c.blobs.compactMap { b in b.file.map { ("\(c.name)/\(b.name)", $0) } } }, uniquingKeysWith: { a, _ in a })
        let input = ScanInput(
            name: options.name, source: "the snapshot \(directory.path)", blobEndpoint: snapshot.blobEndpoint ?? "",
            containers: containers, partitions: observations, sample: options.sample, copiedBlobs: options.copiesBlobs,
            copyValues: options.copyValues, names: options.names)
        let inferred = DatasetInference.infer(input)
        report.summary = inferred.summary
        try await write(inferred, containers: containers, options: options, to: folder, report: &report) { container, blob, file in
            guard let source = files["\(container)/\(blob)"] else { return 0 }
            return try await BlockingPool.run {
                try FileManager.default.copyItem(at: source, to: file)
                return (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
            }
        }
        try await Self.fidelity(inferred, folder: folder, report: &report)
        return report
    }

    public func scan(_ options: ScanOptions, into folder: URL, onEntities: (@Sendable (Int) -> Void)? = nil) async throws -> ScanReport {
        try await BlockingPool.run { try Self.checkEmpty(folder) }
        try await Reachability.check(
            [run.blobs.account.blobEndpoint, run.tables.account.tableEndpoint], trustedCertificates: run.blobs.configuration.trustedCertificates)
        var report = ScanReport()
        var containers: [ScannedContainer] = []
        var observations = PartitionObservations(sampleSize: options.sample)
        var tablesSeen = Set<String>()
        let copies = options.copyValues ? CopiedEntityFiles(folder: folder) : nil
        do {
            var containerNames = options.containers ?? []
            if options.containers == nil { containerNames = try await run.blobs.listContainers().filter { !ReservedNames.isLedgerContainer($0) } }
            for name in containerNames {
                guard let access = try await run.blobs.containerProperties(name) else {
                    throw RunError("container '\(name)' does not exist in \(run.target.displayName); pass the right \(Setting.container)")
                }
                var blobs: [(name: String, size: Int, contentType: String)] = []
                var properties: [BlobProperties] = []
                for try await page in run.blobs.list(container: name) {
                    blobs += page.map { ($0.name, $0.contentLength, $0.contentType ?? "application/octet-stream") }
                    if options.copyValues { properties += page }
                }
                report.blobs += blobs.count
                // Blobs that cannot be files of the dataset's folder are left out, here, so the
                // dataset names only what it holds.
                let writable = Self.writableNames(blobs.map(\.name))
                report.skippedBlobs += blobs.filter { !writable.contains(ExactString($0.name)) }.map { "\(name)/\($0.name)" }
                blobs = blobs.filter { writable.contains(ExactString($0.name)) }
                var scanned = ScannedContainer(name: name, access: access, blobs: blobs)
                scanned.properties = properties.filter { writable.contains(ExactString($0.name)) }
                if options.copyValues { scanned.metadata = try await run.blobs.containerMetadata(name) ?? [:] }
                containers.append(options.keepsBlobNames ? scanned : scanned.placeholderNames())
            }
            // In byte order whatever order they were named in: which small partitions keep
            // their entities within the scan's budget must not depend on it.
            var tableNames = (options.tables ?? []).sorted { $0.byteOrder($1) < 0 }
            // azseed's own ledger is not the account's data.
            if options.tables == nil { tableNames = try await run.tables.listTables().filter { !ReservedNames.isLedger($0) } }
            for table in tableNames {
                guard try await run.tables.tableExists(table) else {
                    throw RunError("table '\(table)' does not exist in \(run.target.displayName); pass the right \(Setting.table)")
                }
                for try await page in run.tables.query(table, fullMetadata: true) {
                    for decoded in page { observations.observe(decoded.entity, table: table) }
                    if !page.isEmpty { tablesSeen.insert(table) }
                    if let copies {
                        let entities = page.map(\.entity)
                        try await BlockingPool.run { try copies.append(entities, table: table) }
                    }
                    report.entities += page.count
                    onEntities?(report.entities)
                }
            }
            report.containers = containers.count
            report.tables = tableNames.count
            for table in tableNames where !tablesSeen.contains(table) {
                report.summary.append("table '\(table)' holds no entities: no kind for it")
            }
        } catch {
            await Self.remove(folder)
            throw RunError.explaining(error, while: "scanning")
        }
        let partitions = observations.all(copies: copies)
        report.partitions = partitions.count
        let input = ScanInput(
            name: options.name, source: run.target.displayName, blobEndpoint: run.target.blobEndpoint,
            containers: containers, partitions: partitions, sample: options.sample, copiedBlobs: options.copiesBlobs,
            copyValues: options.copyValues, names: options.names)
        let inferred = DatasetInference.infer(input)
        report.summary = inferred.summary + report.summary
        let run = self.run
        try await Self.write(inferred, containers: containers, options: options, to: folder, report: &report) { container, blob, file in
            try await run.blobs.download(container: container, name: blob, to: file)
        }
        try await Self.fidelity(inferred, folder: folder, report: &report)
        return report
    }

    /// Generates the written dataset at the observed counts and compares it with what was
    /// observed (``FidelityReport``), on `BlockingPool`'s threads (it is CPU work); writes
    /// `fidelity.md` beside `dataset.yaml`. A dataset that does not generate is itself a finding.
    private static func fidelity(_ inferred: InferredDataset, folder: URL, report: inout ScanReport) async throws {
        let kinds = inferred.kinds
        let copyValues = inferred.copyValues
        let outcome: (markdown: String, html: String, flags: [String], compared: Int)
        do {
            outcome = try await BlockingPool.run {
                let made = try FidelityReport.compare(
                    kinds, with: try Dataset.load(directory: folder), now: EdmDateTime(unixSeconds: Int64(Date().timeIntervalSince1970)),
                    copyValues: copyValues)
                return (made.markdown, made.html, made.flags, made.compared)
            }
        } catch {
            let problem = "the scanned dataset does not generate: \(error)"
            outcome = (
                "# Fidelity of the scanned dataset\n\n✗ \(MarkupEscape.text(problem))\n",
                "<!DOCTYPE html><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\"><title>Fidelity</title><p>✗ \(FidelityPage.escape(problem))</p>\n",
                [problem], 0
            )
        }
        report.fidelityCompared = outcome.compared
        report.fidelityFlags = outcome.flags
        do {
            try await BlockingPool.run {
                try Data(outcome.markdown.utf8).write(to: folder.appendingPathComponent("fidelity.md"))
                try Data(outcome.html.utf8).write(to: folder.appendingPathComponent("fidelity.html"))
            }
        } catch {
            throw RunError("\(Setting.outputFolder) \(folder.path): cannot write the fidelity report there (\(FileProblem.describe(error)))")
        }
    }

    /// Writes the dataset; `copy` brings a blob's own bytes into `file` (`--copy-blobs`) and says how many.
    private static func write(
        _ inferred: InferredDataset, containers: [ScannedContainer], options: ScanOptions, to folder: URL, report: inout ScanReport,
        copy: (String, String, URL) async throws -> Int
    ) async throws {
        let made: Bool
        do {
            made = try await BlockingPool.run { () -> Bool in
                let existed = FileManager.default.fileExists(atPath: folder.path)
                try FileManager.default.createDirectory(at: folder.appendingPathComponent("templates"), withIntermediateDirectories: true)
                try Data(inferred.yaml.utf8).write(to: folder.appendingPathComponent("dataset.yaml"))
                for (name, text) in inferred.templates {
                    try Data(text.utf8).write(to: folder.appendingPathComponent("templates").appendingPathComponent(name))
                }
                for container in containers where !container.properties.isEmpty {
                    try FileManager.default.createDirectory(at: folder.appendingPathComponent("blobs"), withIntermediateDirectories: true)
                    try Data(BlobPropertiesFile.encode(container.properties)).write(
                        to: folder.appendingPathComponent(DatasetInference.propertiesFile(container.name)))
                }
                return !existed
            }
        } catch {
            // Nothing half-written stays behind (the folder was new or empty).
            await Self.remove(folder)
            throw RunError(
                "\(Setting.outputFolder) \(folder.path): cannot write the dataset there (\(FileProblem.describe(error))); choose a folder you can write to"
            )
        }
        do {
            var index = 0
            for container in containers {
                for blob in container.blobs {
                    guard Self.isFileName(blob.name) else {
                        report.skippedBlobs.append("\(container.name)/\(blob.name)")
                        continue
                    }
                    let file = folder.appendingPathComponent("blobs/\(container.name)/\(container.writtenName(blob.name))")
                    try await BlockingPool.run {
                        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                    }
                    if options.copiesBlobs {
                        report.bytesCopied += try await copy(container.name, blob.name, file)
                    } else {
                        let bytes = BlobPlaceholder.bytes(
                            name: container.writtenName(blob.name), size: blob.size, contentType: blob.contentType, index: index)
                        try await BlockingPool.run { try Data(bytes).write(to: file) }
                    }
                    index += 1
                }
            }
        } catch {
            let cleanup = made
            _ = try? await BlockingPool.run {
                if cleanup {
                    try FileManager.default.removeItem(at: folder)
                } else {
                    for entry in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                        try FileManager.default.removeItem(at: folder.appendingPathComponent(entry))
                    }
                }
            }
            if error is AzureStorageError || error is RunError { throw RunError.explaining(error, while: "copying blobs into \(folder.path)") }
            throw RunError(
                "\(Setting.outputFolder) \(folder.path): cannot write the blobs there (\(FileProblem.describe(error))); choose a folder you can write to"
            )
        }
    }

    /// Runs `body`; when it fails, what the scan wrote into `folder` so far goes (the folder
    /// was new or empty: ``checkEmpty(_:)``).
    static func cleaningUp<T: Sendable>(_ folder: URL, _ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch {
            await remove(folder)
            throw error
        }
    }

    /// Empties `folder` of what a failed scan wrote (it was new or empty before).
    static func remove(_ folder: URL) async {
        _ = try? await BlockingPool.run {
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
                try FileManager.default.removeItem(at: folder.appendingPathComponent(entry))
            }
        }
    }

    /// The names of `names` that can be files of the dataset's folder: relative paths of
    /// visible files (``isFileName(_:)``) that are not also another blob's folder (`a` beside
    /// `a/b`: one of them could not be written).
    static func writableNames(_ names: [String]) -> Set<ExactString> {
        var folders = Set<ExactString>()
        for name in names {
            var prefix = ""
            for part in name.split(separator: "/", omittingEmptySubsequences: false).dropLast() {
                prefix += prefix.isEmpty ? String(part) : "/" + String(part)
                folders.insert(ExactString(prefix))
            }
        }
        var writable = Set<ExactString>()
        for name in names where isFileName(name) && !folders.contains(ExactString(name)) { writable.insert(ExactString(name)) }
        return writable
    }

    /// A blob name that is a relative path of visible files (the dataset loader skips hidden ones).
    static func isFileName(_ name: String) -> Bool {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        return !parts.isEmpty && parts.allSatisfy { !$0.isEmpty && !$0.hasPrefix(".") && $0.utf8.count <= 255 }
    }

    /// The output must be a new or empty folder: a scan never writes over anything.
    static func checkEmpty(_ folder: URL) throws {
        var isDirectory: ObjCBool = false
        // A file where a folder of the path should be.
        var parent = folder.deletingLastPathComponent()
        while parent.path != "/" && !parent.path.isEmpty {
            if FileManager.default.fileExists(atPath: parent.path, isDirectory: &isDirectory) {
                if !isDirectory.boolValue {
                    throw RunError(
                        "\(Setting.outputFolder) \(folder.path): \(parent.path) is a file, not a folder; choose another \(Setting.outputFolder)")
                }
                break
            }
            parent = parent.deletingLastPathComponent()
        }
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) else { return }
        guard isDirectory.boolValue else {
            throw RunError("\(Setting.outputFolder) \(folder.path): is a file, not a folder; choose another \(Setting.outputFolder)")
        }
        guard (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true else {
            throw RunError(
                "\(Setting.outputFolder) \(folder.path): is not an empty folder; scan writes a dataset into a new or empty folder, so nothing of yours is overwritten"
            )
        }
    }
}
