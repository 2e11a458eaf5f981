import AzureStorage
import Foundation
import Yams

/// `--targets FILE`: the accounts a `migrate` command runs against, each by a name and the
/// target options it would take on the command line, by their flag names:
///
/// ```yaml
/// targets:
///   - name: contoso
///     connection-string: ${CONTOSO_STORAGE}     # from the environment
///   - name: fabrikam
///     account-name: fabrikamdata
///     auth-mode: login
/// ```
///
/// `${NAME}` anywhere in a value is the environment variable's value, so no secret need be in
/// the file; an unset one is an error naming the target and the variable, never a value.
public struct TargetsFile: Sendable {
    /// One account: its name, and its options as `(flag, value)` in the file's order.
    public struct Entry: Sendable {
        public var name: String
        public var options: [(flag: String, value: String)]
        public var line: Int?
        /// Text no message may show, and what to show instead: each `${VAR}`'s value (as
        /// `${VAR}`), and the whole of a `connection-string` or `sas-token`.
        public var secrets: [(text: String, shown: String)] = []
    }

    /// The options a target may give (the command's own target flags).
    public static let keys = [
        "connection-string", "account-name", "blob-endpoint", "table-endpoint", "sas-token", "auth-mode", "ca-file", "timeout", "lock-timeout",
        "data-dir",
    ]
    /// The most targets a file may name, and its largest size.
    public static let maxTargets = 10_000
    static let maxBytes = 1 << 20

    public var entries: [Entry]

    /// Reads and checks the whole file before any target is opened.
    public static func read(_ url: URL, environment: [String: String]) throws(DatasetError) -> TargetsFile {
        let file = url.relativePathForMessages
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path), attributes[.type] as? FileAttributeType == .typeRegular
        else { throw DatasetError(file: file, line: nil, "no such file; \(Setting.targetsFile) names a YAML file of targets:") }
        guard (attributes[.size] as? Int ?? 0) <= maxBytes, let data = FileManager.default.contents(atPath: url.path) else {
            throw DatasetError(file: file, line: nil, "larger than \(maxBytes) bytes, or unreadable")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw DatasetError(file: file, line: nil, "not UTF-8 text") }
        let reader = YAMLReader(file: file)
        let root = try reader.compose(text)
        let top = try reader.mapping(root, "a targets file", allowed: ["targets"])
        let list = try reader.sequence(try reader.required(top, "targets", in: "a targets file", at: root), "targets")
        guard !list.isEmpty else { throw reader.error(root, "targets is empty; name at least one account") }
        guard list.count <= maxTargets else { throw reader.error(root, "\(list.count) targets; at most \(maxTargets)") }
        var entries: [Entry] = []
        for node in list {
            let fields = try reader.mapping(node, "a target", allowed: ["name"] + keys)
            let name = try reader.string(try reader.required(fields, "name", in: "a target", at: node), "a target's name")
            guard (1...63).contains(name.utf8.count), name.utf8.allSatisfy(Self.isNameByte) else {
                throw reader.error(node, "target name '\(Printable.escaped(name))': give 1 to 63 letters, digits, '-', '.' or '_'")
            }
            if entries.contains(where: { $0.name == name }) { throw reader.error(node, "target \(name) is named twice") }
            var options: [(flag: String, value: String)] = []
            var secrets: [(text: String, shown: String)] = []
            for field in fields where field.key != "name" {
                let raw = try reader.string(field.value, "target \(name): \(field.key)")
                let value = try expand(raw, target: name, key: field.key, environment: environment, reader: reader, node: field.value)
                options.append((field.key, value))
                for variable in Self.variables(in: raw) { if let text = environment[variable] { secrets.append((text, "${\(variable)}")) } }
                if field.key == "connection-string" || field.key == "sas-token" { secrets.append((value, "<\(field.key) of target \(name)>")) }
            }
            entries.append(Entry(name: name, options: options, line: YAMLReader.line(of: node), secrets: secrets))
        }
        return TargetsFile(entries: entries)
    }

    /// `value` with each `${NAME}` replaced by the environment's value; the error names the
    /// variable, never a value.
    static func expand(_ value: String, target: String, key: String, environment: [String: String], reader: YAMLReader, node: Node)
        throws(DatasetError)
        -> String
    {
        var out = ""
        var rest = Substring(value)
        while let start = rest.range(of: "${") {
            out += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                throw reader.error(node, "target \(target): \(key) has a '${' without its '}'")
            }
            let variable = String(rest[start.upperBound..<end])
            guard !variable.isEmpty, variable.utf8.allSatisfy({ Self.isNameByte($0) && $0 != 0x2D && $0 != 0x2E }) else {
                throw reader.error(
                    node, "target \(target): \(key) names '${\(Printable.escaped(variable, quotes: false))}', which is not a variable name")
            }
            guard let found = environment[variable], !found.isEmpty else {
                throw reader.error(node, "target \(target): \(key) takes ${\(variable)}, which is not set in the environment")
            }
            out += found
            rest = rest[rest.index(after: end)...]
        }
        return out + rest
    }

    /// The names of the `${VAR}`s in `value`.
    static func variables(in value: String) -> [String] {
        var names: [String] = []
        var rest = Substring(value)
        while let start = rest.range(of: "${"), let end = rest[start.upperBound...].firstIndex(of: "}") {
            names.append(String(rest[start.upperBound..<end]))
            rest = rest[rest.index(after: end)...]
        }
        return names
    }

    /// `text` with every secret of `entry` replaced by what may be shown of it (longest
    /// first, as written and as a URL would carry it).
    public static func redacted(_ text: String, _ entry: Entry) -> String {
        var out = text
        for secret in entry.secrets.sorted(by: { $0.text.utf8.count > $1.text.utf8.count }) where secret.text.utf8.count >= 4 {
            out = out.replacingOccurrences(of: secret.text, with: secret.shown)
            if let encoded = secret.text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed), encoded != secret.text {
                out = out.replacingOccurrences(of: encoded, with: secret.shown)
            }
        }
        return out
    }

    /// A letter, a digit, `-`, `.` or `_`.
    static func isNameByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x2E || b == 0x5F
    }
}
