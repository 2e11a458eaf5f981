import Foundation
import GRDB
import Synchronization
import Testing

@testable import StorageEmulator

/// Group commit: concurrent writes share commits, each is answered on its own, a failing write
/// rolls back only itself, and the blob-file flush runs before every commit.
@Suite struct GroupCommitTests {
    static func database() throws -> DatabaseQueue {
        let db = try DatabaseQueue()
        try db.write { try $0.execute(sql: "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)") }
        return db
    }

    /// Counts the group commits' flushes; the first one takes 200 ms.
    final class Flushes: Sendable {
        let count = Atomic<Int>(0)
        func slowFirst(_ db: DatabaseQueue) -> GroupCommit {
            GroupCommit(writer: db, beforeCommit: { if self.count.add(1, ordering: .relaxed).newValue == 1 { usleep(200_000) } })
        }
    }

    @Test func concurrentWritesShareCommitsAndFailAlone() async throws {
        let db = try Self.database()
        let flushes = Flushes()
        // The first flush takes 200 ms (on the writer's own thread): the writes sent meanwhile
        // must queue and go into the next groups together.
        let commits = flushes.slowFirst(db)
        defer { commits.requestStop() }
        let results = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            for k in 0..<400 {
                group.addTask {
                    do {
                        try await commits.write { db in
                            try db.execute(sql: "INSERT INTO t (k, v) VALUES (?, ?)", arguments: [k, "v\(k)"])
                            // Every seventh write fails after writing: its row must not stay.
                            if k % 7 == 0 { throw ServiceError(409, "Conflict", "write \(k) refused") }
                        }
                        return (k, true)
                    } catch let error as ServiceError {
                        #expect(error.code == "Conflict")
                        return (k, false)
                    }
                }
            }
            var all: [Int: Bool] = [:]
            for try await (k, ok) in group { all[k] = ok }
            return all
        }
        #expect(results.count == 400)
        #expect(results.allSatisfy { $0.value == ($0.key % 7 != 0) })
        let stored = try await db.read { try Int.fetchAll($0, sql: "SELECT k FROM t ORDER BY k") }
        #expect(stored == (0..<400).filter { $0 % 7 != 0 })
        // 400 writes from many tasks at once were committed in fewer groups than writes, and
        // each group flushed first.
        let groups = flushes.count.load(ordering: .relaxed)
        #expect(groups >= 1 && groups <= 10, "\(groups) commits for 400 writes")
    }

    /// A write that ends the whole transaction (as SQLite does on a full disk) takes the
    /// writes before it in the group with it: none of those may be answered as stored, and a
    /// write after it must not commit alone in a transaction of its own.
    @Test func aWriteThatEndsTheTransactionFailsItsWholeGroup() async throws {
        let db = try Self.database()
        let commits = Flushes().slowFirst(db)
        defer { commits.requestStop() }
        let answered = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            group.addTask {
                try await commits.write { try $0.execute(sql: "INSERT INTO t (k, v) VALUES (1000, 'first')") }
                return (1000, true)
            }
            try await Task.sleep(for: .milliseconds(50))  // the first group is flushing: these queue together
            for k in 0..<30 {
                group.addTask {
                    do {
                        try await commits.write { db in
                            try db.execute(sql: "INSERT INTO t (k, v) VALUES (?, ?)", arguments: [k, "v"])
                            if k == 15 { try db.execute(sql: "ROLLBACK") }
                        }
                        return (k, true)
                    } catch {
                        return (k, false)
                    }
                }
            }
            var all: [Int: Bool] = [:]
            for try await (k, ok) in group { all[k] = ok }
            return all
        }
        let stored = Set(try await db.read { try Int.fetchAll($0, sql: "SELECT k FROM t") })
        #expect(answered[15] == false)
        for (k, ok) in answered { #expect(ok == stored.contains(k), "write \(k) answered \(ok ? "stored" : "failed")") }
    }

    @Test func aFailedFlushFailsTheGroupAndStoresNothing() async throws {
        let db = try Self.database()
        let commits = GroupCommit(writer: db, beforeCommit: { throw ServiceError(500, "InternalError", "disk gone") })
        defer { commits.requestStop() }
        await #expect(throws: ServiceError.self) {
            try await commits.write { try $0.execute(sql: "INSERT INTO t (k, v) VALUES (1, 'x')") }
        }
        #expect(try await db.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM t") } == 0)
    }
}
