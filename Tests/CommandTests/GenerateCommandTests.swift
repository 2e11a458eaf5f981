import AzseedTestSupport
import Foundation
import Testing

/// `azseed generate` as a user runs it: the built executable, its exit codes and its stderr.
@Suite struct GenerateCommandTests {
    static let azseed = BuiltProducts.azseed

    private func azseed(_ arguments: [String], in directory: URL? = nil) throws -> ProcessResult {
        try Processes.run(Self.azseed, arguments, in: directory)
    }

    @Test func generatesFromAnyWorkingDirectory() throws {
        let dir = try Scratch.folder()
        let run = try azseed(["generate", "--out", "fx", "--seed", "42", "--from", "2026-01-01", "--to", "2026-07-01"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("8 blobs") && run.stdout.contains("108 entities in events"))
        #expect(run.stdout.contains("window 2026-01-01T00:00:00Z to 2026-07-01T00:00:00Z"))
        #expect(try Folders.hash(dir.appendingPathComponent("fx")) == Folders.speakEasySeed42)
    }

    @Test func badInputIsOneLineAndWritesNothing() throws {
        let dir = try Scratch.folder()
        let occupied = dir.appendingPathComponent("occupied")
        try FileManager.default.createDirectory(at: occupied, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: occupied.appendingPathComponent("keep.txt"))
        let badDataset = dir.appendingPathComponent("bad")
        try FileManager.default.createDirectory(at: badDataset, withIntermediateDirectories: true)
        try Data("name: x\nseed: [1\n".utf8).write(to: badDataset.appendingPathComponent("dataset.yaml"))

        let cases: [(args: [String], code: Int32, says: String)] = [
            (["generate"], 64, "Missing expected argument '--out <dir>'"),
            (["generate", "--out", "o", "--events", "0"], 64, "--events must be at least 1"),
            (["generate", "--out", "o", "--count", "event"], 64, "--count takes KIND=N"),
            (["generate", "--out", "o", "--from", "2026-07-01", "--to", "2026-01-01"], 64, "is not before its end"),
            (["generate", "--out", "o", "--from", "next tuesday"], 64, "--from"),
            (["generate", "--out", "o", "--to", "2026-02-30"], 64, "--to"),
            (["generate", "--out", "o", "--seed", "-1"], 64, "--seed"),
            (["generate", "--out", "o", "--access", "public"], 64, "--access"),
            (["generate", "--out", "o", "--events", "99999999999"], 64, "cannot make 99999999999 unique entities"),
            (["generate", "--out", "o", "--count", "speaker=3"], 64, "explicit rows"),
            (["generate", "--out", "o", "--blob-endpoint", "ftp://x"], 64, "--blob-endpoint"),
            (["generate", "--out", "occupied"], 64, "exists and is not empty; choose another --out or pass --force"),
            (["generate", "--out", "o", "--dataset", "nowhere"], 1, "dataset file not found"),
            (["generate", "--out", "o", "--dataset", "bad"], 1, "bad/dataset.yaml:3: malformed YAML"),
            (["generate", "--out", "nested/deeper/o"], 64, "does not exist; create it or choose another --out"),
            (["frobnicate"], 64, "Unexpected argument 'frobnicate' (see 'azseed help')"),
            (["aply"], 64, "Unexpected argument 'aply'; did you mean 'apply'? (see 'azseed help')"),
            (["migrate", "stauts"], 64, "did you mean 'status'?"),
        ]
        for c in cases {
            let run = try azseed(c.args, in: dir)
            #expect(run.status == c.code, "\(c.args): exit \(run.status), stderr \(run.stderr)")
            #expect(run.stderr.hasPrefix("azseed: error: "), "\(c.args): \(run.stderr)")
            #expect(run.stderr.contains(c.says), "\(c.args): \(run.stderr)")
            #expect(run.stderr.split(separator: "\n").count == 1, "\(c.args): \(run.stderr)")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(left == ["bad", "occupied"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: occupied.path) == ["keep.txt"])
    }

    @Test func forceReplacesAnOccupiedFolder() throws {
        let dir = try Scratch.folder()
        let out = dir.appendingPathComponent("fx")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try Data("old".utf8).write(to: out.appendingPathComponent("stale.txt"))
        let run = try azseed(["generate", "--out", "fx", "--force", "--events", "10"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted() == ["blobs", "manifest.json", "tables"])
    }
}
