import AzureStorage
import Foundation
import Mustache
import SeedKit
import Testing

/// azseed's own Mustache renderer against the library it replaced: the same bytes for every
/// template shape azseed accepts, in linear time, with nesting bounded.
@Suite struct MustacheTextTests {
    static let fields: [String: String] = ["Name": "Bret Stateham", "Title": "Evangelist", "Empty": "", "Café": "nfc"]
    static let speaker: [String: String] = ["Name": "Bert Johnson", "City": "Las Vegas"]

    static var ours: [ExactString: TemplateValue] {
        var context = Dictionary(uniqueKeysWithValues: fields.map { (ExactString($0.key), TemplateValue.text($0.value)) })
        context["speaker"] = .object(Dictionary(uniqueKeysWithValues: speaker.map { (ExactString($0.key), $0.value) }))
        return context
    }

    static var theirs: [String: Any] {
        var context: [String: Any] = fields
        context["speaker"] = speaker
        return context
    }

    static let corpus: [String] = [
        "{{Name}} is a {{Title}}",
        "Hello {{speaker.Name}} from {{ speaker.City }}!",
        "{{{Name}}} & {{&Title}} <b>",
        "{{Missing}}|{{speaker.Missing}}|{{Missing.Name}}",
        "{{#Name}}has a name: {{.}}{{/Name}}",
        "{{#speaker}}{{Name}} in {{City}}, titled {{Title}}{{/speaker}}",
        "{{^Missing}}no such field{{/Missing}}{{^Name}}hidden{{/Name}}",
        "{{#Empty}}empty string is a value{{/Empty}}",
        "line one\n{{#Name}}\n  inside\n{{/Name}}\nline two\n",
        "  {{#Name}}  \n  indented\n  {{/Name}}  \nafter",
        "{{#Name}}\nfirst-line section\n{{/Name}}\n",
        "\n{{#Name}}\nafter a blank first line\n{{/Name}}\n",
        "   \nblanks on the first line",
        "a {{! a comment }} b\n  {{! standalone }}\nc",
        "windows\r\n{{#Name}}\r\nline\r\n{{/Name}}\r\nend",
        "{{#Name}}x{{/Name}} {{^Missing}}\ny{{/Missing}}\nz",
        "{{#Name}}{{#speaker}}{{#Title}}{{Name}}/{{City}}{{/Title}}{{/speaker}}{{/Name}}",
        "{{#speaker}}\n  {{.City}}|{{.Title}}\n{{/speaker}}\n",
        "trailing blanks   ",
        "{ single { braces } }",
        "",
    ]

    @Test(arguments: corpus)
    func rendersAsTheLibraryDid(_ source: String) throws {
        let template = try Template(source: source, origin: "corpus")
        let library = try MustacheTemplate(string: "{{% CONTENT_TYPE: TEXT}}" + source)
        #expect(template.render(Self.ours) == library.render(Self.theirs), "\(source.debugDescription)")
    }

    @Test func namesAreMatchedByBytes() throws {
        let nfd = "Cafe\u{301}"
        var context = Self.ours
        context[ExactString(nfd)] = .text("nfd")
        #expect(try Template(source: "{{Café}} {{\(nfd)}}", origin: "t").render(context) == "nfc nfd")
    }

    @Test func timeIsLinearInTheTemplate() throws {
        // 40,000 tags took 27 s with the library; linear means 4× the tags costs about 4× the
        // time, asserted as a ratio with room for noise, never as a time.
        func seconds(_ tags: Int) throws -> Double {
            let source = String(repeating: "{{Name}} {{#speaker}}{{City}}{{/speaker}}\n", count: tags / 3)
            let start = Date()
            let template = try Template(source: source, origin: "big")
            _ = template.render(Self.ours)
            return Date().timeIntervalSince(start)
        }
        _ = try seconds(3_000)
        let small = try seconds(10_000)
        let large = try seconds(40_000)
        #expect(large / max(small, 1e-3) < 8, "10,000 tags \(small) s, 40,000 tags \(large) s")
    }

    @Test func nestingIsBoundedWithTheFileNamed() throws {
        let deep = String(repeating: "{{#Name}}", count: 1_000) + "x" + String(repeating: "{{/Name}}", count: 1_000)
        #expect(throws: DatasetError.self) { try Template(source: deep, origin: "templates/bio.mustache") }
        let fine = String(repeating: "{{#Name}}", count: 100) + "x" + String(repeating: "{{/Name}}", count: 100)
        #expect(try Template(source: fine, origin: "t").render(Self.ours) == "x")
    }

    @Test func unsupportedTagsAreRefused() {
        for source in ["{{> partial}}", "{{=<% %>=}}", "{{% CONTENT_TYPE: HTML}}", "{{#Name}}unclosed", "{{/Name}}"] {
            #expect(throws: DatasetError.self, "\(source)") { try Template(source: source, origin: "t") }
        }
    }
}
