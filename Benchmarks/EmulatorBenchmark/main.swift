import AzureStorage
import Foundation
import StorageEmulator

// Emulator ingest benchmark: how fast the emulator takes a seeding run's writes, through the
// real client over HTTP on loopback. Usage: emulator-benchmark [entities] [blobs] [concurrency]
// Each run uses a fresh data directory on disk (the embedded default) and, for comparison,
// the in-memory store.

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let entityCount = arguments.count > 0 ? arguments[0] : 100_000
let blobCount = arguments.count > 1 ? arguments[1] : 500
let concurrency = arguments.count > 2 ? arguments[2] : 8

func seconds(since start: ContinuousClock.Instant) -> Double {
    let d = ContinuousClock.now - start
    return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

/// Runs `work(i)` for i in 0..<count with at most `concurrency` in flight.
func bounded(_ count: Int, _ work: @escaping @Sendable (Int) async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var next = 0
        while next < min(concurrency, count) {
            let i = next
            group.addTask { try await work(i) }
            next += 1
        }
        while try await group.next() != nil {
            if next < count {
                let i = next
                group.addTask { try await work(i) }
                next += 1
            }
        }
    }
}

/// Sums the time spent inside the emulator core, to separate its cost from HTTP and the client.
final class CoreClock: @unchecked Sendable {
    private let lock = NSLock()
    private var total = Duration.zero
    func add(_ d: Duration) { lock.withLock { total += d } }
    var seconds: Double { lock.withLock { Double(total.components.seconds) + Double(total.components.attoseconds) / 1e18 } }
}

/// `overHTTP`: the real client through URLSession to the server's sockets. Otherwise the
/// client's requests go straight to the emulator core in-process (no HTTP), which shows what
/// the emulator itself costs.
func run(label: String, dataDirectory: URL?, overHTTP: Bool = true) async throws {
    let server = try await EmulatorServer.start(EmulatorConfiguration(dataDirectory: dataDirectory, blobPort: 0, tablePort: 0))
    let transport: any HTTPTransport
    let coreClock = CoreClock()
    if overHTTP {
        transport = CurlTransport()
    } else {
        let core = try StorageEmulatorCore(configuration: EmulatorConfiguration(dataDirectory: nil))
        let blobOrigin = "http://127.0.0.1:\(server.blobPort)"
        transport = ClosureTransport { request in
            let start = ContinuousClock.now
            let reply = await core.respond(request, service: request.origin == blobOrigin ? .blob : .table)
            coreClock.add(ContinuousClock.now - start)
            guard case .response(let response) = reply else { throw CancellationError() }
            return response
        }
    }
    let tables = TableClient(account: server.account, transport: transport)
    let blobs = BlobClient(account: server.account, transport: transport)
    try await tables.createTable("events")
    try await blobs.createContainer("speakers", access: .container)

    // Entities shaped like SpeakEasy events, 100 to a batch, all in one partition as the app has them.
    let batches = (entityCount + 99) / 100
    var start = ContinuousClock.now
    try await bounded(batches) { b in
        let ops = (0..<min(100, entityCount - b * 100)).map { i -> TableBatchOperation in
            let n = b * 100 + i
            return .upsertReplace(
                TableEntity(
                    partitionKey: "Events", rowKey: String(format: "%08d-4c1e-5a0b-8d2f-%012d", n, n),
                    properties: [
                        "EventName": .string("Swift on Linux \(n % 6)"), "EventLocation": .string("Room \(n % 8)"),
                        "EventDate": .dateTime(EdmDateTime(year: 2026, month: 1 + n % 12, day: 1 + n % 28, hour: n % 24)),
                        "SpeakerKey": .string("speaker-\(n % 8)"), "EventDescription": .string(String(repeating: "A talk about things. ", count: 8)),
                    ]))
        }
        try await tables.submit(ops, to: "events")
    }
    let entitySeconds = seconds(since: start)

    let photo = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    start = ContinuousClock.now
    try await bounded(blobCount) { i in
        try await blobs.putBlob(photo, container: "speakers", name: "photo-\(i).jpg", options: BlobUploadOptions(contentType: "image/jpeg"))
    }
    let blobSeconds = seconds(since: start)

    // Read the partition back the way the app queries it.
    start = ContinuousClock.now
    var read = 0
    for try await page in tables.query("events", filter: .partition("Events")) { read += page.count }
    let querySeconds = seconds(since: start)
    await server.stop()

    print("== \(label), concurrency \(concurrency)")
    print(String(format: "  batch ingest:  %d entities in %.2f s = %.0f entities/s", entityCount, entitySeconds, Double(entityCount) / entitySeconds))
    print(
        String(
            format: "  blob upload:   %d x 64 KiB in %.2f s = %.0f blobs/s, %.1f MiB/s", blobCount, blobSeconds,
            Double(blobCount) / blobSeconds, Double(blobCount) / 16 / blobSeconds))
    print(String(format: "  query back:    %d entities in %.2f s = %.0f entities/s", read, querySeconds, Double(read) / querySeconds))
    if !overHTTP {
        print(String(format: "  time inside the emulator core: %.2f s of %.2f s", coreClock.seconds, entitySeconds + blobSeconds + querySeconds))
    }
    precondition(read == entityCount, "read \(read) of \(entityCount)")
}

let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("azseed-emulator-bench-\(UUID().uuidString)")
try await run(label: "on disk (\(scratch.path))", dataDirectory: scratch)
try? FileManager.default.removeItem(at: scratch)
try await run(label: "in memory", dataDirectory: nil)
try await run(label: "in memory, in-process without HTTP", dataDirectory: nil, overHTTP: false)
