import AzseedTestSupport
import AzureStorage
import Foundation
import Testing

@testable import SeedKit

/// What `scan` infers from an account shaped like a real one (devices and their readings, two
/// country partitions, a partition of hostile values) generates the same shape again: unique
/// columns unique, a sequence exact at any step, each date column in its own observed range,
/// doubles with the decimals seen, partition names as they are, hostile values byte for byte.
@Suite final class ScanFidelityTests {
    /// The fidelity report of the last ``regenerate(_:copyValues:sample:)``.
    var lastReport: FidelityReport?

    static let day = EdmDateTime.ticksPerDay
    static let minute = EdmDateTime.ticksPerMinute

    /// The account, made here (not by azseed's generator).
    static func account() -> [TableEntity] {
        var random = SeedRandom(seed: 99)
        var out: [TableEntity] = []
        let colours = ["red", "green", "blue", "amber", "violet"]
        var names: [String] = []
        for i in 0..<40 {
            let name = "device-\(colours[i % 5])-\(i)"
            names.append(name)
            var e = TableEntity(partitionKey: "devices", rowKey: UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", i))!.uuidString)
            e["Name"] = .string(name)
            e["Email"] = .string("\(name)@fleet.example")
            e["Installed"] = .dateTime(EdmDateTime(ticks: EdmDateTime(iso8601: "2021-03-01")!.ticks + Int64(i * 3) * day))
            e["Firmware"] = .string(["1.0", "1.1", "2.0"][i % 3])
            e["Badge"] = .int32(Int32(1000 + i * 37))
            out.append(e)
        }
        for i in 0..<600 {
            var e = TableEntity(partitionKey: "readings", rowKey: String(format: "r%05d", i))
            e["Seq"] = .int64(Int64(10 + 10 * i))
            e["ReadAt"] = .dateTime(EdmDateTime(ticks: EdmDateTime(iso8601: "2026-01-01")!.ticks + Int64(random.below(58 * 24 * 60)) * minute))
            e["Value"] = .double(Double(random.below(100_000)) / 100)
            let device = Int(random.below(40))
            e["Device"] = .string(names[device])
            e["DeviceId"] = .string(out[device].rowKey)
            e["Message"] = .string("Reading from \(names[device])")
            // Serviced within 30 days after the device was installed.
            if case .dateTime(let installed)? = out[device]["Installed"] {
                e["Serviced"] = .dateTime(EdmDateTime(ticks: installed.ticks + Int64(random.below(30 * 24)) * 3600 * EdmDateTime.ticksPerSecond))
            }
            out.append(e)
        }
        for country in ["NO", "SE"] {
            for i in 0..<10 {
                var e = TableEntity(partitionKey: country, rowKey: "\(country)\(i)")
                e["Count"] = .int32(Int32(random.below(50)))
                out.append(e)
            }
        }
        return out
    }

    /// Scanned (sampling `sample` entities a partition), written, loaded and generated again.
    func regenerate(_ entities: [TableEntity], copyValues: Bool, sample: Int = 20) throws -> (yaml: String, entities: [GeneratedEntity]) {
        var byPartition: [String: PartitionObservation] = [:]
        for e in entities {
            byPartition[e.partitionKey, default: PartitionObservation(table: "telemetry", partition: e.partitionKey, sampleSize: sample)].observe(e)
        }
        let input = ScanInput(
            name: "fleet", source: "test", blobEndpoint: "", containers: [], partitions: Array(byPartition.values), sample: sample,
            copiedBlobs: false, copyValues: copyValues)
        let inferred = DatasetInference.infer(input)
        let folder = try Scratch.folder("fidelity")
        try Data(inferred.yaml.utf8).write(to: folder.appendingPathComponent("dataset.yaml"))
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("templates"), withIntermediateDirectories: true)
        for (name, text) in inferred.templates { try Data(text.utf8).write(to: folder.appendingPathComponent("templates/\(name)")) }
        let dataset = try Dataset.load(directory: folder)
        let made = try GeneratedDataset.make(dataset, options: GenerationOptions(now: EdmDateTime(iso8601: "2026-11-26")!))
        lastReport = try FidelityReport.compare(inferred.kinds, with: dataset, now: EdmDateTime(iso8601: "2026-11-26")!, copyValues: copyValues)
        return (inferred.yaml, try TestSupport.entities(made.tables[0]))
    }

    @Test(arguments: [true, false]) func theRegeneratedAccountHasTheScannedShape(copyValues: Bool) throws {
        let account = Self.account()
        // Copying values, unique text stays unique when the sample holds every value (the summary
        // says to raise it otherwise); not copying, it is numbered text.
        let (yaml, made) = try regenerate(account, copyValues: copyValues, sample: copyValues ? 40 : 20)
        let devices = made.filter { $0.partitionKey == "devices" }
        let readings = made.filter { $0.partitionKey == "readings" }
        #expect(devices.count == 40 && readings.count == 600, "\(yaml)")
        // Unique columns stay unique.
        for name in ["Name", "Email", "Badge", "Installed"] {
            #expect(Set(devices.compactMap { $0[name] }.map(\.text)).count == 40, "\(name)\n\(yaml)")
        }
        // A sequence of step 10 is exactly the values seen (from 1 when values are not copied:
        // its first value is one entity's).
        let start: Int64 = copyValues ? 10 : 1
        let sequence: Set<EdmValue> = Set((0..<600).map { (i: Int) -> EdmValue in .int64(start + Int64(10 * i)) })
        let seqs: Set<EdmValue> = Set(readings.compactMap { $0["Seq"] })
        #expect(seqs == sequence, "\(yaml)")
        // Each date column in its own observed range (a day or minute past its last value; whole
        // months around it when values are not copied).
        func range(_ entities: [TableEntity], _ partition: String, _ name: String) -> (Int64, Int64) {
            let ticks = entities.filter { $0.partitionKey == partition }.compactMap { e -> Int64? in
                if case .dateTime(let d)? = e[name] { d.ticks } else { nil }
            }
            return (ticks.min()!, ticks.max()!)
        }
        for (partition, name, step) in [("devices", "Installed", Self.day), ("readings", "ReadAt", Self.minute)] {
            let (low, high) = range(account, partition, name)
            let slack = copyValues ? 0 : 31 * Self.day  // whole months when values are not copied
            let seen = made.filter { $0.partitionKey == partition }.compactMap { e -> Int64? in
                if case .dateTime(let d)? = e[name] { d.ticks } else { nil }
            }
            #expect(seen.allSatisfy { $0 >= low - slack && $0 < high + step + slack }, "\(name)\n\(yaml)")
        }
        // Text built from the referenced device names that device; a date after the device's
        // installation stays within the 30 days seen.
        let byKey = Dictionary(uniqueKeysWithValues: devices.map { ($0.rowKey, $0) })
        for reading in readings {
            guard case .string(let key)? = reading["DeviceId"], let device = byKey[key] else {
                Issue.record("DeviceId does not resolve\n\(yaml)")
                break
            }
            #expect(reading["Message"]?.text == "Reading from " + (device["Name"]?.text ?? "?"), "\(yaml)")
            if case .dateTime(let serviced)? = reading["Serviced"], case .dateTime(let installed)? = device["Installed"] {
                #expect(serviced >= installed && serviced.ticks - installed.ticks <= 31 * Self.day, "\(yaml)")
            } else {
                Issue.record("Serviced or Installed missing")
            }
        }
        // Doubles with the two decimals seen.
        #expect(readings.allSatisfy { e in (e["Value"]?.text.split(separator: ".").dropFirst().first?.count ?? 0) <= 2 }, "\(yaml)")
        #expect(readings.contains { e in (e["Value"]?.text.split(separator: ".").dropFirst().first?.count ?? 0) == 2 })
        // Partition names as they are, kinds named plainly.
        #expect(Set(made.map(\.partitionKey)) == ["devices", "readings", "NO", "SE"])
        #expect(!yaml.contains("nO") && !yaml.contains("sE"), "\(yaml)")
        // The report compares every property and flags nothing here but what privacy widens
        // (dates to whole days, ranges rounded) when values are not copied.
        let report = try #require(lastReport)
        #expect(report.compared >= 14, "\(report.markdown)")
        let helpers = report.flags.filter { $0.contains("a helper the dataset adds") }
        let unexpected = report.flags.filter { !$0.contains("outside the account's range") && !helpers.contains($0) }
        #expect(unexpected.isEmpty, "\(report.markdown)")
        if copyValues { #expect(report.flags.filter { !helpers.contains($0) }.isEmpty, "\(report.markdown)") }
    }

    @Test func hostileValuesComeBackByteForByte() throws {
        var odd = TableEntity(partitionKey: "odd", rowKey: "1")
        odd["Nel"] = .string("a\u{85}b")
        odd["Separator"] = .string(" \u{2028} ")
        odd["Bom"] = .string("\u{FEFF}lead")
        odd["Never"] = .dateTime(EdmDateTime(iso8601: "9999-12-31T23:59:59.9999999Z")!)
        var twin = odd
        twin.rowKey = "2"
        // Rows that differ only by RowKey, and only by EDM type, still make a dataset.
        var typed = TableEntity(partitionKey: "typed", rowKey: "a")
        typed["N"] = .int32(5)
        var typed64 = TableEntity(partitionKey: "typed", rowKey: "b")
        typed64["N"] = .int64(5)
        let (yaml, made) = try regenerate([odd, twin, typed, typed64], copyValues: true)
        let odds = made.filter { $0.partitionKey == "odd" }
        #expect(odds.count == 2, "\(yaml)")
        for e in odds {
            #expect(e["Nel"].map { Array($0.text.unicodeScalars) } == Array("a\u{85}b".unicodeScalars))
            #expect(e["Separator"].map { Array($0.text.unicodeScalars) } == Array(" \u{2028} ".unicodeScalars))
            #expect(e["Bom"].map { Array($0.text.unicodeScalars) } == Array("\u{FEFF}lead".unicodeScalars))
        }
        #expect(made.filter { $0.partitionKey == "typed" }.count == 2, "\(yaml)")
    }

    @Test func placeholderBlobsAreValidInTheirFormat() throws {
        let json = BlobPlaceholder.bytes(name: "a.json", size: 300, contentType: "application/json", index: 0)
        #expect(json.count == 300)
        #expect((try? JSONSerialization.jsonObject(with: Data(json))) != nil)
        let tiny = BlobPlaceholder.bytes(name: "b.json", size: 3, contentType: "application/json", index: 0)
        #expect((try? JSONSerialization.jsonObject(with: Data(tiny))) != nil)
        let xml = BlobPlaceholder.bytes(name: "c.xml", size: 64, contentType: "application/xml", index: 0)
        #expect(xml.count == 64 && String(decoding: xml, as: UTF8.self).hasPrefix("<placeholder/>"))
        let csv = BlobPlaceholder.bytes(name: "d.csv", size: 120, contentType: "text/csv", index: 0)
        #expect(csv.count == 120 && String(decoding: csv, as: UTF8.self).hasPrefix("placeholder\nplaceholder\n"))
    }

    @Test func addressesPhonesAndNamesNotCopiedAreMadeUpOnesThatLookReal() throws {
        var entities: [TableEntity] = []
        let people = [("Ada Lovelace", "ada@math.example", "+44 20 7946 0001"), ("Alan Turing", "alan@code.example", "+44 20 7946 0002")]
        for i in 0..<30 {
            var e = TableEntity(partitionKey: "contacts", rowKey: "c\(i)")
            let (name, email, phone) = people[i % 2]
            e["Contact"] = .string(name)
            e["Mail"] = .string(email)
            e["Phone"] = .string(phone)
            entities.append(e)
        }
        let (yaml, made) = try regenerate(entities, copyValues: false)
        // Two values each: two made-up ones each, with the frequencies seen.
        #expect(Set(made.compactMap { $0["Mail"] }).count == 2 && Set(made.compactMap { $0["Contact"] }).count == 2, "\(yaml)")
        #expect(!yaml.contains("Lovelace") && !yaml.contains("math.example") && !yaml.contains("7946"))
        for e in made {
            #expect(e["Mail"]?.text.hasSuffix("@example.com") == true && e["Phone"]?.text.hasPrefix("+1 555 ") == true)
            #expect(e["Contact"].map { $0.text.split(separator: " ").count == 2 } == true)
        }
    }

    @Test func manyAddressesNotCopiedAreFakeOnes() throws {
        var entities: [TableEntity] = []
        for i in 0..<300 {
            var e = TableEntity(partitionKey: "contacts", rowKey: "c\(i)")
            e["Mail"] = .string("person\(i % 120)@corp.example")
            e["Phone"] = .string("+44 20 7946 \(1000 + i % 150)")
            entities.append(e)
        }
        let (yaml, made) = try regenerate(entities, copyValues: false)
        #expect(yaml.contains("Mail: { fake: email }") && yaml.contains("Phone: { fake: phone }"), "\(yaml)")
        #expect(made.allSatisfy { $0["Mail"]?.text.hasSuffix("@example.com") == true && $0["Phone"]?.text.hasPrefix("+1 555 ") == true })
    }
}
