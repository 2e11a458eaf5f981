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

func report(_ label: String, bytes: Int, _ elapsed: Duration) {
    let s = seconds(elapsed)
    let padded = label.padding(toLength: 34, withPad: " ", startingAt: 0)
    print(padded + String(format: " %7.2f s %8.1f MiB/s   peak RSS so far %d MiB", s, Double(bytes) / s / 1_048_576, peakRSSMiB()))
}

/// Runs curl; returns when it exits (its own process, so nothing of it blocks this one).
func curl(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-s", "-S", "-f", "-o", "/dev/null"] + arguments
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

var start = ContinuousClock.now
try await blobs.upload(file: source, container: "bench", name: "library.bin")
report("library upload(file:)", bytes: size, ContinuousClock.now - start)

let back = work.appendingPathComponent("back.bin")
start = ContinuousClock.now
try await blobs.download(container: "bench", name: "library.bin", to: back)
report("library download(to:)", bytes: size, ContinuousClock.now - start)
guard FileManager.default.contentsEqual(atPath: source.path, andPath: back.path) else { fatalError("downloaded bytes differ") }
try FileManager.default.removeItem(at: back)

// curl's Put Blob, signed with the account key like the library's requests.
let blobURL = "\(server.account.blobEndpoint.absoluteString)/bench/curl.bin"
var put = TransportRequest(
    method: "PUT", url: blobURL,
    headers: HeaderFields([
        ("x-ms-date", SharedKeySigner.httpDate(Date())), ("x-ms-version", "2021-12-02"), ("x-ms-blob-type", "BlockBlob"),
        ("Content-Length", String(size)), ("Content-Type", "application/octet-stream"),
    ]))!
let signer = SharedKeySigner(account: server.account.name, key: AccountKey(base64: StorageAccount.developmentAccountKey)!)
put.headers["Authorization"] = signer.blobAuthorization(put)
var putArguments = ["-X", "PUT", "-T", source.path, "-H", "Expect:"]
for (name, value) in put.headers where name != "Content-Length" { putArguments += ["-H", "\(name): \(value)"] }
start = ContinuousClock.now
try curl(putArguments + [blobURL])
report("curl Put Blob (one request)", bytes: size, ContinuousClock.now - start)

start = ContinuousClock.now
try curl(["\(server.account.blobEndpoint.absoluteString)/bench/library.bin"])
report("curl GET (to /dev/null)", bytes: size, ContinuousClock.now - start)
start = ContinuousClock.now
try curl(["-o", back.path, "\(server.account.blobEndpoint.absoluteString)/bench/library.bin"])
report("curl GET (to a file)", bytes: size, ContinuousClock.now - start)
await server.stop()
