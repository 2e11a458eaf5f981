import AzureStorage
import Crypto
import Foundation

/// A blob the desired state wants in a container: where its bytes come from, its size,
/// content type and MD5.
public struct DesiredBlob: Sendable, Equatable {
    public var name: String
    public var content: Content
    public var size: Int
    /// The 16-byte MD5 of the content (Azure's Content-MD5); empty when the source blob of a
    /// copy has none recorded — such a blob is never taken as unchanged.
    public var md5: [UInt8]
    public var contentType: String
    /// The content headers and metadata to store and compare besides the content type, as a
    /// snapshot recorded them; nil when the source says nothing of them (a dataset's files, a
    /// snapshot made by `generate` or an older azseed): then only the content type counts.
    public var properties: BlobProperties?

    /// What the blob stores besides its bytes: a copy's listed source properties, else ``properties``.
    public var stored: BlobProperties? {
        if case .sourceBlob(_, _, let listed) = content { return listed }
        return properties
    }

    /// How it is uploaded: its content type, and the stored headers and metadata when known.
    public var uploadOptions: BlobUploadOptions {
        guard var options = stored?.uploadOptions else { return BlobUploadOptions(contentType: contentType) }
        options.contentType = contentType
        return options
    }

    /// Where a blob's bytes are.
    public enum Content: Sendable, Equatable {
        /// A local file (a dataset's or a snapshot's).
        case file(URL)
        /// A blob of the source account of `azseed copy`, read by the target itself where it can.
        /// `listed` is what its listing said: its ETag (every read of the blob is made on that
        /// condition, so a blob rewritten meanwhile is never copied as a mix of two versions),
        /// and the content headers and metadata the copy stores with it.
        case sourceBlob(container: String, name: String, listed: BlobProperties)
    }

    public init(name: String, content: Content, size: Int, md5: [UInt8], contentType: String) {
        self.name = name
        self.content = content
        self.size = size
        self.md5 = md5
        self.contentType = contentType
    }

    public init(name: String, file: URL, size: Int, md5: [UInt8], contentType: String) {
        self.init(name: name, content: .file(file), size: size, md5: md5, contentType: contentType)
    }

    /// The local file holding the bytes; nil for a source account's blob.
    public var file: URL? {
        if case .file(let url) = content { return url }
        return nil
    }

    /// The MD5 as base64, as Azure reports it ("" when unknown).
    public var md5Base64: String { md5.isEmpty ? "" : Data(md5).base64EncodedString() }
}

/// A container the dataset wants, with its access level and blobs (sorted by name).
public struct DesiredContainer: Sendable {
    public var name: String
    public var access: PublicAccess
    public var blobs: [DesiredBlob]
    /// The container's metadata to hold (from a snapshot or a copy's source); nil leaves the
    /// target's alone (a dataset says nothing of it).
    public var metadata: [String: String]?

    /// Where generated blobs' bytes are kept while this state is in use.
    var generatedFolder: GeneratedBlobFolder?

    public init(name: String, access: PublicAccess, blobs: [DesiredBlob]) {
        self.name = name
        self.access = access
        self.blobs = blobs
    }

    public func blob(named name: String) -> DesiredBlob? { blobs.first { $0.name.isExactly(name) } }
}

extension DesiredContainer {
    /// Reads a container's folder: every file (hidden ones skipped) becomes a blob named by
    /// its path below the folder. Each `.jpg`/`.jpeg` file is decoded with libjpeg, so a
    /// missing, empty, non-JPEG or corrupt image stops the run here, naming the file.
    static func load(_ spec: ContainerSpec, access: PublicAccess, seed: UInt64 = 0, datasetFile: String = "dataset.yaml") throws(GenerationError)
        -> DesiredContainer
    {
        var container = try loadFiles(spec, access: access)
        let generated = try generatedBlobs(spec, seed: seed, taken: Set(container.blobs.map { ExactString($0.name) }), datasetFile: datasetFile)
        if !generated.blobs.isEmpty {
            container.blobs = (container.blobs + generated.blobs).sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            container.generatedFolder = generated.folder
        }
        return container
    }

    private static func loadFiles(_ spec: ContainerSpec, access: PublicAccess) throws(GenerationError) -> DesiredContainer {
        guard let folder = spec.filesDirectory else { return DesiredContainer(name: spec.name, access: access, blobs: []) }
        var blobs: [DesiredBlob] = []
        for relative in try listFiles(folder) {
            let url = folder.appendingPathComponent(relative)
            if let problem = StorageNames.addressableBlobProblem(relative) {
                throw GenerationError("\(url.relativePathForMessages): cannot be a blob of container '\(spec.name)': \(problem); rename the file")
            }
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw GenerationError("\(url.relativePathForMessages): cannot read the file")
            }
            let bytes = [UInt8](data)
            let type = ContentTypes.forName(relative)
            if type == "image/jpeg", case .failure(let problem) = JPEG.check(bytes) {
                throw GenerationError("\(url.relativePathForMessages): not a usable JPEG image: \(problem); replace the file with a valid JPEG")
            }
            if bytes.isEmpty { throw GenerationError("\(url.relativePathForMessages): the file is empty") }
            blobs.append(DesiredBlob(name: relative, file: url, size: bytes.count, md5: Array(Insecure.MD5.hash(data: bytes)), contentType: type))
        }
        blobs.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        return DesiredContainer(name: spec.name, access: access, blobs: blobs)
    }

    private static func listFiles(_ folder: URL) throws(GenerationError) -> [String] {
        // A linked folder is listed where it points (the dataset names it, like a templates
        // folder outside the dataset); links inside it must stay inside it.
        let folder = folder.standardizedFileURL.resolvingSymlinksInPath()
        guard
            let walker = FileManager.default.enumerator(
                at: folder, includingPropertiesForKeys: [.isRegularFileKey, .isSymbolicLinkKey],
                options: [.skipsHiddenFiles])
        else {
            throw GenerationError("\(folder.relativePathForMessages): cannot list the folder")
        }
        let base = folder.standardizedFileURL.path
        let realBase = folder.standardizedFileURL.resolvingSymlinksInPath().path
        var names: [String] = []
        for case let url as URL in walker {
            let path = url.standardizedFileURL.path
            // A link may point anywhere, and the file would be published in a container:
            // only links that stay inside the folder are followed.
            if (try? url.resourceValues(forKeys: [.isSymbolicLinkKey]).isSymbolicLink) == true {
                let target = url.resolvingSymlinksInPath().path
                guard target.hasPrefix(realBase + "/") else {
                    throw GenerationError(
                        "\(url.relativePathForMessages): a symbolic link to \(target), outside the dataset's folder \(folder.relativePathForMessages); copy the file into the folder instead"
                    )
                }
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: target, isDirectory: &isDirectory) else {
                    throw GenerationError(
                        "\(url.relativePathForMessages): a symbolic link to \(target), which does not exist; fix or remove the link")
                }
                if isDirectory.boolValue { continue }
            } else if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) != true {
                continue
            }
            names.append(String(path.dropFirst(base.count + 1)))
        }
        return names
    }
}

/// Content types by file extension.
public enum ContentTypes {
    public static func forName(_ name: String) -> String {
        let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        switch ext {
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "svg": return "image/svg+xml"
        case "json": return "application/json"
        case "txt": return "text/plain"
        case "html", "htm": return "text/html"
        case "css": return "text/css"
        case "csv": return "text/csv"
        case "pdf": return "application/pdf"
        default: return "application/octet-stream"
        }
    }
}
