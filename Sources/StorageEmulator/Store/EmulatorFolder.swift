import Foundation
import GRDB

/// What `azseed emulator --compact` did to a folder's database.
public struct CompactionReport: Sendable {
    /// storage.sqlite (with its WAL) before and after, in bytes.
    public var bytesBefore: Int
    public var bytesAfter: Int
    public var seconds: Double
}

/// Maintenance of a data folder while no emulator serves it.
public enum EmulatorFolder {
    /// Rewrites a data folder's database without its free pages (SQLite `VACUUM`), after bringing
    /// it up to date: the explicit form of what the emulator does while idle (incremental vacuum,
    /// a step at a time). Takes the folder's lock — a folder another process serves is refused —
    /// and blocks until done: call it from a thread that may block (the CLI's main thread before
    /// any server starts, or ``BlockingPool``).
    public static func compact(dataDirectory: URL, command: String) throws -> CompactionReport {
        let started = Date()
        let lock = try DataFolderLock(folder: dataDirectory, command: command)
        defer { lock.release() }
        let path = dataDirectory.appendingPathComponent("storage.sqlite").path
        func size() -> Int {
            [path, path + "-wal"].reduce(0) { total, file in
                total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
            }
        }
        let before = size()
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(30)
            try EmulatorDatabase.upgrade(path: path, configuration: configuration)
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "VACUUM")
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
            try queue.close()
        } catch let error as DatabaseError {
            throw EmulatorStartError(
                phrase:
                    "\(path): cannot be compacted (SQLite: \(error.message ?? "error \(error.resultCode.rawValue)")); the folder was left as it was")
        }
        return CompactionReport(bytesBefore: before, bytesAfter: size(), seconds: Date().timeIntervalSince(started))
    }
}
