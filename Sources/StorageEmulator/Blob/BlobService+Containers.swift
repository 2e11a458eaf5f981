import Foundation
import StorageProtocol

extension BlobService {
    /// `x-ms-blob-public-access`: absent is private; otherwise `container` or `blob`.
    func accessLevel(_ request: TransportRequest) throws -> String {
        guard let value = request.headers["x-ms-blob-public-access"], !value.isEmpty else { return "" }
        guard value == "container" || value == "blob" else { throw ServiceError.invalidHeader("x-ms-blob-public-access", value) }
        return value
    }

    /// The conditions Azure takes on a container write: `If-Modified-Since` and (but for Set
    /// Container Metadata) `If-Unmodified-Since`; `If-Match` as Set Container ACL always
    /// took it here. One Azure does not take is refused, not ignored.
    func containerConditions(_ request: TransportRequest, unmodifiedSince: Bool = true) throws -> WriteConditions {
        if !unmodifiedSince, request.headers["If-Unmodified-Since"] != nil {
            throw ServiceError.unsupportedHeader("If-Unmodified-Since on Set Container Metadata")
        }
        if request.headers["If-None-Match"] != nil { throw ServiceError.unsupportedHeader("If-None-Match on a container write") }
        var conditions = try conditions(request)
        conditions.leaseID = nil
        return conditions
    }

    func containerHeaders(_ record: ContainerRecord) -> HeaderFields {
        HeaderFields([("ETag", record.etag), ("Last-Modified", ServerClock.httpDate(record.modified))])
    }

    func createContainer(_ name: String, _ request: TransportRequest) async throws -> TransportResponse {
        // `$web` is the one `$` name an account's owner creates (static website content).
        if name != "$web", let problem = StorageNames.containerProblem(name) {
            throw ServiceError(400, .invalidResourceName, "The specifed resource name contains invalid characters: \(problem).")
        }
        var scope: String?
        if let given = request.headers["x-ms-default-encryption-scope"] {
            guard encryptionScopes.contains(given) else { throw BlobEncryption.unknownScope(given, header: "x-ms-default-encryption-scope") }
            scope = given
        }
        let deny: Bool
        switch request.headers["x-ms-deny-encryption-scope-override"]?.lowercased() {
        case nil, "false": deny = false
        case "true":
            guard scope != nil else { throw BlobEncryption.missing("x-ms-default-encryption-scope") }
            deny = true
        case let other?: throw ServiceError.invalidHeader("x-ms-deny-encryption-scope-override", other)
        }
        let record = try await store.createContainer(
            name, access: try accessLevel(request), metadata: try metadataHeaders(request.headers), defaultScope: scope, denyOverride: deny)
        return TransportResponse(status: 201, headers: containerHeaders(record))
    }

    func setContainerACL(_ name: String, _ request: TransportRequest) async throws -> TransportResponse {
        let access = try accessLevel(request)
        // Parsed and stored re-serialised: never the document as sent (``AccessPolicyDocument``).
        let document = try AccessPolicyDocument(body: request.body)
        let acl = document.identifiers.isEmpty ? "" : document.serialized
        let record = try await store.setContainerACL(name, access: access, acl: acl, conditions: try containerConditions(request))
        return TransportResponse(status: 200, headers: containerHeaders(record))
    }

    func setContainerMetadata(_ name: String, _ request: TransportRequest) async throws -> TransportResponse {
        let record = try await store.setContainerMetadata(
            name, metadata: try metadataHeaders(request.headers), conditions: try containerConditions(request, unmodifiedSince: false))
        return TransportResponse(status: 200, headers: containerHeaders(record))
    }

    func containerProperties(_ name: String) async throws -> TransportResponse {
        guard let record = try await store.container(name) else { throw EmulatorStore.containerNotFound }
        var headers = containerHeaders(record)
        for (n, v) in record.metadata { headers["x-ms-meta-" + n] = v }
        if !record.access.isEmpty { headers["x-ms-blob-public-access"] = record.access }
        let (lease, now) = try await store.lease(container: name, name: nil)
        for (header, value) in BlobLease.headers(lease, at: now) { headers[header] = value }
        headers["x-ms-has-immutability-policy"] = "false"
        headers["x-ms-has-legal-hold"] = "false"
        headers["x-ms-immutable-storage-with-versioning-enabled"] = "false"
        headers["x-ms-default-encryption-scope"] = record.defaultEncryptionScope ?? "$account-encryption-key"
        headers["x-ms-deny-encryption-scope-override"] = record.denyEncryptionScopeOverride ? "true" : "false"
        return TransportResponse(status: 200, headers: headers)
    }

    func containerACL(_ name: String) async throws -> TransportResponse {
        guard let record = try await store.container(name) else { throw EmulatorStore.containerNotFound }
        var headers = containerHeaders(record)
        if !record.access.isEmpty { headers["x-ms-blob-public-access"] = record.access }
        headers["Content-Type"] = "application/xml"
        let body = AccessPolicyDocument(stored: record.acl).serialized(omittingEmptyPolicies: true)
        return TransportResponse(status: 200, headers: headers, body: Data(body.utf8))
    }

    /// Restore Container (`PUT ?restype=container&comp=undelete`): brings back the soft-deleted
    /// container `x-ms-deleted-container-name` of `x-ms-deleted-container-version`, under the
    /// name it had (Azure no longer restores under another).
    func restoreContainer(_ name: String, _ request: TransportRequest) async throws -> TransportResponse {
        guard let deletedName = request.headers["x-ms-deleted-container-name"] else {
            throw ServiceError(
                400, .missingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: x-ms-deleted-container-name.")
        }
        guard let version = request.headers["x-ms-deleted-container-version"] else {
            throw ServiceError(
                400, .missingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: x-ms-deleted-container-version.")
        }
        guard deletedName.utf8.elementsEqual(name.utf8) else {
            throw ServiceError(
                400, .invalidHeaderValue,
                "The value for one of the HTTP headers is not in the correct format: x-ms-deleted-container-name must be the container the request names (a container is restored under the name it had)."
            )
        }
        let record = try await store.restoreContainer(name, deletedName: deletedName, version: version)
        return TransportResponse(
            status: 201, headers: HeaderFields([("ETag", record.etag), ("Last-Modified", ServerClock.httpDate(record.modified))]))
    }

    func deleteContainer(_ name: String, _ request: TransportRequest) async throws -> TransportResponse {
        // Storage Analytics writes `$logs`; Azure does not let it be deleted either.
        if name == AnalyticsLogWriter.container {
            throw ServiceError(
                403, .authorizationFailure,
                "This request is not authorized to perform this operation: $logs is the account's Storage Analytics container; delete its blobs instead."
            )
        }
        try await store.deleteContainer(name, leaseID: request.headers["x-ms-lease-id"], conditions: try containerConditions(request))
        return TransportResponse(status: 202)
    }

    /// `maxresults`: 1…5000, default 5000.
    func maxResults(_ query: QueryParameters) throws -> Int {
        guard let text = query["maxresults"] else { return 5000 }
        guard let n = Int(text), n >= 1 else {
            throw ServiceError(
                400, .outOfRangeQueryParameterValue,
                "Value for one of the query parameters specified in the request URI is outside the permissible range.")
        }
        return min(n, 5000)
    }

    func serviceEndpoint(_ request: TransportRequest) -> String {
        "http://\(request.headers["Host"] ?? "127.0.0.1")/\(account)/"
    }

    /// The containers Azure makes in every account; List Containers shows them with `include=system`.
    static let systemContainers: Set<String> = ["$logs"]

    func listContainers(_ request: TransportRequest, _ query: QueryParameters) async throws -> TransportResponse {
        let limit = try maxResults(query)
        let prefix = query["prefix"] ?? ""
        let marker = query["marker"] ?? ""
        let include = (query["include"] ?? "").split(separator: ",")
        let deleted = include.contains("deleted")
        if deleted { try await store.purgeDeletedContainers() }
        let (records, next) = try await store.listContainers(
            prefix: prefix, marker: marker, limit: limit, hidden: include.contains("system") ? [] : Array(Self.systemContainers), deleted: deleted)
        let now = store.clock.now()
        var xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults ServiceEndpoint=\"\(XMLEscape.text(serviceEndpoint(request)))\">"
        xml += XMLEscape.echoIfSent("Prefix", query["prefix"]) + XMLEscape.echoIfSent("Marker", query["marker"])
        xml += XMLEscape.echoIfSent("MaxResults", query["maxresults"]) + "<Containers>"
        let includeMetadata = include.contains("metadata")
        // System containers (`$logs`) are listed only when asked for (`include=system`), as on Azure.
        for record in records {
            let name = record.deleted?.name ?? record.name
            xml += "<Container>" + XMLEscape.element("Name", name)
            if let deleted = record.deleted { xml += "<Deleted>true</Deleted>" + XMLEscape.element("Version", deleted.version) }
            xml += "<Properties>"
            xml += XMLEscape.element("Last-Modified", ServerClock.httpDate(record.modified)) + XMLEscape.element("Etag", record.etag)
            let (leaseRecord, now) = record.deleted == nil ? try await store.lease(container: record.name, name: nil) : (nil, now)
            let lease = Dictionary(BlobLease.headers(leaseRecord, at: now), uniquingKeysWith: { a, _ in a })
            xml += XMLEscape.element("LeaseStatus", lease["x-ms-lease-status"]) + XMLEscape.element("LeaseState", lease["x-ms-lease-state"])
            if let duration = lease["x-ms-lease-duration"] { xml += XMLEscape.element("LeaseDuration", duration) }
            if !record.access.isEmpty { xml += XMLEscape.element("PublicAccess", record.access) }
            xml += "<HasImmutabilityPolicy>false</HasImmutabilityPolicy><HasLegalHold>false</HasLegalHold>"
            xml +=
                XMLEscape.element("DefaultEncryptionScope", record.defaultEncryptionScope ?? "$account-encryption-key")
                + "<DenyEncryptionScopeOverride>\(record.denyEncryptionScopeOverride)</DenyEncryptionScopeOverride>"
            xml += "<ImmutableStorageWithVersioningEnabled>false</ImmutableStorageWithVersioningEnabled>"
            if let deleted = record.deleted {
                // Whole days left, rounded up (Azure's figure counts the day in progress).
                let left = max(0, Int((deleted.until.ticks - now.ticks + 863_999_999_999) / 864_000_000_000))
                xml += XMLEscape.element("DeletedTime", ServerClock.httpDate(deleted.at)) + XMLEscape.element("RemainingRetentionDays", String(left))
            }
            xml += "</Properties>"
            if includeMetadata { xml += BlobListingXML.metadata(record.metadata) }
            xml += "</Container>"
        }
        xml += "</Containers>"
        xml += XMLEscape.element("NextMarker", next) + "</EnumerationResults>"
        return TransportResponse(status: 200, headers: HeaderFields([("Content-Type", "application/xml")]), body: Data(xml.utf8))
    }
}
