import AzureStorage
import Crypto
import Foundation

/// A snapshot folder read back and checked against its manifest: what `import` plans from.
public struct Snapshot: Sendable {
    public var directory: URL
    /// The dataset recorded by `generate` (or given to `export`), if any.
    public var dataset: String?
    public var seed: UInt64?
    public var window: ResolvedWindow?
    /// The blob endpoint of the account it was taken from (blob URLs in entities point there).
    public var blobEndpoint: String?
    public var containers: [DesiredContainer]
    public var tables: [SnapshotTable]

    /// The snapshot as a plan's target: each table one group matched by RowKey, owning the
    /// partitions the snapshot holds.
    public var storage: DesiredStorage {
        let groups = tables.map { table in
            EntityGroup(
                table: table.name, kind: nil, partitions: table.partitions, key: [], rowKeyReferences: [],
                makeCursor: { try SnapshotTableCursor(file: table.file) }, rowKeys: { [:] })
        }
        return DesiredStorage(containers: containers, tables: tables.map { OwnedTable(name: $0.name, partitions: $0.partitions) }, groups: groups)
    }
}

/// A table of a snapshot: its file, entity count and partitions.
public struct SnapshotTable: Sendable {
    public var name: String
    public var file: URL
    public var entityCount: Int
    public var partitions: [String]
}

/// Why a snapshot cannot be used: the file and what is wrong with it.
extension SnapshotTable {
    /// Calls `body` with every entity of the table file, in its (key) order, a line at a time.
    /// Reads the file: call it from a thread that may block.
    public func forEachEntity(_ body: (TableEntity) throws -> Void) throws {
        let path = file.relativePathForMessages
        try LineReader(url: file).forEachLine { bytes, line in try body(try SnapshotReader.decode(bytes, at: "\(path):\(line)")) }
    }
}

public struct SnapshotError: Error, Sendable, CustomStringConvertible, PersonFacingError {
    public var phrase: Phrase
    init(_ phrase: Phrase) { self.phrase = phrase }
}

/// Reads `manifest.json` and checks every file against it: each blob's size and MD5, each
/// table file's SHA-256, entity count and every line's JSON. A tampered, truncated or
/// incomplete snapshot is refused with the file named, before anything is written.
public enum SnapshotReader {
    public static func read(_ directory: URL) throws(SnapshotError) -> Snapshot {
        let folder = directory.relativePathForMessages
        let manifestURL = directory.appendingPathComponent(SnapshotFormat.manifestFile)
        guard let data = FileManager.default.contents(atPath: manifestURL.path) else {
            throw SnapshotError(
                "\(folder): no \(SnapshotFormat.manifestFile); not a snapshot folder (make one with \(Setting.snapshotCommands))")
        }
        let manifestPath = manifestURL.relativePathForMessages
        let root: JSONValue
        do { root = try JSONParser.parse(Array(data)) } catch { throw SnapshotError("\(manifestPath): \(error); the manifest is damaged") }
        guard root["format"]?.stringValue == SnapshotFormat.formatName, root["version"] == .number(String(SnapshotFormat.version)) else {
            throw SnapshotError("\(manifestPath): not a version \(SnapshotFormat.version) \(SnapshotFormat.formatName) manifest")
        }
        func bad(_ what: String) -> SnapshotError { SnapshotError("\(manifestPath): \(what); the manifest is damaged") }
        /// A `metadata` object of the manifest: names Azure accepts, string values.
        func metadata(_ node: JSONValue, of owner: String) throws(SnapshotError) -> [String: String] {
            guard case .object(let pairs) = node else { throw bad("\(owner) has metadata that is not an object") }
            var metadata: [String: String] = [:]
            for (key, value) in pairs {
                guard let text = value.stringValue, StorageNames.metadataNameProblem(key) == nil else {
                    throw bad("\(owner) has metadata '\(key)' that Azure would refuse")
                }
                metadata[key] = text
            }
            return metadata
        }

        var snapshot = Snapshot(directory: directory, containers: [], tables: [])
        if let source = root["source"] {
            snapshot.dataset = source["dataset"]?.stringValue
            snapshot.blobEndpoint = source["blobEndpoint"]?.stringValue
            if case .number(let n)? = source["seed"] { snapshot.seed = UInt64(n) }
            if let from = source["window"]?["from"]?.stringValue.flatMap(EdmDateTime.init(iso8601:)),
                let to = source["window"]?["to"]?.stringValue.flatMap(EdmDateTime.init(iso8601:))
            {
                snapshot.window = ResolvedWindow(from: from, to: to)
            }
        }
        // Relative file paths, by bytes: blob names that differ only by normalisation are
        // two files.
        var listed: Set<ExactString> = []
        guard case .array(let containers)? = root["containers"] else { throw bad("'containers' is missing") }
        for node in containers {
            guard let name = node["name"]?.stringValue, StorageNames.containerProblem(name) == nil, ReservedNames.containerProblem(name) == nil,
                let access = node["access"]?.stringValue.flatMap(PublicAccess.init(rawValue:)),
                case .array(let blobs)? = node["blobs"]
            else { throw bad("a container entry is incomplete") }
            var container = DesiredContainer(name: name, access: access, blobs: [])
            // Recorded by export: the container's metadata to restore.
            if let recorded = node["metadata"] { container.metadata = try metadata(recorded, of: "container '\(name)'") }
            for blob in blobs {
                guard let blobName = blob["name"]?.stringValue, let type = blob["contentType"]?.stringValue,
                    let md5 = blob["md5"]?.stringValue, let md5Bytes = Data(base64Encoded: md5), md5Bytes.count == 16,
                    case .number(let sizeText)? = blob["size"], let size = Int(sizeText)
                else {
                    throw bad("a blob entry of container '\(name)' is incomplete")
                }
                if let problem = StorageNames.addressableBlobProblem(blobName) {
                    throw SnapshotError(
                        "\(manifestPath): blob '\(blobName)' of container '\(name)' cannot be written to Azure: \(problem); rename it in the source and export again"
                    )
                }
                let recordedFile = blob["file"]?.stringValue
                if let recordedFile, recordedFile != SnapshotFormat.encodedBlobFile(container: name, blob: blobName) {
                    throw SnapshotError(
                        "\(manifestPath): blob '\(blobName)' of container '\(name)' names the file '\(recordedFile)', which is not where azseed keeps it; the manifest is damaged"
                    )
                }
                guard let relative = recordedFile ?? SnapshotFormat.blobFile(container: name, blob: blobName) else {
                    throw SnapshotError(
                        "\(manifestPath): blob '\(blobName)' of container '\(name)' has an unsafe name (empty, absolute, or with '.' or '..' segments) and no file of its own; the manifest was not written by azseed"
                    )
                }
                let file = directory.appendingPathComponent(relative)
                try check(blob: file, size: size, md5: md5)
                listed.insert(ExactString(relative))
                var desired = DesiredBlob(name: blobName, file: file, size: size, md5: Array(md5Bytes), contentType: type)
                if let node = blob["metadata"] {
                    // Recorded by export: the content headers and metadata to restore.
                    let metadata = try metadata(node, of: "blob '\(blobName)' of container '\(name)'")
                    desired.properties = BlobProperties(
                        name: blobName, contentLength: size, contentType: type, contentMD5: md5,
                        cacheControl: blob["cacheControl"]?.stringValue, contentEncoding: blob["contentEncoding"]?.stringValue,
                        contentLanguage: blob["contentLanguage"]?.stringValue,
                        contentDisposition: blob["contentDisposition"]?.stringValue, metadata: metadata)
                    if let node = blob["accessTier"] {
                        // A tier Set Blob Tier takes, nothing else: the import sends it as a header.
                        guard let tier = node.stringValue,
                            ["Hot", "Cool", "Cold", "Archive"].contains(where: { $0.lowercased() == tier.lowercased() })
                        else {
                            throw bad("blob '\(blobName)' of container '\(name)' has an access tier that is not Hot, Cool, Cold or Archive")
                        }
                        desired.properties?.accessTier = tier
                    }
                }
                container.blobs.append(desired)
            }
            snapshot.containers.append(container)
        }
        guard case .array(let tables)? = root["tables"] else { throw bad("'tables' is missing") }
        for node in tables {
            guard let name = node["name"]?.stringValue, StorageNames.tableProblem(name) == nil,
                node["file"]?.stringValue == SnapshotFormat.tableFile(name),
                case .number(let countText)? = node["entities"], let count = Int(countText),
                let sha = node["sha256"]?.stringValue
            else { throw bad("a table entry is incomplete") }
            // A snapshot's supplier does not get to write azseed's own records into a target.
            if let problem = ReservedNames.tableProblem(name) {
                throw SnapshotError("\(manifestPath): table '\(name)': \(problem); a snapshot cannot hold it")
            }
            let file = directory.appendingPathComponent(SnapshotFormat.tableFile(name))
            let partitions = try check(table: file, entities: count, sha256: sha)
            snapshot.tables.append(SnapshotTable(name: name, file: file, entityCount: count, partitions: partitions))
            listed.insert(ExactString(SnapshotFormat.tableFile(name)))
        }
        try checkNoStrayFiles(directory, listed: listed)
        return snapshot
    }

    private static func check(blob file: URL, size: Int, md5: String) throws(SnapshotError) {
        let path = file.relativePathForMessages
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw SnapshotError("\(path): missing from the snapshot; the snapshot is incomplete")
        }
        guard data.count == size else {
            throw SnapshotError("\(path): \(data.count) bytes where the manifest records \(size); the snapshot is truncated or was changed")
        }
        guard Data(Insecure.MD5.hash(data: data)).base64EncodedString() == md5 else {
            throw SnapshotError("\(path): its MD5 differs from the manifest's; the file was changed since the snapshot was made")
        }
    }

    /// Every file of the snapshot is the manifest or listed in it: a file added since the
    /// snapshot was made — a blob, a table, anything — is refused, not silently ignored.
    private static func checkNoStrayFiles(_ directory: URL, listed: Set<ExactString>) throws(SnapshotError) {
        let base = directory.standardizedFileURL.path
        let known: Set<String> = [SnapshotFormat.manifestFile, SnapshotFormat.blobsFolder, SnapshotFormat.tablesFolder, SnapshotFormat.encodedFolder]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where !known.contains(name) {
            throw SnapshotError(
                "\(directory.appendingPathComponent(name).relativePathForMessages): not part of a snapshot; the snapshot was changed since it was made"
            )
        }
        for folder in [SnapshotFormat.blobsFolder, SnapshotFormat.encodedFolder, SnapshotFormat.tablesFolder] {
            let blobs = directory.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(at: blobs, includingPropertiesForKeys: [.isRegularFileKey]) else { continue }
            for case let url as URL in walker where (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                let relative = String(url.standardizedFileURL.path.dropFirst(base.count + 1))
                if !listed.contains(ExactString(relative)) {
                    throw SnapshotError("\(url.relativePathForMessages): not in the manifest; the snapshot was changed since it was made")
                }
            }
        }
    }

    /// Hashes and counts the file and checks every line; returns the partitions, sorted.
    private static func check(table file: URL, entities: Int, sha256: String) throws(SnapshotError) -> [String] {
        let path = file.relativePathForMessages
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw SnapshotError("\(path): missing from the snapshot; the snapshot is incomplete")
        }
        var hasher = SHA256()
        var count = 0
        var partitions: Set<ExactString> = []
        var previous: (String, String)?
        do {
            try LineReader(url: file).forEachLine(onBytes: { hasher.update(bufferPointer: $0) }) { bytes, line in
                let entity = try decode(bytes, at: "\(path):\(line)")
                // Everything Azure would refuse is found here, before the first request, so a
                // bad snapshot never leaves a half-written account behind.
                if let problem = StorageNames.entityProblem(entity) {
                    throw SnapshotError(
                        "\(path):\(line): entity (\(entity.partitionKey), \(entity.rowKey)) \(problem); Azure would refuse it, so nothing is imported"
                    )
                }
                let keys = (entity.partitionKey, entity.rowKey)
                if let previous,
                    !(previous.0.utf8.lexicographicallyPrecedes(keys.0.utf8)
                        || (previous.0.isExactly(keys.0) && previous.1.utf8.lexicographicallyPrecedes(keys.1.utf8)))
                {
                    throw SnapshotError(
                        "\(path):\(line): not sorted by PartitionKey then RowKey after (\(previous.0), \(previous.1)); the file was changed")
                }
                previous = keys
                partitions.insert(ExactString(entity.partitionKey))
                count += 1
            }
        } catch let error as SnapshotError {
            throw error
        } catch {
            throw SnapshotError("\(path): cannot read: \(error)")
        }
        let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        guard digest == sha256 else {
            throw SnapshotError("\(path): its SHA-256 differs from the manifest's; the file was changed or truncated since the snapshot was made")
        }
        guard count == entities else {
            throw SnapshotError("\(path): \(count) entities where the manifest records \(entities); the snapshot is truncated")
        }
        return partitions.sorted().map(\.string)
    }

    static func decode(_ bytes: [UInt8], at place: String) throws(SnapshotError) -> TableEntity {
        do {
            return try EntityJSONReader.entity(bytes).entity
        } catch {
            throw SnapshotError("\(place): not an entity: \(error)")
        }
    }
}
