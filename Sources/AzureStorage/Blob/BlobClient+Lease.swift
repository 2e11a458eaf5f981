import Foundation

extension BlobClient {
    /// Takes a lease on a blob (Lease Blob, acquire): `seconds` 15 to 60, nil for infinite;
    /// returns the lease id. Another holder's lease is 409 `LeaseAlreadyPresent`.
    public func acquireLease(container: String, name: String, seconds: Int?, proposedID: String? = nil) async throws -> String {
        var headers = HeaderFields([("x-ms-lease-action", "acquire"), ("x-ms-lease-duration", String(seconds ?? -1))])
        if let proposedID { headers["x-ms-proposed-lease-id"] = proposedID }
        let response = try await lease(container, name, headers, operation: "Lease Blob (acquire)", expected: [201])
        guard let id = response.headers["x-ms-lease-id"] else {
            throw AzureStorageError(
                kind: .invalidResponse, operation: "Lease Blob (acquire)", url: pipeline.origin + path(container, name),
                message: "no x-ms-lease-id in the answer")
        }
        return id
    }

    /// Renews a lease (its duration starts again).
    public func renewLease(container: String, name: String, id: String) async throws {
        _ = try await lease(
            container, name, HeaderFields([("x-ms-lease-action", "renew"), ("x-ms-lease-id", id)]), operation: "Lease Blob (renew)", expected: [200])
    }

    /// Releases a lease: anyone may take one at once.
    public func releaseLease(container: String, name: String, id: String) async throws {
        _ = try await lease(
            container, name, HeaderFields([("x-ms-lease-action", "release"), ("x-ms-lease-id", id)]), operation: "Lease Blob (release)",
            expected: [200])
    }

    /// Breaks whoever's lease there is (no id needed): at once with `period` 0. Returns the
    /// seconds until it is broken.
    @discardableResult
    public func breakLease(container: String, name: String, period: Int? = 0) async throws -> Int {
        var headers = HeaderFields([("x-ms-lease-action", "break")])
        if let period { headers["x-ms-lease-break-period"] = String(period) }
        let response = try await lease(container, name, headers, operation: "Lease Blob (break)", expected: [202])
        return Int(response.headers["x-ms-lease-time"] ?? "0") ?? 0
    }

    private func lease(_ container: String, _ name: String, _ headers: HeaderFields, operation: String, expected: Set<Int>) async throws
        -> TransportResponse
    {
        try check(container: container, blob: name, operation: operation)
        return try await pipeline.send(
            pipeline.request("PUT", path(container, name), query: [("comp", "lease")], headers: headers), operation: operation, expected: expected)
    }
}
