import AzureStorage
import Crypto
import Foundation

/// Writes a snapshot folder (docs/FORMATS.md, snapshots) piece by piece — blobs, then tables a line at a
/// time, then the manifest — into a staging folder that replaces the destination only on
/// ``commit(source:)``, so a failure leaves nothing behind. `generate` and `export` both
/// write through it, so their folders have one format. Every call blocks on the disk: async
/// callers make them on a blocking thread (`BlockingPool`).
public final class SnapshotBuilder {
    private let output: OutputDirectory
    private var containers: [(name: String, access: PublicAccess, metadata: [String: String]?, blobs: [JSONValue])] = []
    private var tables: [JSONValue] = []
    private var summary: SnapshotSummary

    public init(destination: URL, force: Bool) throws {
        output = try OutputDirectory(destination, force: force)
        summary = SnapshotSummary(directory: output.destination, blobs: 0, blobBytes: 0, entities: [])
    }

    /// `metadata`: the container's, recorded in the manifest (export, merge); nil records none.
    public func addContainer(_ name: String, access: PublicAccess, metadata: [String: String]? = nil) {
        containers.append((name, access, metadata, []))
    }

    /// Adds a blob of the last container added, from bytes or by copying a file; returns
    /// the MD5 (base64) recorded for it.
    @discardableResult
    /// `properties`: the blob's content headers and metadata, recorded in the manifest (export).
    public func addBlob(_ name: String, contentType: String, data: Data, properties: BlobProperties? = nil) throws -> String {
        let md5 = Data(Insecure.MD5.hash(data: data)).base64EncodedString()
        let (url, encoded) = try blobURL(name)
        do { try data.write(to: url) } catch { throw GenerationError("cannot write \(url.relativePathForMessages): \(FileProblem.describe(error))") }
        record(name, contentType: contentType, md5: md5, size: data.count, file: encoded, properties: properties)
        return md5
    }

    /// Adds a desired blob whose bytes are a local file (a dataset's or a snapshot's).
    func addBlob(_ blob: DesiredBlob) throws {
        guard let file = blob.file else {
            throw GenerationError("blob '\(blob.name)' is in another account, not a local file; it cannot be written to a snapshot")
        }
        try addBlob(blob.name, contentType: blob.contentType, copying: file, md5: blob.md5Base64, size: blob.size, properties: blob.properties)
    }

    public func addBlob(_ name: String, contentType: String, copying file: URL, md5: String, size: Int, properties: BlobProperties? = nil) throws {
        let (url, encoded) = try blobURL(name)
        do { try FileManager.default.copyItem(at: file, to: url) } catch {
            throw GenerationError("cannot copy \(file.relativePathForMessages) into the snapshot: \(FileProblem.describe(error))")
        }
        record(name, contentType: contentType, md5: md5, size: size, file: encoded, properties: properties)
    }

    /// Where a blob's bytes go: its name as a path when that path is free, else the encoded
    /// file (returned as the second value, for the manifest). Blobs arrive in name order, so
    /// of `fd` and `fd/child` the second finds `fd` taken by a file and is encoded.
    private func blobURL(_ name: String) throws -> (URL, String?) {
        let container = containers[containers.count - 1].name
        if let path = SnapshotFormat.blobFile(container: container, blob: name), isFree(path) {
            return (try output.file(path), nil)
        }
        let encoded = SnapshotFormat.encodedBlobFile(container: container, blob: name)
        return (try output.file(encoded), encoded)
    }

    /// Whether `path` can be created in the staging folder: nothing there yet, and every
    /// folder on the way is a folder (or absent).
    private func isFree(_ path: String) -> Bool {
        let fm = FileManager.default
        var url = output.staging
        let parts = path.split(separator: "/")
        for (i, part) in parts.enumerated() {
            url.appendPathComponent(String(part))
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return true }
            if i == parts.count - 1 || !isDirectory.boolValue { return false }
        }
        return false
    }

    private func record(_ name: String, contentType: String, md5: String, size: Int, file: String?, properties: BlobProperties?) {
        var fields: [(String, JSONValue)] = [
            ("name", .string(name)), ("contentType", .string(contentType)),
            ("md5", .string(md5)), ("size", .int(Int64(size))),
        ]
        if let file { fields.append(("file", .string(file))) }
        if let properties {
            // Content headers when set, and the metadata always (an empty object says "none",
            // which an import then restores), names sorted by bytes.
            for (key, value) in [
                ("cacheControl", properties.cacheControl), ("contentEncoding", properties.contentEncoding),
                ("contentLanguage", properties.contentLanguage), ("contentDisposition", properties.contentDisposition),
            ] {
                if let value { fields.append((key, .string(value))) }
            }
            if let tier = properties.accessTier { fields.append(("accessTier", .string(tier))) }
            let metadata = properties.metadata.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            fields.append(("metadata", .object(metadata.map { ($0.key, JSONValue.string($0.value)) })))
        }
        containers[containers.count - 1].blobs.append(.object(fields))
        summary.blobs += 1
        summary.blobBytes += size
    }

    /// Starts a table's entity file; append its entities sorted by PartitionKey then RowKey.
    public func openTable(_ name: String) throws -> SnapshotTableWriter {
        SnapshotTableWriter(name: name, writer: try BufferedFileWriter(url: try output.file(SnapshotFormat.tableFile(name))))
    }

    /// Records a finished table file.
    public func close(_ table: SnapshotTableWriter) throws {
        let sha = try table.writer.finish()
        tables.append(
            .object([
                ("name", .string(table.name)), ("file", .string(SnapshotFormat.tableFile(table.name))),
                ("entities", .int(Int64(table.count))), ("sha256", .string(sha)),
            ]))
        summary.entities.append((table.name, table.count))
    }

    /// Writes the manifest with `source` (what made the snapshot) and moves the folder into place.
    package func commit(source: JSONValue) throws -> SnapshotSummary {
        let manifest = JSONValue.object([
            ("format", .string(SnapshotFormat.formatName)),
            ("version", .int(SnapshotFormat.version)),
            ("source", source),
            (
                "containers",
                .array(
                    containers.map { container in
                        var fields: [(String, JSONValue)] = [("name", .string(container.name)), ("access", .string(container.access.rawValue))]
                        if let metadata = container.metadata {
                            let sorted = metadata.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                            fields.append(("metadata", .object(sorted.map { ($0.key, JSONValue.string($0.value)) })))
                        }
                        fields.append(("blobs", .array(container.blobs)))
                        return .object(fields)
                    })
            ),
            ("tables", .array(tables)),
        ])
        try Data(manifest.pretty().utf8).write(to: try output.file(SnapshotFormat.manifestFile))
        try output.commit()
        return summary
    }

    /// Removes the staging folder after a failure.
    public func discard() { output.discard() }
}

/// One table's entity file inside a snapshot being written.
public final class SnapshotTableWriter {
    let name: String
    let writer: BufferedFileWriter
    public private(set) var count = 0

    init(name: String, writer: BufferedFileWriter) {
        self.name = name
        self.writer = writer
    }

    /// Appends an entity in the canonical form.
    public func append(_ entity: TableEntity) throws {
        try writer.write { out in
            EntityJSONEncoder.append(entity, to: &out)
            out.append(UInt8(ascii: "\n"))
        }
        count += 1
    }

    /// Appends a line of another snapshot's table file as it is (merging partial snapshots).
    package func append(line: [UInt8]) throws {
        try writer.write { out in
            out.append(contentsOf: line)
            out.append(UInt8(ascii: "\n"))
        }
        count += 1
    }

    /// Appends an entity given as sorted names and aligned values (the generator's form).
    public func append(partitionKey: String, rowKey: String, names: [String], values: [EdmValue]) throws {
        try writer.write { out in
            EntityJSONEncoder.append(partitionKey: partitionKey, rowKey: rowKey, names: names, values: values, to: &out)
            out.append(UInt8(ascii: "\n"))
        }
        count += 1
    }
}
