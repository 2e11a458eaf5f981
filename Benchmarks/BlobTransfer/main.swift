// A large blob through the library beside curl, against the same emulator on disk.
//
//   swift build -c release --product blob-transfer-benchmark
//   .build/release/blob-transfer-benchmark [MiB]        (default 1024)
//   BLOCK_MIB=32 .build/release/blob-transfer-benchmark   (the client's block/range size; default 8)
//
// Writes a file of MiB mebibytes, starts an emulator in this process (data on disk, durable;
// the Put Blob limit raised so curl can send the file in one request), then times:
// BlobClient.upload(file:) (8 MiB blocks, 4 in flight), BlobClient.download(to:) (8 MiB
// ranges, 4 in flight), curl's single signed Put Blob of the same file, and curl's anonymous
// GET of it (the container allows public blob reads). Prints each rate and the process's peak
// RSS after each step (client and emulator together; curl runs in its own process).
import AzureStorage
import Foundation
import StorageEmulator

func peakRSSMiB() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
}

func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }

@discardableResult
func report(_ label: String, bytes: Int, _ elapsed: Duration) -> Double {
    let s = seconds(elapsed)
    let padded = label.padding(toLength: 34, withPad: " ", startingAt: 0)
    print(padded + String(format: " %7.2f s %8.1f MiB/s   peak RSS so far %d MiB", s, Double(bytes) / s / 1_048_576, peakRSSMiB()))
    return s
}

/// Runs curl, the response body to `output`; returns when it exits (its own process, so
/// nothing of it blocks this one).
func curl(_ arguments: [String], output: String = "/dev/null") throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    // One `-o` only: curl pairs each `-o` with a URL in order, so a second one never applied.
    process.arguments = ["-s", "-S", "-f", "-o", output] + arguments
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CocoaError(.executableLoad) }
}

let mib = Int(CommandLine.arguments.dropFirst().first ?? "1024") ?? 1024
let size = mib * 1_048_576
let work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("azseed-blob-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: work) }

// The file: xorshift bytes (incompressible), written 8 MiB at a time.
let source = work.appendingPathComponent("source.bin")
FileManager.default.createFile(atPath: source.path, contents: nil)
let out = try FileHandle(forWritingTo: source)
var state: UInt64 = 0x9E37_79B9_7F4A_7C15
var chunk = [UInt8](repeating: 0, count: 8 * 1_048_576)
for _ in 0..<(size / chunk.count) {
    chunk.withUnsafeMutableBytes { raw in
        for i in stride(from: 0, to: raw.count, by: 8) {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            raw.storeBytes(of: state, toByteOffset: i, as: UInt64.self)
        }
    }
    try out.write(contentsOf: chunk)
}
try out.close()
print("== \(mib) MiB blob, emulator on disk in this process (\(work.path))")

let server = try await EmulatorServer.start(
    EmulatorConfiguration(
        dataDirectory: work.appendingPathComponent("data"), blobPort: 0, tablePort: 0,
        maxBlobBodyBytes: size + 1))
var blobs = BlobClient(account: server.account)
if let mib = ProcessInfo.processInfo.environment["BLOCK_MIB"].flatMap(Int.init) { blobs.blockSize = mib * 1_048_576 }
try await blobs.createContainer("bench", access: .blob)

/// Each step starts with no dirty pages of the one before (what is timed is the step's own
/// writing, not the kernel flushing the previous step's) and, where this process may drop the
/// page cache (root), with nothing cached: otherwise the second reader of a blob finds it in
/// memory where the first read it from disk.
func settle() {
    sync()
    if let drop = FileHandle(forWritingAtPath: "/proc/sys/vm/drop_caches") {
        try? drop.write(contentsOf: Data("3".utf8))
        try? drop.close()
    }
}

// curl's Put Blob, signed with the account key like the library's requests.
func curlPut(_ name: String) throws {
    let blobURL = "\(server.account.blobEndpoint.absoluteString)/bench/\(name)"
    var put = TransportRequest(
        method: "PUT", url: blobURL,
        headers: HeaderFields([
            ("x-ms-date", SharedKeySigner.httpDate(Date())), ("x-ms-version", "2021-12-02"), ("x-ms-blob-type", "BlockBlob"),
            ("Content-Length", String(size)), ("Content-Type", "application/octet-stream"),
        ]))!
    let signer = SharedKeySigner(account: server.account.name, key: AccountKey(base64: StorageAccount.developmentAccountKey)!)
    put.headers["Authorization"] = signer.blobAuthorization(put)
    var arguments = ["-X", "PUT", "-T", source.path, "-H", "Expect:"]
    for (name, value) in put.headers where name != "Content-Length" { arguments += ["-H", "\(name): \(value)"] }
    try curl(arguments + [blobURL])
}

/// Times `step` after settling; prints the line and returns the seconds.
func timed(_ label: String, _ step: () async throws -> Void) async throws -> Double {
    settle()
    let start = ContinuousClock.now
    try await step()
    return report(label, bytes: size, ContinuousClock.now - start)
}

// The page cache and the disk make single runs of this machine vary by 2x: each pair of
// library and curl steps runs three times, interleaved, and the medians are compared.
let back = work.appendingPathComponent("back.bin")
var times: [String: [Double]] = [:]
if ProcessInfo.processInfo.environment["ONLY_DOWNLOAD"] != nil {
    // For a profile of the library's download alone (`perf record`).
    try await blobs.upload(file: source, container: "bench", name: "library.bin")
    for _ in 1...3 {
        _ = try await timed("library download(to:)") { try await blobs.download(container: "bench", name: "library.bin", to: back) }
        try FileManager.default.removeItem(at: back)
    }
    exit(0)
}
for round in 1...3 {
    times["lu", default: []].append(
        try await timed("library upload(file:)") { try await blobs.upload(file: source, container: "bench", name: "library.bin") })
    times["cu", default: []].append(try await timed("curl Put Blob (one request)") { try curlPut("curl-\(round).bin") })
    try? FileManager.default.removeItem(at: back)
    times["ld", default: []].append(
        try await timed("library download(to:)") { try await blobs.download(container: "bench", name: "library.bin", to: back) })
    if round == 1, !FileManager.default.contentsEqual(atPath: source.path, andPath: back.path) { fatalError("downloaded bytes differ") }
    try FileManager.default.removeItem(at: back)
    times["cd", default: []].append(
        try await timed("curl GET (to a file)") { try curl(["\(server.account.blobEndpoint.absoluteString)/bench/library.bin"], output: back.path) })
    guard (try? FileManager.default.attributesOfItem(atPath: back.path)[.size] as? Int) == size else { fatalError("curl wrote no whole file") }
    try FileManager.default.removeItem(at: back)
    _ = try await timed("curl GET (to /dev/null)") { try curl(["\(server.account.blobEndpoint.absoluteString)/bench/library.bin"]) }
}
let medians = times.mapValues { $0.sorted()[1] }
let median = { (key: String) -> Double in medians[key]! }
print(
    String(
        format: "medians: library upload %.2f s, curl %.2f s (%.0f %%); library download %.2f s, curl to a file %.2f s (%.0f %%)",
        median("lu"), median("cu"), median("cu") / median("lu") * 100, median("ld"), median("cd"), median("cd") / median("ld") * 100))
await server.stop()
