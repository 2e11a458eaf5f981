import ArgumentParser
import AzureStorage
import Foundation
import SeedKit
import SeedRunner

/// The dataset flags every command that builds a desired state shares.
struct DatasetOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The dataset folder (holding dataset.yaml).", valueName: "dir"))
    var dataset: String?

    // Read as text, unconditionally: ArgumentParser would take `--seed -1` for a missing
    // value followed by a flag; validate() says what a seed is instead.
    @Option(
        name: .customLong("seed"), parsing: .unconditional, help: ArgumentHelp("The seed (0 to 2^64-1); default: the dataset's.", valueName: "seed"))
    var seedText: String?

    /// The seed given, checked by validate().
    var seed: UInt64? { seedText.flatMap { UInt64($0) } }

    @Option(help: "How many events to generate (the kind named 'event').")
    var events: Int?

    @Option(name: .customLong("count"), help: ArgumentHelp("How many entities of a kind to generate, as KIND=N (repeatable).", valueName: "kind=n"))
    var counts: [String] = []

    @Option(
        help: ArgumentHelp(
            "The reference time for the dataset's relative window (ISO 8601, or 'today' for this moment); default: the one the target's ledger recorded for the dataset's latest apply, else this moment. --seed, --events, --count and the window are reused the same way when not given; moving the time keeps the old window's entities unless --prune.",
            valueName: "iso8601|today"))
    var now: DateArgument?

    @Option(help: ArgumentHelp("Window start: YYYY-MM-DD (midnight UTC) or an ISO 8601 timestamp.", valueName: "date"))
    var from: DateArgument?

    @Option(help: ArgumentHelp("Window end (exclusive): YYYY-MM-DD or an ISO 8601 timestamp.", valueName: "date"))
    var to: DateArgument?

    @Option(help: "Public access of the dataset's containers: container, blob or private.")
    var access: PublicAccess?

    func validate() throws {
        if let seedText, UInt64(seedText) == nil {
            throw ValidationError("--seed \(seedText): the seed is 0 to 2^64-1, a whole number")
        }
        if let events, events < 1 { throw ValidationError("--events must be at least 1, not \(events)") }
        for (flag, date) in [("--from", from), ("--to", to)] where date?.isToday == true {
            throw ValidationError("\(flag) takes YYYY-MM-DD or an ISO 8601 timestamp; 'today' is for --now")
        }
        for (flag, date) in [("--now", now), ("--from", from), ("--to", to)] {
            if let date, !date.value.isInAzureRange && date.value != .endOfRange {
                throw ValidationError("\(flag) \(date.text) is outside Edm.DateTime's range (1601-01-01 to 9999-12-31)")
            }
        }
        _ = try parsedCounts()
    }

    /// Whether any flag that changes what is generated was given (not the dataset folder).
    var changesGeneration: Bool {
        seedText != nil || events != nil || !counts.isEmpty || now != nil || from != nil || to != nil || access != nil
    }

    func parsedCounts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        if let events { counts["event"] = events }
        for item in self.counts {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, let n = Int(parts[1]) else {
                throw ValidationError("--count takes KIND=N, not '\(item)'")
            }
            guard n >= 1 else { throw ValidationError("--count \(parts[0]) must be at least 1, not \(n)") }
            if let before = counts[parts[0]] {
                let first = parts[0] == "event" && events != nil ? "--events \(before)" : "--count \(parts[0])=\(before)"
                throw ValidationError("\(first) and --count \(item) both set how many \(parts[0]) entities to make; give one")
            }
            counts[parts[0]] = n
        }
        return counts
    }

    /// The dataset folder: `--dataset`, else the shipped SpeakEasy dataset.
    var datasetDirectory: URL {
        get throws {
            if let dataset { return URL(fileURLWithPath: dataset) }
            return try DatasetLocator.defaultDataset()
        }
    }

    /// The dataset and flags as a use case takes them.
    func request() throws -> DatasetRequest {
        var request = DatasetRequest(
            directory: try datasetDirectory, seed: seed, counts: try parsedCounts(), now: now?.value, from: from?.value, to: to?.value, access: access
        )
        request.migrations = try MigrationsFolder.resolve(migrations: nil, dataset: dataset)
        return request
    }

}

/// A `YYYY-MM-DD` or ISO 8601 flag value.
struct DateArgument: ExpressibleByArgument {
    var value: EdmDateTime
    /// As given, for messages.
    var text: String

    /// `today`: this moment, chosen explicitly (it moves a reference time the ledger recorded).
    var isToday: Bool { text.lowercased() == "today" }

    init?(argument: String) {
        text = argument
        if argument.lowercased() == "today" {
            value = EdmDateTime(unixSeconds: Int64(Date().timeIntervalSince1970))
            return
        }
        // Parsed here; Azure's range is checked in validate(), which can say why.
        guard let value = EdmDateTime(iso8601: argument) else { return nil }
        self.value = value
    }
}

extension PublicAccess: ExpressibleByArgument {}
