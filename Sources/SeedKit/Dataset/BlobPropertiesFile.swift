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
            var properties = BlobProperties(name: name, contentLength: 0, contentType: type)
            properties.cacheControl = item["cacheControl"]?.stringValue
            properties.contentEncoding = item["contentEncoding"]?.stringValue
            properties.contentLanguage = item["contentLanguage"]?.stringValue
            properties.contentDisposition = item["contentDisposition"]?.stringValue
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
            guard out.updateValue(properties, forKey: ExactString(name)) == nil else {
                throw bad("blob '\(Printable.escaped(name, quotes: false))' is listed twice")
            }
        }
        return out
    }
}
