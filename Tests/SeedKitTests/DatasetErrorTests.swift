import Foundation
import Testing

@testable import SeedKit

/// Bad dataset files: each is one located error, raised before anything is generated.
@Suite struct DatasetErrorTests {
    private func loadError(_ change: (String) -> String) throws -> String {
        let message = try TestSupport.loadError({ _ in }, change)
        if message == "no error" { Issue.record("no error") }
        return message
    }

    @Test func malformedYAMLNamesTheLine() throws {
        let message = try loadError { $0.replacingOccurrences(of: "seed: 2012", with: "seed: [2012") }
        #expect(message.contains("dataset.yaml:"))
        #expect(message.contains("malformed YAML"))
    }

    @Test func unknownKeyNamesTheLine() throws {
        let message = try loadError {
            $0.replacingOccurrences(of: "        partition: Events\n", with: "        partition: Events\n        colour: blue\n")
        }
        #expect(
            message.hasSuffix(
                "dataset.yaml:46: unknown key 'colour' in a kind (expected one of: name, partition, key, rows, count, fields, omit, types, entities)")
        )
    }

    @Test func duplicateKeysAreMalformed() throws {
        let message = try loadError { $0.replacingOccurrences(of: "seed: 2012", with: "seed: 2012\nseed: 7") }
        #expect(message.contains("dataset.yaml:") && message.contains("malformed YAML") && message.contains("seed"))
    }

    @Test func fileThatCannotBeABlob() throws {
        let copy = try TestSupport.copyOfSpeakEasy()
        try Data("x".utf8).write(to: copy.appendingPathComponent("images/notes."))
        let dataset = try Dataset.load(directory: copy)
        #expect(
            performing: { _ = try GeneratedDataset.make(dataset, options: TestSupport.options()) },
            throws: {
                "\($0)".contains("images/notes.: cannot be a blob of container 'speakers': a blob name must not end with '.' or '/'")
            })
    }

    @Test func missingFieldIsNamed() throws {
        let message = try loadError { $0.replacingOccurrences(of: "        partition: Events\n", with: "") }
        #expect(message.contains("kind 'event' is missing 'partition'"))
    }

    @Test func rowMissingAColumn() throws {
        let message = try loadError {
            $0.replacingOccurrences(
                of: "{ Name: Mo Omar, Title: Principal Consultant, Image: MOmar.jpg }", with: "{ Name: Mo Omar, Image: MOmar.jpg }")
        }
        #expect(message.contains(":33: kind 'speaker': this row is missing 'Title'"))
    }

    @Test func duplicateNaturalKeyInRows() throws {
        let message = try loadError { $0.replacingOccurrences(of: "Name: Mo Omar,", with: "Name: Matt Morse,") }
        #expect(message.contains(":33: kind 'speaker': this row has the same key (Name) as the row at line 32"))
    }

    @Test func templateNamingAnUnknownField() throws {
        let copy = try TestSupport.copyOfSpeakEasy()
        let template = copy.appendingPathComponent("templates/bio.mustache")
        try "{{Name}} is a {{Job}}".write(to: template, atomically: true, encoding: .utf8)
        #expect { try Dataset.load(directory: copy) } throws: { error in
            "\(error)".contains("bio.mustache") && "\(error)".contains("unknown field 'Job'") && "\(error)".contains("dataset.yaml:39")
        }
    }

    @Test func missingTemplateFile() throws {
        let message = try loadError { $0.replacingOccurrences(of: "bio.mustache", with: "biography.mustache") }
        #expect(message.contains(":39: field 'Bio' of kind 'speaker': template '") && message.contains("biography.mustache' not found"))
    }

    @Test func unknownRefAndBadFrom() throws {
        #expect(try loadError { $0.replacingOccurrences(of: "{ ref: speaker }", with: "{ ref: presenter }") }.contains("no kind named 'presenter'"))
        #expect(
            try loadError { $0.replacingOccurrences(of: "speaker.Name }", with: "speaker.Nickname }") }.contains(
                "kind 'speaker' has no stored property 'Nickname'"))
    }

    @Test func badValues() throws {
        #expect(try loadError { $0.replacingOccurrences(of: "count: 100", with: "count: 0") }.contains("count must be at least 1"))
        #expect(
            try loadError { $0.replacingOccurrences(of: "access: container", with: "access: public") }.contains(
                "access: 'public' is not container, blob or private"))
        #expect(try loadError { $0.replacingOccurrences(of: "- name: events", with: "- name: ev") }.contains("a table name has 3 to 63 characters"))
        #expect(try loadError { $0.replacingOccurrences(of: "- name: speakers", with: "- name: Speakers") }.contains("container 'Speakers'"))
        #expect(try loadError { $0.replacingOccurrences(of: "partition: Events", with: "partition: Ev/ents") }.contains("must not contain '/'"))
        #expect(try loadError { $0.replacingOccurrences(of: "from: today,", with: "from: someday,") }.contains("window.from: 'someday'"))
        #expect(try loadError { $0.replacingOccurrences(of: "resolution: minute", with: "resolution: fortnight") }.contains("resolution 'fortnight'"))
    }

    @Test func imageProblemsNameTheFile() throws {
        let cases: [(String, (URL) throws -> Void, String)] = [
            (
                "missing", { try FileManager.default.removeItem(at: $0.appendingPathComponent("images/MOmar.jpg")) },
                "names blob 'MOmar.jpg', which is not a file of container 'speakers'"
            ),
            (
                "empty", { try Data().write(to: $0.appendingPathComponent("images/MOmar.jpg")) },
                "images/MOmar.jpg: not a usable JPEG image: the file is empty"
            ),
            (
                "not a JPEG", { try Data("GIF89a not a jpeg".utf8).write(to: $0.appendingPathComponent("images/MOmar.jpg")) },
                "images/MOmar.jpg: not a usable JPEG image: Not a JPEG file"
            ),
            (
                "truncated",
                { url in
                    let file = url.appendingPathComponent("images/MOmar.jpg")
                    let bytes = try Data(contentsOf: file)
                    try bytes.prefix(bytes.count / 2).write(to: file)
                }, "images/MOmar.jpg: not a usable JPEG image: Premature end of JPEG file"
            ),
        ]
        for (name, damage, expected) in cases {
            let copy = try TestSupport.copyOfSpeakEasy()
            try damage(copy)
            let dataset = try Dataset.load(directory: copy)
            #expect(
                performing: { _ = try GeneratedDataset.make(dataset, options: TestSupport.options()) },
                throws: { error in
                    let text = "\(error)"
                    if !text.contains(expected) { Issue.record("\(name): \(text)") }
                    return true
                })
        }
    }

    @Test func windowErrorsAreUsageErrors() throws {
        let dataset = try Dataset.load(directory: TestSupport.speakeasy)
        var options = TestSupport.options()
        options.from = TestSupport.pinnedWindow.to
        options.to = TestSupport.pinnedWindow.from
        #expect(
            performing: { _ = try GeneratedDataset.make(dataset, options: options) },
            throws: { error in
                (error as? GenerationError)?.isUsage == true && "\(error)".contains("is not before its end")
            })
        options = TestSupport.options()
        options.counts = ["speaker": 3]
        #expect(throws: GenerationError.self) { _ = try GeneratedDataset.make(dataset, options: options) }
        options.counts = ["session": 3]
        #expect(performing: { _ = try GeneratedDataset.make(dataset, options: options) }, throws: { "\($0)".contains("no kind 'session'") })
    }
}
