import AzureStorage
import Foundation
import SeedKit

/// What a run takes from the ledger's record of its dataset's latest apply (issue 47): every
/// generation input it was not given — the seed, the counts, the window — as Terraform takes
/// its state, so `azseed plan`, `apply` and `verify` with no flags mean "what was applied";
/// and, for each input it was given, whether it differs from what was recorded.
struct RecordedInputs {
    /// Taken from the record: the seed, the counts, the window (nil: given, or already the same).
    var seed: UInt64?
    var counts: [String: Int]?
    var window: ResolvedWindow?
    /// One line per input given that differs from the record ("recorded seed 7; this run uses 2012").
    var differences: [String] = []
    let record: ApplyRecord

    /// Compares `made` (the dataset made from the flags, at the reference time) with `record`.
    init(record: ApplyRecord, request: DatasetRequest, made: GeneratedDataset) {
        self.record = record
        let recordedGiven = record.given ?? []
        if let seed = request.seed {
            if seed != record.seed { differences.append("recorded seed \(record.seed); this run uses \(seed)") }
        } else if recordedGiven.contains("seed"), made.seed != record.seed {
            seed = record.seed
        }
        if !request.counts.isEmpty {
            if request.counts != record.counts {
                let recorded = record.counts.isEmpty ? "the recorded apply used the dataset's counts" : "recorded counts \(Self.text(record.counts))"
                differences.append("\(recorded); this run uses \(Self.text(request.counts))")
            }
        } else if record.given != nil, !record.counts.isEmpty {
            counts = record.counts
        }
        let windowGiven = request.now != nil || request.from != nil || request.to != nil
        if !windowGiven, recordedGiven.contains("window"), made.window != record.window {
            window = record.window
        } else if windowGiven, made.window != record.window, request.now == nil {
            // A move of --now is shown by the plan itself (``NowMove``).
            differences.append(
                "recorded window \(record.window.from.shortISO8601) to \(record.window.to.shortISO8601); this run uses \(made.window.from.shortISO8601) to \(made.window.to.shortISO8601)"
            )
        }
    }

    var reusesAny: Bool { seed != nil || counts != nil || window != nil }

    /// What the record of this run says came from flags: what this run was given, and what it
    /// took from the record (it came from flags then).
    static func given(request: DatasetRequest, reused: RecordedInputs?) -> Set<String> {
        var given: Set<String> = []
        if request.seed != nil || reused?.seed != nil { given.insert("seed") }
        if request.from != nil || request.to != nil || reused?.window != nil { given.insert("window") }
        return given
    }

    /// The options `made` was generated with, with the recorded inputs put in.
    func options(_ made: GeneratedDataset) -> GenerationOptions {
        var options = made.options
        if let seed { options.seed = seed }
        if let counts { options.counts = counts }
        if let window {
            options.now = record.now
            options.from = window.from
            options.to = window.to
        }
        return options
    }

    /// One line: what was taken (with the reference time, when that was taken too), from which
    /// apply, and how to choose otherwise.
    func note(now: EdmDateTime?) -> Phrase {
        var taken: [String] = []
        if let now { taken.append("now \(now.shortISO8601)") }
        if let seed { taken.append("seed \(seed)") }
        if let counts { taken.append("counts \(Self.text(counts))") }
        if let window { taken.append("window \(window.from.shortISO8601) to \(window.to.shortISO8601)") }
        return
            "\(taken.joined(separator: ", ")), as recorded by the apply of \(record.appliedAt.shortISO8601) in the target's ledger (flags given choose otherwise)"
    }

    static func text(_ counts: [String: Int]) -> String {
        counts.isEmpty
            ? "the dataset's"
            : counts.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    }
}
