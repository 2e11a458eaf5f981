import AzureStorage
import Crypto
import Foundation

/// A private folder holding generated blobs' bytes while a run uses them: made with an
/// unpredictable name and mode 0700 (another local user can neither read it nor plant links
/// in it), removed when the last desired state holding it is released.
final class GeneratedBlobFolder: Sendable {
    let url: URL

    init() throws(GenerationError) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("azseed-generated-blobs-\(UUID().uuidString)")
        do {
            // Fails if the name exists: nothing someone else made is used.
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw GenerationError(
                "cannot make a folder for generated blobs in \(url.deletingLastPathComponent().path): \(FileProblem.describe(error))")
        }
        self.url = url
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

extension DesiredContainer {
    /// The blobs a container's `blobs:` groups make, written one at a time into a private
    /// folder (memory holds one blob). Names clashing with `taken` (the container's files) or
    /// with each other, and sizes past the bounds, are refused before any is written.
    static func generatedBlobs(_ spec: ContainerSpec, seed: UInt64, taken: Set<ExactString>, datasetFile: String) throws(GenerationError) -> (
        blobs: [DesiredBlob], folder: GeneratedBlobFolder?
    ) {
        guard !spec.blobGroups.isEmpty else { return ([], nil) }
        var names = taken
        var planned: [(group: Int, index: Int, name: String, metadata: [String: String])] = []
        var bound = 0
        for (g, group) in spec.blobGroups.enumerated() {
            for i in 0..<group.count {
                let name = group.name.render(Self.variables(index: i, name: nil))
                let at = "\(datasetFile):\(group.line): generated blob \(i + 1) of container '\(spec.name)'"
                if let problem = StorageNames.addressableBlobProblem(name) {
                    throw GenerationError("\(at), '\(name)': \(problem); change its name template")
                }
                guard names.insert(ExactString(name)).inserted else {
                    throw GenerationError("\(at): the name '\(name)' is made twice (or is a file's); put {{Number}} in the name template")
                }
                // Metadata travels in headers: printable ASCII only, at most 8 KiB a blob (Azure's).
                var metadata: [String: String] = [:]
                var size = 0
                for (key, template) in group.metadata {
                    let value = template.render(Self.variables(index: i, name: name))
                    guard value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                        throw GenerationError(
                            "\(at), '\(name)': metadata '\(key)' is '\(Printable.escaped(value))'; a metadata value is printable ASCII (no line breaks, no other characters)"
                        )
                    }
                    metadata[key] = value
                    size += key.utf8.count + value.utf8.count
                }
                guard size <= 8192 else { throw GenerationError("\(at), '\(name)': its metadata is \(size) bytes; Azure takes at most 8 KiB") }
                planned.append((g, i, name, metadata))
            }
            if case .bytes(_, let max) = group.content { bound += group.count * max }
        }
        guard bound <= BlobGroupSpec.maxTotalBytes else {
            throw GenerationError(
                "\(datasetFile): container '\(spec.name)' would generate up to \(bound) bytes of random blobs; at most 1 GiB: ask for fewer or smaller"
            )
        }
        let folder = try GeneratedBlobFolder()
        var blobs: [DesiredBlob] = []
        var total = 0
        let streams = spec.blobGroups.indices.map { SeedRandom.stream(seed: seed, name: "\(spec.name)/blobs/\($0)") }
        for (g, i, name, metadata) in planned {
            let group = spec.blobGroups[g]
            var random = SeedRandom.forEntity(stream: streams[g], identity: UInt128(i))
            let at = "\(datasetFile):\(group.line): generated blob '\(name)' of container '\(spec.name)'"
            let bytes: [UInt8]
            switch group.content {
            case .template(let template):
                bytes = Array(template.render(Self.variables(index: i, name: name)).utf8)
            case .portrait:
                do { bytes = try Portrait.jpeg(name: (name as NSString).deletingPathExtension, index: i) } catch {
                    throw GenerationError("\(at): the portrait could not be made: \(error)")
                }
            case .bytes(let min, let max):
                let size = min + Int(random.below(UInt64(max - min + 1)))
                var out = [UInt8](repeating: 0, count: size)
                var k = 0
                while k < size {
                    var word = random.next()
                    for _ in 0..<8 where k < size {
                        out[k] = UInt8(truncatingIfNeeded: word)
                        word >>= 8
                        k += 1
                    }
                }
                bytes = out
            }
            guard !bytes.isEmpty else { throw GenerationError("\(at): its content is empty; a blob needs at least one byte") }
            guard bytes.count <= BlobGroupSpec.maxBlobBytes else { throw GenerationError("\(at): its content is over 64 MiB") }
            total += bytes.count
            guard total <= BlobGroupSpec.maxTotalBytes else { throw GenerationError("\(at): the container's generated blobs pass 1 GiB") }
            let file = folder.url.appendingPathComponent("\(g)-\(i)")
            do { try Data(bytes).write(to: file) } catch {
                throw GenerationError("\(at): cannot write it to \(folder.url.path): \(FileProblem.describe(error))")
            }
            let md5 = Array(Insecure.MD5.hash(data: bytes))
            let type = group.contentType ?? ContentTypes.forName(name)
            var blob = DesiredBlob(name: name, file: file, size: bytes.count, md5: md5, contentType: type)
            blob.generatedFolder = folder
            if !metadata.isEmpty {
                blob.properties = BlobProperties(
                    name: name, contentLength: bytes.count, contentType: type, contentMD5: Data(md5).base64EncodedString(), metadata: metadata)
            }
            blobs.append(blob)
        }
        return (blobs, folder)
    }

    private static func variables(index: Int, name: String?) -> [ExactString: TemplateValue] {
        var values: [ExactString: TemplateValue] = [ExactString("Number"): .text(String(index + 1)), ExactString("Index"): .text(String(index))]
        if let name { values[ExactString("Name")] = .text(name) }
        return values
    }
}
