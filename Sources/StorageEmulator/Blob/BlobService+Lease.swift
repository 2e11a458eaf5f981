import Foundation
import StorageProtocol

extension BlobService {
    /// Lease Blob (`PUT ?comp=lease`) and, with `blob` nil, Lease Container (`PUT
    /// ?restype=container&comp=lease`): acquire, renew, change, release or break, as
    /// `x-ms-lease-action` asks; the states and refusals are Azure's (docs/PROTOCOL.md, "Leases").
    func lease(_ container: String, _ blob: String?, _ request: TransportRequest) async throws -> TransportResponse {
        let h = request.headers
        func required(_ name: String) throws -> String {
            guard let value = h[name] else {
                throw ServiceError(400, .missingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: \(name).")
            }
            return value
        }
        func guid(_ name: String) throws -> String {
            let value = try required(name)
            guard UUID(uuidString: value) != nil else { throw Self.invalidHeader(name, value) }
            return value
        }
        let action: LeaseAction
        switch try required("x-ms-lease-action").lowercased() {
        case "acquire":
            let text = try required("x-ms-lease-duration")
            guard let duration = Int(text), duration == -1 || (15...60).contains(duration) else {
                throw Self.invalidHeader("x-ms-lease-duration", text)
            }
            let proposed = h["x-ms-proposed-lease-id"] == nil ? nil : try guid("x-ms-proposed-lease-id")
            action = .acquire(duration: duration == -1 ? nil : duration, proposed: proposed)
        case "renew": action = .renew(id: try guid("x-ms-lease-id"))
        case "change": action = .change(id: try guid("x-ms-lease-id"), proposed: try guid("x-ms-proposed-lease-id"))
        case "release": action = .release(id: try guid("x-ms-lease-id"))
        case "break":
            var period: Int?
            if let text = h["x-ms-lease-break-period"] {
                guard let value = Int(text), (0...60).contains(value) else { throw Self.invalidHeader("x-ms-lease-break-period", text) }
                period = value
            }
            action = .breakLease(period: period)
        case let other:
            throw Self.invalidHeader("x-ms-lease-action", other)
        }
        // Lease Blob takes the ETag, time and tag conditions; Lease Container the time ones.
        var conditions: WriteConditions
        if blob == nil {
            if h["If-Match"] != nil || h["If-None-Match"] != nil || h["x-ms-if-tags"] != nil {
                throw ServiceError.unsupportedHeader("If-Match, If-None-Match or x-ms-if-tags on Lease Container")
            }
            conditions = WriteConditions(
                ifModifiedSince: try Self.dateHeader(h, "If-Modified-Since"), ifUnmodifiedSince: try Self.dateHeader(h, "If-Unmodified-Since"))
        } else {
            conditions = try self.conditions(request)
            conditions.leaseID = nil  // here the lease id names the lease acted on, checked by the action
        }
        let outcome = try await store.lease(container: container, name: blob, action, conditions: conditions)
        var headers = HeaderFields([("ETag", outcome.etag), ("Last-Modified", ServerClock.httpDate(outcome.modified))])
        if let id = outcome.id { headers["x-ms-lease-id"] = id }
        if let seconds = outcome.breakSeconds { headers["x-ms-lease-time"] = String(seconds) }
        let status: Int
        switch action {
        case .acquire: status = 201
        case .breakLease: status = 202
        default: status = 200
        }
        return TransportResponse(status: status, headers: headers)
    }

    static func invalidHeader(_ name: String, _ value: String) -> ServiceError {
        ServiceError(400, .invalidHeaderValue, "The value for one of the HTTP headers is not in the correct format: \(name) '\(value)'.")
    }
}
