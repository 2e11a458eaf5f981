import AzseedTestSupport
import Foundation
import PropertyBased
import SeedKit
import SeedRunner
import Testing

@testable import AzureStorage
@testable import StorageProtocol

/// The ledger keeps "run it again and nothing changes" true on any day (issue 29, item 2):
/// SpeakEasy's window is relative to today, so without a recorded reference time a plan
/// the day after an apply wanted 100 new events.
@Suite struct LedgerTests {
    static let speakeasy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Seeds/speakeasy")
    static let day1 = EdmDateTime(iso8601: "2026-11-25T09:30:00Z")!
    /// A day and a few hours later: the window of a relative dataset has moved.
    static let day2 = EdmDateTime(iso8601: "2026-11-26T14:00:00Z")!

    /// The dataset as the CLI prepares it before opening the target: at `--now` or at the clock.
    static func prepared(clock: EdmDateTime) throws -> GeneratedDataset {
        try GeneratedDataset.make(try Dataset.load(directory: speakeasy), options: GenerationOptions(counts: ["event": 20], now: clock))
    }

    /// Plans at the target's reference time and applies, recording the apply first.
    static func apply(clock: EdmDateTime, requested: Bool, in session: StorageSession) async throws -> Plan {
        let (desired, reference) = try await session.atReferenceTime(try prepared(clock: clock), requested: requested)
        let plan = try await session.plan(desired, counts: ["event": 20], access: nil, prune: false, digests: true)
        try await session.recordApply(plan, reference: reference, tool: "azseed test", appliedAt: clock)
        _ = try await session.run.execute(plan, concurrency: 4)
        return plan
    }

    @Test func aPlanOnTheNextDayReusesTheRecordedNowAndFindsNoChanges() async throws {
        try await TestEmulator.withRunning { server in
            let session = try await StorageSession.open(.account(server.account), command: "LedgerTests")
            let first = try await Self.apply(clock: Self.day1, requested: false, in: session)
            #expect(first.summary.create == 1 + 8 + 1 + 8 + 20)

            // What main did: the next day's clock moves the window, and the plan wants new events.
            let naive = try await session.plan(try Self.prepared(clock: Self.day2), counts: ["event": 20], access: nil, prune: false, digests: false)
            #expect(naive.summary.create == 20)

            // With the ledger: the recorded reference time, so nothing to do.
            let (desired, reference) = try await session.atReferenceTime(try Self.prepared(clock: Self.day2), requested: false)
            #expect(reference.source == .recorded && reference.value == Self.day1 && reference.move == nil)
            #expect(reference.note?.description.contains("as recorded by the apply of 2026-11-25") == true)
            let plan = try await session.plan(desired, counts: ["event": 20], access: nil, prune: false, digests: false)
            #expect(plan.isEmpty && plan.header.now == Self.day1)
        }
    }

    @Test func nowMovesTheReferenceTimeAndThePlanShowsTheMove() async throws {
        try await TestEmulator.withRunning { server in
            let session = try await StorageSession.open(.account(server.account), command: "LedgerTests")
            _ = try await Self.apply(clock: Self.day1, requested: false, in: session)
            let (desired, reference) = try await session.atReferenceTime(try Self.prepared(clock: Self.day2), requested: true)
            var plan = try await session.plan(desired, counts: ["event": 20], access: nil, prune: false, digests: false)
            plan.header.nowMove = reference.move
            #expect(
                reference.move
                    == NowMove(
                        from: Self.day1,
                        fromWindow: ResolvedWindow(from: EdmDateTime(iso8601: "2026-11-25")!, to: EdmDateTime(iso8601: "2027-05-24")!),
                        to: Self.day2, recordedAt: Self.day1))
            #expect(PlanTextRenderer().render(plan).contains("~ now 2026-11-25T09:30:00Z -> 2026-11-26T14:00:00Z"))

            // Applied with the move, the next plan (on a later clock still) keeps the new time.
            _ = try await Self.apply(clock: Self.day2, requested: true, in: session)
            let later = EdmDateTime(iso8601: "2026-12-24T08:00:00Z")!
            let (again, recorded) = try await session.atReferenceTime(try Self.prepared(clock: later), requested: false)
            #expect(recorded.value == Self.day2)
            #expect(try await session.plan(again, counts: ["event": 20], access: nil, prune: false, digests: false).isEmpty)
        }
    }

    @Test func anApplyThatChangesNothingLeavesTheLedgerAsItWas() async throws {
        try await TestEmulator.withRunning { server in
            let session = try await StorageSession.open(.account(server.account), command: "LedgerTests")
            _ = try await Self.apply(clock: Self.day1, requested: false, in: session)
            let key = ApplyRecord.rowKey(dataset: "speakeasy")
            let before = try await session.run.tables.get(partitionKey: ApplyRecord.partition, rowKey: key, from: ReservedNames.ledgerTable)
            let plan = try await Self.apply(clock: Self.day2, requested: false, in: session)
            #expect(plan.isEmpty)
            let after = try await session.run.tables.get(partitionKey: ApplyRecord.partition, rowKey: key, from: ReservedNames.ledgerTable)
            #expect(before?.etag != nil && before?.etag == after?.etag)
        }
    }

    /// Dataset names of any characters (the ledger's RowKey encodes the ones keys refuse)
    /// make one record each that reads back exactly, through the emulator.
    @Test func aRecordOfAnyDatasetNameReadsBackExactly() async throws {
        let scalars: [Unicode.Scalar] = Array("/\\#?%\u{0}\u{1F}\u{7F}\u{85}\u{2028} aZ0_.-'\"e\u{301}\u{E9}\u{1F600}".unicodeScalars)
        let names = Gen.element(of: scalars).array(of: 1...40).map { picked in
            var s = String.UnicodeScalarView()
            s.append(contentsOf: picked.compactMap { $0 })
            return String(s)
        }
        try await TestEmulator.withRunning { server in
            let ledger = Ledger(tables: TableClient(account: server.account))
            await propertyCheck(count: 60, input: names, Gen.uint64(in: 0...UInt64.max)) { name, seed in
                let record = ApplyRecord(
                    dataset: name, desiredDigest: "abc", seed: seed, now: Self.day1,
                    window: ResolvedWindow(from: Self.day1, to: Self.day2), counts: ["event": 3, "speaker": 2],
                    shard: Shard(index: 1, count: 3), tool: "azseed test", appliedAt: Self.day2)
                _ = try await ledger.write(record)
                let (read, _) = try await ledger.applyRecord(dataset: name)
                #expect(read == record, "\(name.debugDescription)")
            }
            // NFC and NFD spellings of one name are two datasets, as Azure compares keys.
            let (nfd, _) = try await ledger.applyRecord(dataset: "Cafe\u{301}")
            let nfc = ApplyRecord(
                dataset: "Caf\u{E9}", desiredDigest: "", seed: 1, now: Self.day1, window: ResolvedWindow(from: Self.day1, to: Self.day2),
                counts: [:], shard: nil, tool: "t", appliedAt: Self.day1)
            _ = try await ledger.write(nfc)
            let (nfdAfter, _) = try await ledger.applyRecord(dataset: "Cafe\u{301}")
            #expect(nfd == nil && nfdAfter == nil)
        }
    }

    /// The ledger lives in the target: a record someone edited is refused in one line that
    /// says what to do, never misread.
    @Test func aDamagedRecordIsRefusedInOneLine() async throws {
        try await TestEmulator.withRunning { server in
            let tables = TableClient(account: server.account)
            _ = try await tables.ensureTable(ReservedNames.ledgerTable)
            let ledger = Ledger(tables: tables)
            for (name, value) in [
                ("Now", EdmValue.string("yesterday")), ("Schema", .int32(99)), ("Schema", .int32(0)), ("Schema", .int32(-7)),
                ("Seed", .string("-1")), ("Seed", .string("+5")), ("Counts", .string("event=0")), ("Counts", .string("event=5,event=6")),
            ] {
                var entity = ApplyRecord(
                    dataset: "speakeasy", desiredDigest: "", seed: 1, now: Self.day1, window: ResolvedWindow(from: Self.day1, to: Self.day2),
                    counts: [:], shard: nil, tool: "t", appliedAt: Self.day1
                ).entity
                entity.properties[name] = value
                _ = try await tables.upsert(entity, into: ReservedNames.ledgerTable)
                do {
                    _ = try await ledger.applyRecord(dataset: "speakeasy")
                    Issue.record("a record with \(name) = \(value) was accepted")
                } catch let error as LedgerRecordDamaged {
                    #expect(!error.description.contains("\n") && error.phrase.settings.contains(.referenceTime), "\(error)")
                }
            }
        }
    }

    /// A credential that cannot reach the ledger's table (a table SAS for another table, or
    /// an Entra role scoped to one table) gives `.unavailable`, not a failed run: the apply
    /// goes on at the clock's time, as it did before the ledger, and says so.
    @Test func aCredentialWithoutTheLedgerGivesUnavailable() async throws {
        try await TestEmulator.withRunning { server in
            let owner = TableClient(account: server.account)
            try await owner.createTable("events")
            _ = try await owner.ensureTable(ReservedNames.ledgerTable)
            guard case .sharedKey(let key) = server.account.credential else {
                Issue.record("the test emulator has no key")
                return
            }
            // A table service SAS for `events` only (sv 2019-02-02's string to sign).
            let expiry = ServiceSAS.time(Date().addingTimeInterval(3600))
            let fields = ["raud", "", expiry, "/table/\(server.account.name)/events", "", "", "", "2019-02-02", "", "", "", ""]
            let signature = SharedKeySigner(account: server.account.name, key: key).signature(fields.joined(separator: "\n"))
            let token = try #require(
                SASToken("sv=2019-02-02&tn=events&sp=raud&se=\(PercentEncoding.component(expiry))&sig=\(PercentEncoding.component(signature))"))
            let scoped = TableClient(
                account: StorageAccount(
                    name: server.account.name, credential: .sas(token), blobEndpoint: server.account.blobEndpoint,
                    tableEndpoint: server.account.tableEndpoint))
            // The SAS works for its table: the refusal below is the ledger's, not a bad signature.
            _ = try await scoped.upsert(TableEntity(partitionKey: "p", rowKey: "r"), into: "events")

            let ledger = Ledger(tables: scoped)
            let (record, access) = try await ledger.applyRecord(dataset: "speakeasy")
            guard case .unavailable(let why) = access else {
                Issue.record("read: \(access)")
                return
            }
            #expect(record == nil && why.contains(ReservedNames.ledgerTable))
            let written = try await ledger.write(
                ApplyRecord(
                    dataset: "speakeasy", desiredDigest: "", seed: 1, now: Self.day1,
                    window: ResolvedWindow(from: Self.day1, to: Self.day2), counts: [:], shard: nil, tool: "t",
                    appliedAt: Self.day1))
            guard case .unavailable = written else {
                Issue.record("write: \(written)")
                return
            }
            #expect(try await owner.get(partitionKey: ApplyRecord.partition, rowKey: "speakeasy", from: ReservedNames.ledgerTable) == nil)
        }
    }

    /// From an attacker's review: a damaged record blocked even `--now` (the advice the error
    /// gave); a recorded time whose window overflows was reported as a usage error of flags
    /// never given; and shards applying in turn rewrote the record on every no-op run.
    @Test func nowReplacesADamagedRecordAndAnImpossibleRecordedTimeIsDamage() async throws {
        try await TestEmulator.withRunning { server in
            let session = try await StorageSession.open(.account(server.account), command: "LedgerTests")
            _ = try await Self.apply(clock: Self.day1, requested: false, in: session)
            let key = ApplyRecord.rowKey(dataset: "speakeasy")
            var entity = try #require(
                try await session.run.tables.get(partitionKey: ApplyRecord.partition, rowKey: key, from: ReservedNames.ledgerTable)
            ).entity
            entity.properties["Now"] = .string("yesterday")
            _ = try await session.run.tables.upsert(entity, into: ReservedNames.ledgerTable)

            await #expect(throws: LedgerRecordDamaged.self) {
                _ = try await session.atReferenceTime(try Self.prepared(clock: Self.day2), requested: false)
            }
            let (_, reference) = try await session.atReferenceTime(try Self.prepared(clock: Self.day2), requested: true)
            #expect(
                reference.replaces != nil && reference.note?.description.contains("is used instead") == true
                    && reference.note?.settings.last == .referenceTime)
            _ = try await Self.apply(clock: Self.day2, requested: true, in: session)
            let (_, healed) = try await session.atReferenceTime(try Self.prepared(clock: Self.day2), requested: false)
            #expect(healed.source == .recorded && healed.value == Self.day2)

            entity.properties["Now"] = .dateTime(EdmDateTime(iso8601: "9999-12-31T23:59:59Z")!)
            _ = try await session.run.tables.upsert(entity, into: ReservedNames.ledgerTable)
            do {
                _ = try await session.atReferenceTime(try Self.prepared(clock: Self.day2), requested: false)
                Issue.record("a recorded time with no window was accepted")
            } catch let error as LedgerRecordDamaged {
                #expect(error.description.contains("gives no window"), "\(error)")
            }
        }
    }

    @Test func shardsApplyingInTurnLeaveTheRecordAsItWas() async throws {
        try await TestEmulator.withRunning { server in
            let whole = try await StorageSession.open(.account(server.account), command: "LedgerTests")
            _ = try await Self.apply(clock: Self.day1, requested: false, in: whole)
            let key = ApplyRecord.rowKey(dataset: "speakeasy")
            let before = try await whole.run.tables.get(partitionKey: ApplyRecord.partition, rowKey: key, from: ReservedNames.ledgerTable)
            for index in [0, 1, 0, 1] {
                let shard = try await StorageSession.open(.account(server.account), command: "LedgerTests", shard: Shard(index: index, count: 2))
                #expect(try await Self.apply(clock: Self.day2, requested: false, in: shard).isEmpty)
            }
            let after = try await whole.run.tables.get(partitionKey: ApplyRecord.partition, rowKey: key, from: ReservedNames.ledgerTable)
            #expect(before?.etag != nil && before?.etag == after?.etag)
        }
    }
}
