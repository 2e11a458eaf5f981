import Foundation
import StorageProtocol

/// The static website endpoint (docs/PROTOCOL.md §7): with `StaticWebsite` enabled in the Blob
/// service properties, the `$web` container is served to anyone, read-only, at the account's
/// web host — `<account>.web.<host>` or Azure's `<account>.z<n>.web.<host>` — on the Blob port.
/// A path naming a folder (empty, or ending in `/`) gets its index document; a missing blob
/// the 404 document (with status 404), else a plain 404.
enum StaticWebsite {
    /// Whether `host` is this account's web host.
    static func names(_ host: String, account: String) -> Bool {
        let labels = host.lowercased().split(separator: ".", omittingEmptySubsequences: false).map {
            $0.split(separator: ":").first.map(String.init) ?? ""
        }
        guard labels.count >= 2, labels[0] == account.lowercased() else { return false }
        if labels[1] == "web" { return true }
        return labels.count >= 3 && labels[2] == "web" && labels[1].hasPrefix("z") && labels[1].dropFirst().allSatisfy(\.isNumber)
    }

    /// What `StaticWebsite` says: on, the index document, the 404 document, the default index path.
    struct Settings: Sendable, Equatable {
        var enabled = false
        var indexDocument: String?
        var errorDocument: String?
        var defaultIndexPath: String?

        init(_ tree: XMLTree?) {
            guard let tree else { return }
            enabled = tree["Enabled"]?.text.lowercased() == "true"
            func text(_ name: String) -> String? { tree[name].flatMap { $0.text.isEmpty ? nil : $0.text } }
            indexDocument = text("IndexDocument")
            errorDocument = text("ErrorDocument404Path")
            defaultIndexPath = text("DefaultIndexDocumentPath")
        }
    }

    /// Checks a `StaticWebsite` element as Azure does: an index document and a default index
    /// path exclude each other; paths are relative names within `$web`.
    static func validate(_ tree: XMLTree?) throws(ServiceError) {
        let settings = Settings(tree)
        guard settings.enabled else { return }
        if settings.indexDocument != nil && settings.defaultIndexPath != nil {
            throw ServiceError(
                400, .invalidXmlNodeValue,
                "The value for one of the XML nodes is not in the correct format: IndexDocument and DefaultIndexDocumentPath exclude each other.")
        }
        for path in [settings.indexDocument, settings.errorDocument, settings.defaultIndexPath].compactMap({ $0 })
        where path.utf8.count > 255 || path.hasPrefix("/") || path.contains("\\") {
            throw ServiceError(
                400, .invalidXmlNodeValue, "The value for one of the XML nodes is not in the correct format: '\(path)' is no path within $web.")
        }
    }

    /// The blob names to try for a request path, in order.
    static func candidates(_ path: String, _ settings: Settings) -> [String] {
        let name = String(path.drop { $0 == "/" })
        if let root = settings.defaultIndexPath, name.isEmpty { return [root.hasPrefix("/") ? String(root.dropFirst()) : root] }
        guard let index = settings.indexDocument else { return name.isEmpty ? [] : [name] }
        if name.isEmpty { return [index] }
        if name.hasSuffix("/") { return [name + index] }
        // A name without a blob may be a folder: its index document.
        return [name, name + "/" + index]
    }
}

extension BlobService {
    /// A request to the web host: GET or HEAD of `$web`'s blobs, to anyone.
    func respondToWebsite(_ request: TransportRequest) async throws -> BlobReply {
        guard request.method == "GET" || request.method == "HEAD" else { throw ServiceError.unsupportedVerb(request.method) }
        let settings = StaticWebsite.Settings(try await ServiceProperties.document(.blob, in: store)["StaticWebsite"])
        guard settings.enabled else {
            throw ServiceError(404, .websiteDisabled, "The requested content does not exist: the account's static website is not enabled.")
        }
        let raw = String(request.path.split(separator: "?", maxSplits: 1).first ?? "")
        guard let path = raw.removingPercentEncoding else { throw ServiceError(400, .invalidUri, "The request URI is not valid.") }
        // Only the reads a browser makes: no query operation (comp, snapshot…) reaches `$web` here.
        var read = request
        read.query = []
        for name in StaticWebsite.candidates(path, settings) {
            if try await store.blob("$web", name).1 != nil {
                return try await getBlob("$web", name, read, head: request.method == "HEAD", tagCount: false)
            }
        }
        if let page = settings.errorDocument, try await store.blob("$web", page).1 != nil {
            var reply = try await getBlob("$web", page, read, head: request.method == "HEAD", tagCount: false)
            reply.response.status = 404
            return reply
        }
        throw ServiceError(404, .resourceNotFound, "The requested content does not exist.")
    }
}
