import Foundation
import GRDB
import StorageProtocol

/// A blob's lease as stored (table `leases`): its id, its duration (nil: infinite), when a
/// fixed lease expires, and when a break ends. No row is an available blob.
struct BlobLease: Sendable, Equatable {
    var id: String
    var duration: Int?
    var expires: EdmDateTime?
    var breakAt: EdmDateTime?
    var broken: Bool

    /// Azure's lease states (`x-ms-lease-state`).
    enum State: String, Sendable {
        case available, leased, expired, breaking, broken
    }

    /// The state at `now`: a fixed lease past its expiry is expired, a break past its end broken.
    func state(at now: EdmDateTime) -> State {
        if broken { return .broken }
        if let breakAt { return now >= breakAt ? .broken : .breaking }
        if let expires, now >= expires { return .expired }
        return .leased
    }

    /// Whether writes need its id: leased, or breaking.
    func isActive(at now: EdmDateTime) -> Bool { [.leased, .breaking].contains(state(at: now)) }

    /// The lease headers Get Blob Properties answers with (`x-ms-lease-status`, `-state`, `-duration`).
    static func headers(_ lease: BlobLease?, at now: EdmDateTime) -> [(String, String)] {
        let state = lease?.state(at: now) ?? .available
        var headers = [("x-ms-lease-status", [.leased, .breaking].contains(state) ? "locked" : "unlocked"), ("x-ms-lease-state", state.rawValue)]
        if state == .leased, let lease { headers.append(("x-ms-lease-duration", lease.duration == nil ? "infinite" : "fixed")) }
        return headers
    }

    init(id: String, duration: Int?, expires: EdmDateTime?, breakAt: EdmDateTime? = nil, broken: Bool = false) {
        self.id = id
        self.duration = duration
        self.expires = expires
        self.breakAt = breakAt
        self.broken = broken
    }

    init(row: Row) {
        id = row["leaseId"]
        duration = row["duration"]
        expires = (row["expires"] as Int64?).map(EdmDateTime.init(ticks:))
        breakAt = (row["breakAt"] as Int64?).map(EdmDateTime.init(ticks:))
        broken = row["broken"]
    }

    static func read(_ container: String, _ blob: String, _ db: Database) throws -> BlobLease? {
        // Cached: a migration proves its lock (a renewal) before each save of its ledger.
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM leases WHERE container = ? AND blob = ?"), arguments: [container, blob]).map(
            BlobLease.init(row:))
    }

    /// Every lease in a container, by blob name (List Blobs reports them).
    static func all(in container: String, _ db: Database) throws -> [String: BlobLease] {
        var leases: [String: BlobLease] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT * FROM leases WHERE container = ?", arguments: [container]) {
            leases[row["blob"]] = BlobLease(row: row)
        }
        return leases
    }

    func write(_ container: String, _ blob: String, _ db: Database) throws {
        try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO leases (container, blob, leaseId, duration, expires, breakAt, broken) VALUES (?, ?, ?, ?, ?, ?, ?)"
        ).execute(arguments: [container, blob, id, duration, expires?.ticks, breakAt?.ticks, broken])
    }

    static func delete(_ container: String, _ blob: String?, _ db: Database) throws {
        if let blob {
            try db.execute(sql: "DELETE FROM leases WHERE container = ? AND blob = ?", arguments: [container, blob])
        } else {
            try db.execute(sql: "DELETE FROM leases WHERE container = ?", arguments: [container])
        }
    }

    /// Lease ids are GUIDs, compared as GUIDs (any case, any of .NET's formats).
    static func same(_ a: String, _ b: String) -> Bool {
        guard let x = UUID(uuidString: a), let y = UUID(uuidString: b) else { return a == b }
        return x == y
    }

    /// Whether a write (or, with `write` false, a read) may go ahead given the request's
    /// `x-ms-lease-id`: an active lease needs its id on a write; an id given must be the
    /// active lease's, on any operation.
    /// `container`: the lease is a container's (Lease Container), with its own codes.
    static func check(_ lease: BlobLease?, given: String?, write: Bool, at now: EdmDateTime, container: Bool = false) throws(ServiceError) {
        let active = lease.map { $0.isActive(at: now) } ?? false
        let noun = container ? "container" : "blob"
        if let given {
            guard active, let lease else {
                throw ServiceError(
                    412, container ? .leaseNotPresentWithContainerOperation : .leaseNotPresentWithBlobOperation,
                    "There is currently no lease on the \(noun).")
            }
            guard same(given, lease.id) else {
                throw ServiceError(
                    412, container ? .leaseIdMismatchWithContainerOperation : .leaseIdMismatchWithBlobOperation,
                    "The lease ID specified did not match the lease ID for the \(noun).")
            }
        } else if write && active {
            throw ServiceError(412, .leaseIdMissing, "There is currently a lease on the \(noun) and no lease ID was specified in the request.")
        }
    }

    /// The key a container's own lease is stored under (no blob has an empty name).
    static let containerKey = ""
}
