// Generation benchmark: how fast SeedKit makes events, and the memory it needs.
//
//   swift run -c release generate-benchmark [events] [dataset-dir]
//
// "make" streams every entity of the desired state (what plan/apply consume) without
// serialising it; "make+encode" also renders each entity as its snapshot JSON line.
import AzureStorage
import Foundation
import SeedKit

let arguments = CommandLine.arguments
let events = arguments.count > 1 ? Int(arguments[1])! : 1_000_000
let datasetDirectory = arguments.count > 2 ? URL(fileURLWithPath: arguments[2]) : try DatasetLocator.defaultDataset()

func peakResidentMiB() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

let dataset = try Dataset.load(directory: datasetDirectory)
let options = GenerationOptions(
    seed: 42, counts: ["event": events], now: EdmDateTime(iso8601: "2026-11-21")!,
    from: EdmDateTime(iso8601: "2026-01-01"), to: EdmDateTime(iso8601: "2027-01-01"))

let modes = ProcessInfo.processInfo.environment["GENERATE_MODES"].map { $0.split(separator: ",").map(String.init) } ?? ["make", "make+encode"]
for mode in modes {
    let state = try GeneratedDataset.make(dataset, options: options)
    let start = DispatchTime.now().uptimeNanoseconds
    var count = 0
    var bytes = 0
    var line: [UInt8] = []
    line.reserveCapacity(4096)
    for table in state.tables {
        try table.forEachEntity { entity in
            count += 1
            if mode == "make+encode" {
                line.removeAll(keepingCapacity: true)
                EntityJSONEncoder.append(
                    partitionKey: entity.partitionKey, rowKey: entity.rowKey, names: entity.names, values: entity.values, to: &line)
                bytes += line.count + 1
            }
        }
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let rate = Double(count) / seconds
    print(
        String(
            format: "%-12@ %9d entities in %6.3f s = %10.0f entities/s, %7.1f MB of JSON, peak RSS %6.1f MiB",
            mode as NSString, count, seconds, rate, Double(bytes) / 1e6, peakResidentMiB()))
}
