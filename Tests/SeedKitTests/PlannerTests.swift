import AzseedTestSupport
import AzureStorage
import Foundation
import Testing

@testable import SeedKit

/// The pure planner: desired state against observed states built by hand.
@Suite struct PlannerTests {
    static func desired(events: Int = 40) throws -> GeneratedDataset {
        try GeneratedDataset.make(try Dataset.load(directory: TestSupport.speakeasy), options: TestSupport.options(events: events))
    }

    static func header(_ desired: GeneratedDataset, prune: Bool = false) -> PlanHeader {
        PlanHeader(
            target: PlanTarget(
                account: "devstoreaccount1", blobEndpoint: "http://127.0.0.1:10000/devstoreaccount1",
                tableEndpoint: "http://127.0.0.1:10002/devstoreaccount1"),
            dataset: desired.dataset.name, datasetDirectory: desired.dataset.directory.path, seed: desired.seed,
            window: desired.window, counts: ["event": 40], access: nil, prune: prune)
    }

    /// The target exactly as the dataset wants it.
    static func seeded(_ desired: GeneratedDataset) throws -> ObservedState {
        var observed = ObservedState()
        for container in desired.containers {
            var found = ObservedContainer(access: container.access)
            for blob in container.blobs {
                found.blobs[ExactString(blob.name)] = ObservedBlob(
                    name: blob.name, size: blob.size, md5: blob.md5Base64, contentType: blob.contentType)
            }
            observed.containers[container.name] = found
        }
        for table in desired.tables {
            var found = ObservedTable()
            try table.forEachEntity { found.add($0.tableEntity) }
            observed.tables[table.name] = found
        }
        return observed
    }

    @Test func anEmptyTargetGetsEverythingCreated() async throws {
        let desired = try Self.desired()
        let plan = try await Planner.plan(desired: desired.storage, observed: ObservedState(), header: Self.header(desired))
        #expect(plan.summary == PlanSummary(create: 1 + 8 + 1 + 8 + 40))
        #expect(plan.containers.map(\.change) == [.create])
        // Referenced kinds come first: speakers are written before the events naming them.
        #expect(plan.entities.first?.kind == "speaker")
        #expect(plan.entities.last?.kind == "event")
        #expect(plan.entities.allSatisfy { $0.change == .create && $0.entity != nil })
    }

    @Test func aSeededTargetHasNoChangesAndTheSameDigests() async throws {
        let desired = try Self.desired()
        let observed = try Self.seeded(desired)
        let plan = try await Planner.plan(desired: desired.storage, observed: observed, header: Self.header(desired))
        #expect(plan.isEmpty)
        #expect(plan.summary.unchanged == 1 + 8 + 1 + 48)
        #expect(plan.entities.isEmpty)
        let again = try await Planner.plan(desired: desired.storage, observed: observed, header: Self.header(desired))
        #expect(again.header.desiredDigest == plan.header.desiredDigest)
        #expect(again.header.observedDigest == plan.header.observedDigest)
    }

    @Test func oneChangedFieldIsOneUpdateNamingTheField() async throws {
        let desired = try Self.desired()
        var observed = try Self.seeded(desired)
        let partition = observed.tables["events"]!.partitions["Events"]!
        let rowKey = partition.keys.sorted()[3]
        var changed = partition[rowKey]!
        let wanted = changed["EventName"]!
        changed["EventName"] = .string("Renamed")
        changed["Extra"] = .int32(1)
        observed.tables["events"]!.add(changed)
        let plan = try await Planner.plan(desired: desired.storage, observed: observed, header: Self.header(desired))
        #expect(plan.summary == PlanSummary(update: 1, unchanged: 1 + 8 + 1 + 47))
        let update = try #require(plan.entities.first)
        #expect(update.rowKey == rowKey.string)
        #expect(
            update.changes == [
                PropertyChange(name: "EventName", from: .string("Renamed"), to: wanted),
                PropertyChange(name: "Extra", from: .int32(1), to: nil),
            ])
        #expect(Planner.observedDigest(observed) != Planner.observedDigest(try Self.seeded(desired)))
    }

    @Test func aWholeDoubleReadBackAsAnIntegerIsTheSameValue() {
        #expect(EntityMerge.same(.double(2), .int32(2)))
        #expect(EntityMerge.same(.double(2), .int64(2)))
        #expect(!EntityMerge.same(.double(2.5), .int32(2)))
        #expect(!EntityMerge.same(.int32(2), .double(2)))
        #expect(!EntityMerge.same(.string("2"), .int32(2)))
    }

    /// The original program's data: every RowKey a random GUID, events pointing at the
    /// speakers' random keys.
    @Test func foreignRowKeysAreRecognisedByNaturalKey() async throws {
        let desired = try Self.desired()
        let seeded = try Self.seeded(desired)
        var foreign: [String: String] = [:]
        var table = ObservedTable()
        for (_, speaker) in seeded.tables["events"]!.partitions["speakers"]! {
            var copy = speaker
            copy.rowKey = UUID().uuidString.lowercased()
            foreign[speaker.rowKey] = copy.rowKey
            table.add(copy)
        }
        for (_, event) in seeded.tables["events"]!.partitions["Events"]! {
            var copy = event
            copy.rowKey = UUID().uuidString.lowercased()
            copy["SpeakerKey"] = .string(foreign[event["SpeakerKey"]!.text]!)
            table.add(copy)
        }
        var observed = seeded
        observed.tables["events"] = table
        let plan = try await Planner.plan(desired: desired.storage, observed: observed, header: Self.header(desired, prune: true))
        #expect(plan.summary.create == 0 && plan.summary.update == 0 && plan.summary.delete == 0)
        #expect(plan.entities.count == 48)
        #expect(plan.entities.allSatisfy { $0.change == .unchanged && $0.desiredRowKey != nil && $0.desiredRowKey != $0.rowKey })
    }

    @Test func newEventsPointAtSpeakersKeptUnderForeignKeys() async throws {
        let desired = try Self.desired()
        var observed = ObservedState()
        var table = ObservedTable()
        var kept: Set<String> = []
        for (_, speaker) in try Self.seeded(desired).tables["events"]!.partitions["speakers"]! {
            var copy = speaker
            copy.rowKey = UUID().uuidString.lowercased()
            kept.insert(copy.rowKey)
            table.add(copy)
        }
        observed.tables["events"] = table
        let plan = try await Planner.plan(desired: desired.storage, observed: observed, header: Self.header(desired))
        let events = plan.entities.filter { $0.kind == "event" }
        #expect(events.count == 40 && events.allSatisfy { $0.change == .create })
        #expect(events.allSatisfy { kept.contains($0.entity!["SpeakerKey"]!.text) })
    }

    @Test func pruneDeletesOnlyInsideTheDatasetsPartitionsAndContainers() async throws {
        let desired = try Self.desired()
        var observed = try Self.seeded(desired)
        observed.tables["events"]!.add(TableEntity(partitionKey: "Events", rowKey: "stray"))
        observed.tables["events"]!.add(TableEntity(partitionKey: "other", rowKey: "keep"))
        observed.containers["speakers"]!.blobs["notes.txt"] = ObservedBlob(name: "notes.txt", size: 5, md5: "x", contentType: "text/plain")

        let kept = try await Planner.plan(desired: desired.storage, observed: observed, header: Self.header(desired))
        #expect(kept.isEmpty)
        #expect(kept.extraEntities == ["events": 1] && kept.extraBlobs == ["speakers": 1])

        let pruned = try await Planner.plan(desired: desired.storage, observed: observed, header: Self.header(desired, prune: true))
        #expect(pruned.summary.delete == 2)
        #expect(pruned.entityDeletes.map(\.rowKey) == ["stray"])
        #expect(pruned.blobs.filter { $0.change == .delete }.map(\.name) == ["notes.txt"])

        let reset = Planner.resetPlan(desired: desired.storage, observed: observed, header: Self.header(desired))
        #expect(reset.entityDeletes.count == 49 && reset.blobs.count == 8)
        #expect(!reset.entityDeletes.contains { $0.partitionKey == "other" })
    }

    @Test func blobAndContainerDifferencesAreUpdates() async throws {
        let desired = try Self.desired()
        var observed = try Self.seeded(desired)
        observed.containers["speakers"]!.access = .private
        observed.containers["speakers"]!.blobs["BJohnson.jpg"]!.md5 = "AAAAAAAAAAAAAAAAAAAAAA=="
        observed.containers["speakers"]!.blobs["CJones.jpg"]!.contentType = "application/octet-stream"
        let plan = try await Planner.plan(desired: desired.storage, observed: observed, header: Self.header(desired))
        #expect(plan.containers == [ContainerAction(name: "speakers", change: .update, access: .container, currentAccess: .private)])
        let updates = plan.blobs.filter { $0.change == .update }
        #expect(updates.map(\.name) == ["BJohnson.jpg", "CJones.jpg"])
        #expect(updates.map(\.reasons) == [["md5"], ["contentType"]])
        let text = PlanTextRenderer().render(plan)
        #expect(text.contains("~ container speakers: access private -> container"))
        #expect(text.hasSuffix("Plan: 0 to create, 3 to update, 0 to delete, 55 unchanged.\n"))
    }

    @Test func aSavedPlanHeaderReadsBackExactly() async throws {
        let desired = try Self.desired()
        var header = Self.header(desired, prune: true)
        header.access = .blob
        let plan = try await Planner.plan(desired: desired.storage, observed: ObservedState(), header: header)
        let file = try Scratch.folder().appendingPathComponent("plan.json")
        try Data(plan.json().pretty().utf8).write(to: file)
        #expect(try PlanHeader.read(contentsOf: file) == plan.header)
    }

    /// `--out` and `--output json` write the document an action at a time: the same bytes.
    @Test func theStreamedJSONIsTheSameDocument() async throws {
        let desired = try Self.desired()
        let empty = DesiredStorage(containers: [], tables: [], groups: [])
        for (storage, observed) in [(desired.storage, ObservedState()), (desired.storage, try Self.seeded(desired)), (empty, ObservedState())] {
            let plan = try await Planner.plan(desired: storage, observed: observed, header: Self.header(desired, prune: true))
            var bytes: [UInt8] = []
            plan.writeJSON { bytes += $0 }
            #expect(String(decoding: bytes, as: UTF8.self) == plan.json().pretty())
        }
    }

    @Test func theTextDiffListsAFewCreatesPerKindAndCountsTheRest() async throws {
        let desired = try Self.desired()
        let plan = try await Planner.plan(desired: desired.storage, observed: ObservedState(), header: Self.header(desired))
        let text = PlanTextRenderer(colour: false, listLimit: 5).render(plan)
        #expect(text.contains("+ … and 35 more event entities in events to create"))
        #expect(text.contains("+ … and 3 more speaker entities in events to create"))
        #expect(!text.contains("\u{1B}["))
        #expect(PlanTextRenderer(colour: true).render(plan).contains("\u{1B}[32m  +\u{1B}[0m"))
    }
}

extension PlanSummary {
    init(create: Int = 0, update: Int = 0, delete: Int = 0, unchanged: Int = 0) {
        self.init()
        self.create = create
        self.update = update
        self.delete = delete
        self.unchanged = unchanged
    }
}
