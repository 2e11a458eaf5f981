import AzureStorage
import Foundation

/// A container's `properties:` file: what each blob of its `files:` folder stores besides its
/// bytes — content type, the other content headers and metadata — as `scan --copy-values`
/// copies them from an account. A JSON array of objects in the snapshot manifest's blob form
/// (`name`, `contentType`, `cacheControl`, `contentEncoding`, `contentLanguage`,
/// `contentDisposition` and `accessTier` when set, `metadata` always), names in byte order.
public enum BlobPropertiesFile {
    /// The file's bytes for `blobs`.
    public static func encode(_ blobs: [BlobProperties]) -> [UInt8] {
        let items = blobs.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }.map { blob -> JSONValue in
            var fields: [(String, JSONValue)] = [
                ("name", .string(blob.name)), ("contentType", .string(blob.contentType ?? "application/octet-stream")),
            ]
            for (key, value) in [
                ("cacheControl", blob.cacheControl), ("contentEncoding", blob.contentEncoding), ("contentLanguage", blob.contentLanguage),
                ("contentDisposition", blob.contentDisposition),
            ] {
                if let value { fields.append((key, .string(value))) }
            }
            if let tier = blob.accessTier { fields.append(("accessTier", .string(tier))) }
            let metadata = blob.metadata.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            fields.append(("metadata", .object(metadata.map { ($0.key, JSONValue.string($0.value)) })))
            return .object(fields)
        }
        return Array((JSONValue.array(items).pretty() + "\n").utf8)
    }

    /// Whether `text` can travel in a header as it is: printable ASCII.
    static func isHeaderText(_ text: String) -> Bool { text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }

    /// Why Azure would refuse (or change) a blob's or container's metadata: values that are not
    /// printable ASCII, two names that differ only in case (Azure keeps one), more than 8 KiB.
    static func metadataProblem(_ metadata: [String: String]) -> String? {
        var seen = Set<String>()
        var size = 0
        for (name, value) in metadata.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            if !isHeaderText(value) { return "'\(Printable.escaped(name, quotes: false))' whose value is not printable ASCII" }
            if !seen.insert(name.lowercased()).inserted { return "names that differ only in case ('\(Printable.escaped(name, quotes: false))')" }
            size += name.utf8.count + value.utf8.count
        }
        return size > 8 << 10 ? "of \(size) bytes; Azure takes at most 8 KiB" : nil
    }

    /// The properties by blob name; a file that is not in this form, or names a blob twice or
    /// metadata Azure would refuse, is one error naming the file.
    static func decode(_ file: URL) throws(GenerationError) -> [ExactString: BlobProperties] {
        let place = file.relativePathForMessages
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw GenerationError("\(place): cannot read the blob properties file")
        }
        func bad(_ what: String) -> GenerationError {
            GenerationError("\(place): \(what); each blob an object with its name, contentType and metadata")
        }
        let root: JSONValue
        do { root = try JSONParser.parse(Array(data)) } catch { throw bad("not JSON (\(error))") }
        guard case .array(let items) = root else { throw bad("not a JSON array of blobs") }
        var out: [ExactString: BlobProperties] = [:]
        for item in items {
            guard let name = item["name"]?.stringValue, let type = item["contentType"]?.stringValue else {
                throw bad("a blob without a name or a contentType")
            }
            let blob = "blob '\(Printable.escaped(name, quotes: false))'"
            var properties = BlobProperties(name: name, contentLength: 0, contentType: type)
            properties.cacheControl = item["cacheControl"]?.stringValue
            properties.contentEncoding = item["contentEncoding"]?.stringValue
            properties.contentLanguage = item["contentLanguage"]?.stringValue
            properties.contentDisposition = item["contentDisposition"]?.stringValue
            // Each travels in a header: printable ASCII, checked before anything is written.
            if type.isEmpty { throw bad("\(blob) has an empty contentType") }
            for (field, value) in [
                ("contentType", type), ("cacheControl", properties.cacheControl), ("contentEncoding", properties.contentEncoding),
                ("contentLanguage", properties.contentLanguage), ("contentDisposition", properties.contentDisposition),
            ] {
                if let value, !Self.isHeaderText(value) {
                    throw bad("\(blob) has a \(field) that is not printable ASCII (a header carries it)")
                }
            }
            if let node = item["metadata"], node.members.isEmpty, node != .object([]) {
                throw bad("\(blob) has metadata that is not an object")
            }
            if let node = item["accessTier"] {
                // A tier Set Blob Tier takes, nothing else: it is sent as a header.
                guard let tier = node.stringValue, ["Hot", "Cool", "Cold", "Archive"].contains(where: { $0.lowercased() == tier.lowercased() }) else {
                    throw bad("blob '\(Printable.escaped(name, quotes: false))' has an access tier that is not Hot, Cool, Cold or Archive")
                }
                properties.accessTier = tier
            }
            for (key, value) in item["metadata"]?.members ?? [] {
                guard let text = value.stringValue, StorageNames.metadataNameProblem(key) == nil else {
                    throw bad(
                        "blob '\(Printable.escaped(name, quotes: false))' has metadata '\(Printable.escaped(key, quotes: false))' that Azure would refuse"
                    )
                }
                properties.metadata[key] = text
            }
            if let problem = Self.metadataProblem(properties.metadata) { throw bad("\(blob) has metadata \(problem)") }
            guard out.updateValue(properties, forKey: ExactString(name)) == nil else {
                throw bad("blob '\(Printable.escaped(name, quotes: false))' is listed twice")
            }
        }
        return out
    }
}
