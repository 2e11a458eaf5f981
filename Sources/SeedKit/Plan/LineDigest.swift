import Crypto
import StorageProtocol

/// SHA-256 of a sequence of lines — an entity as its JSON (``EntityJSONEncoder``) followed by
/// a newline, or bytes given whole — hashed in their order on another thread, a chunk at a
/// time, while the caller goes on making the next ones. The digest is the one hashing each
/// line in place gives (a property test holds the two together).
///
/// Why: the desired state's digest (encoding each entity's JSON, then SHA-256) was a third of
/// the CPU of apply's first pass, the part the service waits for, while that pass used about
/// 1.2 of the machine's 2 cores (Benchmarks/RESULTS.md, issue 51).
///
/// A chunk is handed off at `chunkSize` lines or `chunkBytes` of entity values, whichever
/// comes first, and at most `maxInFlight` chunks wait or run at once: adding to a full
/// pipeline suspends the caller (never blocks its thread) until the oldest chunk is hashed.
/// So the entities held are at most `(maxInFlight + 1) × chunkBytes` and one entity more
/// (an attacker's review: 256 entities of 480 KB each held 300 MB when chunks were counted in
/// lines alone), and each chunk's JSON is hashed 64 KiB at a time. Used by one task at a time.
final class LineDigest {
    private enum Line: Sendable {
        case entity(TableEntity)
        case bytes([UInt8])
    }

    private let chunkSize: Int
    private let chunkBytes: Int
    private let maxInFlight: Int
    private var chunk: [Line] = []
    /// The values' bytes of the entities in `chunk`, about (``TableEntity/approximateBytes``).
    private var bytesInChunk = 0
    /// Encoded JSON is hashed whenever this much has built up.
    private static let hashStep = 65_536
    /// The chunks handed off, oldest first; each one's task hashes after the one before it and
    /// returns the hash state so far. Once a chunk is handed off it is never empty: the last
    /// one is what the next follows and what ``finalize()`` awaits.
    private var inFlight: [Task<SHA256, Never>] = []

    /// `chunkSize` lines or `chunkBytes` of entities are handed off together; `maxInFlight`
    /// chunks at most are pending.
    init(chunkSize: Int = 256, chunkBytes: Int = 262_144, maxInFlight: Int = 4) {
        self.chunkSize = max(1, chunkSize)
        self.chunkBytes = max(1, chunkBytes)
        self.maxInFlight = max(1, maxInFlight)
        chunk.reserveCapacity(self.chunkSize)
    }

    /// Adds `bytes` as they are (a line of the containers or tables, with its newline).
    func add(_ bytes: [UInt8]) {
        chunk.append(.bytes(bytes))
    }

    /// Adds an entity's JSON and a newline.
    func add(_ entity: TableEntity) async {
        chunk.append(.entity(entity))
        bytesInChunk += entity.approximateBytes
        if chunk.count >= chunkSize || bytesInChunk >= chunkBytes { await handOff() }
    }

    /// The digest of every line added, once all are hashed. Fewer lines than a chunk are
    /// hashed here, with no other thread: a small partition costs what it did in place.
    func finalize() async -> SHA256.Digest {
        if inFlight.isEmpty {
            var state = SHA256()
            Self.hash(chunk, into: &state)
            chunk = []
            bytesInChunk = 0
            return state.finalize()
        }
        if !chunk.isEmpty { await handOff() }
        return await inFlight[inFlight.count - 1].value.finalize()
    }

    private static func hash(_ lines: [Line], into state: inout SHA256) {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(hashStep + 4_096)
        for line in lines {
            switch line {
            case .entity(let entity):
                EntityJSONEncoder.append(entity, to: &buffer)
                buffer.append(UInt8(ascii: "\n"))
            case .bytes(let bytes):
                buffer.append(contentsOf: bytes)
            }
            if buffer.count >= hashStep {
                state.update(data: buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        state.update(data: buffer)
    }

    private func handOff() async {
        // Taken before the window drops its oldest: with one chunk in flight, that is the one.
        let previous = inFlight.last
        if inFlight.count >= maxInFlight { _ = await inFlight.removeFirst().value }
        let lines = chunk
        chunk = []
        chunk.reserveCapacity(chunkSize)
        bytesInChunk = 0
        let task = Task {
            var state = await previous?.value ?? SHA256()
            LineDigest.hash(lines, into: &state)
            return state
        }
        inFlight.append(task)
    }
}

extension TableEntity {
    /// The bytes its keys, names and values hold (a number as 8), counted without encoding it:
    /// what the digest's chunks and a text plan's budget are bounded by.
    var approximateBytes: Int {
        var bytes = partitionKey.utf8.count + rowKey.utf8.count
        for (name, value) in properties {
            bytes += name.utf8.count
            switch value {
            case .string(let text): bytes += text.utf8.count
            case .binary(let data): bytes += data.count
            default: bytes += 8
            }
        }
        return bytes
    }
}
