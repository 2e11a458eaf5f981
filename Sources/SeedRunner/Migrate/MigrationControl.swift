import AzureStorage
import Foundation
import SeedKit

/// What `azseed migrate control` asks of the applies and undos running on a target — on any
/// host, any shard — as the target's ledger holds it (partition `control`, RowKey `migrate`).
/// Each running apply reads it every few seconds and at each checkpoint
/// (``MigrationControlWatcher``).
public struct MigrationControl: Sendable, Equatable {
    /// What an operator asks.
    public enum Request: Sendable, Equatable {
        /// No write is sent until ``resume``: batches wait, the lock is kept.
        case pause
        case resume
        /// At most this many entities written a second, in place of the runs' `--max-rate`
        /// (nil: back to their own).
        case rate(Int?)
        /// Runs under way stop before their next write, their checkpoints kept: running the
        /// same command again resumes. A run started after the cancel is not cancelled.
        case cancel
    }

    /// Writes wait while true.
    public var paused = false
    /// The rate cap set by `rate N`, in entities a second; nil when none is set.
    public var maxRate: Int?
    /// How many cancels were asked (at most 2^53), for people.
    public var cancels = 0
    /// A new id with each cancel: a run stops when it differs from the one it read at its start
    /// — never fooled by a count a damaged or deleted record started again.
    public var cancelID: String?
    /// Who asked last (tool and host), and when.
    public var by = ""
    public var at: EdmDateTime?

    static let partition = "control"
    static let rowKey = "migrate"
    /// The highest rate `rate N` takes, as `--max-rate`.
    public static let highestRate = 10_000_000

    public init() {}

    /// Whether nothing was ever asked (or everything was undone: resumed, no rate).
    public var isQuiet: Bool { !paused && maxRate == nil }

    /// Reads a record of the ledger: refused whole — never half obeyed — when a field is not
    /// what azseed writes (another program, or someone with the key, may write the table).
    init(_ entity: TableEntity) throws(MigrationControlDamaged) {
        func damaged(_ problem: String) -> MigrationControlDamaged {
            MigrationControlDamaged(
                phrase: "the migrate control record in azseed's ledger (table \(ReservedNames.ledgerTable)) \(problem); it is not one azseed wrote")
        }
        switch entity.properties["State"] {
        case .string("paused"): paused = true
        case .string("running"): paused = false
        default: throw damaged("has no State 'paused' or 'running'")
        }
        switch entity.properties["MaxRate"] {
        case nil: maxRate = nil
        case .int32(let rate) where (1...Int32(Self.highestRate)).contains(rate): maxRate = Int(rate)
        default: throw damaged("has a MaxRate that is not 1 to \(Self.highestRate)")
        }
        guard case .int64(let cancels) = entity.properties["Cancels"], (0...(1 << 53)).contains(cancels) else {
            throw damaged("has no Cancels count (0 to 2^53)")
        }
        self.cancels = Int(cancels)
        switch entity.properties["CancelId"] {
        case nil: cancelID = nil
        case .string(let id)
        where (1...64).contains(id.utf8.count) && id.utf8.allSatisfy({ $0 == 0x2D || ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x46) }):
            cancelID = id
        default: throw damaged("has a CancelId that is not an id azseed makes")
        }
        guard case .string(let by) = entity.properties["By"], by.utf8.count <= 1024 else { throw damaged("has no By (or a By over 1 KiB)") }
        self.by = by
        if case .dateTime(let at) = entity.properties["At"] { self.at = at }
    }

    var entity: TableEntity {
        var properties: EntityProperties = [
            "State": .string(paused ? "paused" : "running"), "Cancels": .int64(Int64(cancels)), "By": .string(by),
        ]
        if let maxRate { properties["MaxRate"] = .int32(Int32(maxRate)) }
        if let cancelID { properties["CancelId"] = .string(cancelID) }
        if let at { properties["At"] = .dateTime(at) }
        return TableEntity(partitionKey: Self.partition, rowKey: Self.rowKey, properties: properties)
    }

    /// This control with `request` carried out.
    func applying(_ request: Request, by: String, at: EdmDateTime) -> MigrationControl {
        var next = self
        switch request {
        case .pause: next.paused = true
        case .resume: next.paused = false
        case .rate(let rate): next.maxRate = rate
        case .cancel:
            next.cancels = min(cancels + 1, 1 << 53)
            next.cancelID = UUID().uuidString
            next.paused = false
        }
        next.by = by
        next.at = at
        return next
    }

    /// `paused, at most 500 entities/s (azseed 1.0 on build-7, 2026-11-29T04:30:00Z)`; `running`.
    public var summary: String {
        var parts = [paused ? "paused" : "running"]
        if let maxRate { parts.append("at most \(maxRate) entities/s") }
        return parts.joined(separator: ", ") + (who.isEmpty ? "" : " (\(who))")
    }

    /// Who asked last, and when: `azseed 1.0 on build-7, 2026-11-29T04:30:00Z`.
    public var who: String {
        [Printable.escaped(by, quotes: false), at?.shortISO8601].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ", ")
    }
}

/// A control record that is not one azseed wrote: never half obeyed.
public struct MigrationControlDamaged: PersonFacingError, Sendable {
    public var phrase: Phrase
}

extension Ledger {
    /// The control record and its ETag; a quiet control (and no ETag) when there is none.
    public func control() async throws -> (MigrationControl, etag: String?) {
        let (read, etag) = try await controlRecord()
        return (try read.get(), etag)
    }

    /// The record as read — or why it is not one azseed wrote — and its ETag.
    private func controlRecord() async throws -> (Result<MigrationControl, MigrationControlDamaged>, String?) {
        do {
            guard
                let read = try await tables.get(
                    partitionKey: MigrationControl.partition, rowKey: MigrationControl.rowKey, from: ReservedNames.ledgerTable)
            else { return (.success(MigrationControl()), nil) }
            return (Result { () throws(MigrationControlDamaged) in try MigrationControl(read.entity) }, read.etag)
        } catch let error as AzureStorageError where error.status == 404 {
            return (.success(MigrationControl()), nil)  // no ledger table yet
        } catch {
            throw RunError.explaining(error, while: "reading the migrate control record (table \(ReservedNames.ledgerTable))")
        }
    }

    /// Carries out `request` on the control record — read, then written on its ETag, again if
    /// another operator wrote it meanwhile (two cancels are two) — creating the ledger's table
    /// on first use. A damaged record is replaced whole by what `request` makes of a quiet one.
    public func request(_ request: MigrationControl.Request, by: String, at: EdmDateTime) async throws -> MigrationControl {
        for _ in 0..<20 {
            let (read, etag) = try await controlRecord()
            let next = ((try? read.get()) ?? MigrationControl()).applying(request, by: by, at: at)
            do {
                if let etag {
                    _ = try await tables.update(next.entity, in: ReservedNames.ledgerTable, etag: etag)
                } else {
                    _ = try await tables.ensureTable(ReservedNames.ledgerTable)
                    _ = try await tables.insert(next.entity, into: ReservedNames.ledgerTable)
                }
                return next
            } catch let error as AzureStorageError where error.status == 412 || error.status == 409 || error.status == 404 {
                continue  // written (or removed) by another operator since it was read: again
            } catch {
                throw RunError.explaining(error, while: "writing the migrate control record (table \(ReservedNames.ledgerTable))")
            }
        }
        throw RunError("the migrate control record kept changing while it was written (20 tries); run the command again")
    }
}
