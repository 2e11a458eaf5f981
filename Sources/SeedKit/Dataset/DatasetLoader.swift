import AzureStorage
import Foundation
import Yams

extension Dataset {
    /// Reads and validates `<directory>/dataset.yaml` and its templates.
    ///
    /// Every problem is a ``DatasetError`` naming the file and line; nothing is generated
    /// from a dataset that has not passed every check.
    public static func load(directory: URL) throws(DatasetError) -> Dataset {
        let fileURL = directory.appendingPathComponent("dataset.yaml")
        let file = fileURL.relativePathForMessages
        guard FileManager.default.fileExists(atPath: fileURL.path) else {
            throw DatasetError(file: file, line: nil, "dataset file not found (pass \(Setting.dataset), a folder holding dataset.yaml)")
        }
        guard let data = FileManager.default.contents(atPath: fileURL.path), let text = String(data: data, encoding: .utf8) else {
            throw DatasetError(file: file, line: nil, "cannot read the file as UTF-8 text")
        }
        let root = try YAMLReader(file: file).compose(text)
        var loader = DatasetLoader(reader: YAMLReader(file: file, source: text), directory: directory)
        let dataset = try loader.dataset(root)
        try DatasetValidator(dataset: dataset).validate()
        return dataset
    }
}

extension YamlError {
    var line: Int? {
        switch self {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _): mark.line
        case .duplicatedKeysInMapping(_, let context): context.mark.line
        default: nil
        }
    }

    var problem: String {
        switch self {
        case .scanner(let context, let problem, _, _), .parser(let context, let problem, _, _), .composer(let context, let problem, _, _):
            if let context { return "\(problem) (\(context.text))" }
            return problem
        case .duplicatedKeysInMapping(let duplicates, _): return "duplicate keys: \(duplicates.joined(separator: ", "))"
        default:
            return "\(self)".split(separator: "\n").first.map(String.init) ?? "unreadable"
        }
    }
}

extension URL {
    /// The path relative to the working directory when it lies below it, else absolute.
    /// Whether this is the built-in dataset's folder (written out to azseed's cache).
    package var isBuiltInDataset: Bool { EmbeddedDataset.pathInside(standardizedFileURL.path) == "" }

    package var relativePathForMessages: String {
        let cwd = FileManager.default.currentDirectoryPath
        let path = self.standardizedFileURL.path
        // The built-in dataset's files live in azseed's cache, an internal detail: named as
        // the built-in dataset instead (`speakeasy (built in)/migrations`).
        if let inside = EmbeddedDataset.pathInside(path) { return "\(EmbeddedDataset.displayName)\(inside)" }
        if path.hasPrefix(cwd + "/") { return String(path.dropFirst(cwd.count + 1)) }
        return path
    }
}

private struct DatasetLoader {
    let reader: YAMLReader
    let directory: URL

    mutating func dataset(_ root: Node) throws(DatasetError) -> Dataset {
        let top = try reader.mapping(root, "the dataset", allowed: ["name", "seed", "window", "templates", "containers", "tables"])
        let name = try reader.string(try reader.required(top, "name", in: "the dataset", at: root), "name")
        var seed: UInt64 = 0
        if let node = top.first(where: { $0.key == "seed" })?.value {
            guard let s = UInt64(try reader.string(node, "seed")) else {
                throw reader.error(node, "seed must be a whole number from 0 to \(UInt64.max)")
            }
            seed = s
        }
        var window = WindowSpec(from: .today(offsetDays: 0), days: 30, to: nil)
        if let node = top.first(where: { $0.key == "window" })?.value { window = try self.window(node) }
        var templates = directory.appendingPathComponent("templates")
        if let node = top.first(where: { $0.key == "templates" })?.value {
            templates = try inside(try reader.string(node, "templates"), "templates", node)
        }
        var containers: [ContainerSpec] = []
        if let node = top.first(where: { $0.key == "containers" })?.value {
            for item in try reader.sequence(node, "containers") { containers.append(try container(item, templates: templates)) }
        }
        var tables: [TableSpec] = []
        if let node = top.first(where: { $0.key == "tables" })?.value {
            for item in try reader.sequence(node, "tables") { tables.append(try table(item, templates: templates)) }
        }
        return Dataset(
            name: name, directory: directory, file: reader.file, seed: seed, window: window,
            containers: containers, tables: tables, templatesDirectory: templates)
    }

    /// A folder the dataset names (`files:`, `images:`, `templates:`), which must lie inside the
    /// dataset's own folder: no absolute path, no `..`, no symbolic link leading out. A dataset's
    /// author (a scanned account's owner, through `scan`) could otherwise have `apply` publish
    /// any folder of this machine in a public container (docs/SECURITY.md).
    func inside(_ path: String, _ field: String, _ node: Node) throws(DatasetError) -> URL {
        guard !path.hasPrefix("/"), !path.split(separator: "/").contains("..") else {
            throw reader.error(node, "\(field): '\(path)' leads out of the dataset's folder; name a folder inside it (no absolute path, no '..')")
        }
        // Appended, not resolved `relativeTo:` (which drops the last component of a folder URL
        // written without its trailing slash, as a library caller may pass it).
        let url = directory.appendingPathComponent(path).standardizedFileURL
        let real = url.resolvingSymlinksInPath().path
        let base = directory.standardizedFileURL.resolvingSymlinksInPath().path
        guard real == base || real.hasPrefix(base + "/") else {
            throw reader.error(
                node, "\(field): '\(path)' is a symbolic link leading out of the dataset's folder; copy the folder into the dataset instead")
        }
        return url
    }

    func window(_ node: Node) throws(DatasetError) -> WindowSpec {
        let pairs = try reader.mapping(node, "window", allowed: ["from", "days", "to"])
        var spec = WindowSpec(from: .today(offsetDays: 0), days: nil, to: nil)
        for (key, value, _) in pairs {
            switch key {
            case "from":
                let text = try reader.string(value, "window.from")
                if let start = WindowSpec.Start(text) {
                    spec.from = start
                } else {
                    throw reader.error(value, "window.from: '\(text)' is not 'today', 'today+N', 'today-N' or a date (YYYY-MM-DD)")
                }
            case "days":
                let days = try reader.int(value, "window.days")
                guard days > 0, days <= 3_000_000 else { throw reader.error(value, "window.days must be a positive number of days") }
                spec.days = Int(days)
            default:
                let text = try reader.string(value, "window.to")
                guard let to = EdmDateTime(iso8601: text) else {
                    throw reader.error(value, "window.to: '\(text)' is not a date (YYYY-MM-DD) or ISO 8601 timestamp")
                }
                spec.to = to
            }
        }
        if spec.days == nil && spec.to == nil { throw reader.error(node, "window needs 'days' or 'to'") }
        if spec.days != nil && spec.to != nil { throw reader.error(node, "window takes 'days' or 'to', not both") }
        return spec
    }

    func container(_ node: Node, templates: URL) throws(DatasetError) -> ContainerSpec {
        let pairs = try reader.mapping(node, "a container", allowed: ["name", "access", "files", "images", "blobs", "properties", "metadata"])
        let name = try reader.string(try reader.required(pairs, "name", in: "a container", at: node), "container name")
        var access = PublicAccess.private
        if let value = pairs.first(where: { $0.key == "access" })?.value {
            let text = try reader.string(value, "access")
            guard let level = PublicAccess(rawValue: text) else { throw reader.error(value, "access: '\(text)' is not container, blob or private") }
            access = level
        }
        var files: URL?
        if let value = pairs.first(where: { $0.key == "files" || $0.key == "images" })?.value {
            let field = pairs.first(where: { $0.key == "files" || $0.key == "images" })?.key ?? "files"
            let url = try inside(try reader.string(value, field), field, value)
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir), isDir.boolValue else {
                throw reader.error(value, "folder '\(url.relativePathForMessages)' not found")
            }
            files = url
        }
        var groups: [BlobGroupSpec] = []
        if let value = pairs.first(where: { $0.key == "blobs" })?.value {
            for item in try reader.sequence(value, "blobs of container '\(name)'") {
                groups.append(try blobGroup(item, container: name, templates: templates))
            }
        }
        var properties: URL?
        if let value = pairs.first(where: { $0.key == "properties" })?.value {
            guard files != nil else {
                throw reader.error(value, "container '\(name)': properties describe the blobs of 'files'; name that folder too")
            }
            properties = try inside(try reader.string(value, "properties"), "properties", value)
        }
        var metadata: [String: String]?
        if let value = pairs.first(where: { $0.key == "metadata" })?.value {
            var found: [String: String] = [:]
            for (key, item, keyNode) in try reader.namedMapping(value, "container '\(name)', metadata") {
                if let problem = StorageNames.metadataNameProblem(key) {
                    throw reader.error(keyNode, "container '\(name)': metadata '\(key)': \(problem)")
                }
                found[key] = try reader.plainText(item, "container '\(name)', metadata '\(key)'")
            }
            if let problem = BlobPropertiesFile.metadataProblem(found) { throw reader.error(value, "container '\(name)': metadata \(problem)") }
            metadata = found
        }
        return ContainerSpec(
            name: name, access: access, filesDirectory: files, line: YAMLReader.line(of: node) ?? 0, blobGroups: groups, propertiesFile: properties,
            metadata: metadata)
    }

    /// One entry of a container's `blobs:`.
    func blobGroup(_ node: Node, container: String, templates: URL) throws(DatasetError) -> BlobGroupSpec {
        let what = "generated blobs of container '\(container)'"
        let pairs = try reader.mapping(node, what, allowed: ["count", "name", "content", "contentType", "metadata"])
        let countNode = try reader.required(pairs, "count", in: what, at: node)
        let count = try reader.int(countNode, "\(what), count")
        guard count >= 1, count <= Int64(BlobGroupSpec.maxCount) else {
            throw reader.error(countNode, "\(what): count is 1 to \(BlobGroupSpec.maxCount)")
        }
        func template(_ node: Node, _ field: String, allowed: Set<String>) throws(DatasetError) -> Template {
            let origin = "\(reader.file):\(YAMLReader.line(of: node) ?? 0)"
            let t = try Template(source: try reader.string(node, "\(what), \(field)"), origin: origin)
            if let unknown = t.variables.first(where: { !allowed.contains($0) }) {
                throw reader.error(node, "\(what): \(field) reads '\(unknown)'; it may read \(allowed.sorted().joined(separator: ", "))")
            }
            return t
        }
        let nameNode = try reader.required(pairs, "name", in: what, at: node)
        let name = try template(nameNode, "name", allowed: BlobGroupSpec.nameVariables)
        if count > 1, name.variables.isEmpty {
            throw reader.error(nameNode, "\(what): \(count) blobs need distinct names; put {{Number}} in the name")
        }
        let contentNode = try reader.required(pairs, "content", in: what, at: node)
        let content: BlobContentSpec
        let kinds = try reader.mapping(contentNode, "\(what), content", allowed: ["template", "image", "bytes"])
        guard kinds.count == 1, let (kind, value, _) = kinds.first else {
            throw reader.error(contentNode, "\(what): content is one of { template: file }, { image: portrait }, { bytes: N or [min, max] }")
        }
        switch kind {
        case "template":
            let file = try reader.string(value, "\(what), content.template")
            let url = templates.appendingPathComponent(file).standardizedFileURL
            let base = templates.standardizedFileURL.resolvingSymlinksInPath().path
            guard !file.hasPrefix("/"), !file.split(separator: "/").contains(".."), url.resolvingSymlinksInPath().path.hasPrefix(base + "/") else {
                throw reader.error(value, "\(what): template '\(file)' leads out of the templates folder; name a file inside it")
            }
            guard let data = FileManager.default.contents(atPath: url.path), let source = String(data: data, encoding: .utf8) else {
                throw reader.error(value, "\(what): template '\(url.relativePathForMessages)' not found or not UTF-8 text")
            }
            let t = try Template(source: source, origin: url.relativePathForMessages)
            if let unknown = t.variables.first(where: { !BlobGroupSpec.contentVariables.contains($0) }) {
                throw reader.error(value, "\(what): template '\(file)' reads '\(unknown)'; it may read Index, Name, Number")
            }
            content = .template(t)
        case "image":
            guard try reader.string(value, "\(what), content.image") == "portrait" else {
                throw reader.error(value, "\(what): image is 'portrait' (the generated photo)")
            }
            content = .portrait
        default:
            var bounds: (Int64, Int64)
            if case .sequence = value {
                let items = try reader.sequence(value, "\(what), content.bytes")
                guard items.count == 2 else { throw reader.error(value, "\(what): bytes is a size or [min, max]") }
                bounds = (try reader.int(items[0], "\(what), bytes"), try reader.int(items[1], "\(what), bytes"))
            } else {
                let n = try reader.int(value, "\(what), content.bytes")
                bounds = (n, n)
            }
            guard bounds.0 >= 1, bounds.0 <= bounds.1, bounds.1 <= Int64(BlobGroupSpec.maxBlobBytes) else {
                throw reader.error(value, "\(what): bytes is 1 to \(BlobGroupSpec.maxBlobBytes) (64 MiB), and min ≤ max")
            }
            content = .bytes(min: Int(bounds.0), max: Int(bounds.1))
        }
        var contentType: String?
        if let value = pairs.first(where: { $0.key == "contentType" })?.value {
            let text = try reader.string(value, "\(what), contentType")
            guard text.contains("/"), text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
                throw reader.error(value, "\(what): contentType '\(text)' is not a media type (type/subtype)")
            }
            contentType = text
        }
        var metadata: [(name: String, value: Template)] = []
        if let value = pairs.first(where: { $0.key == "metadata" })?.value {
            for (key, item, keyNode) in try reader.namedMapping(value, "\(what), metadata") {
                if let problem = StorageNames.metadataNameProblem(key) { throw reader.error(keyNode, "\(what): metadata '\(key)': \(problem)") }
                metadata.append((key, try template(item, "metadata '\(key)'", allowed: BlobGroupSpec.contentVariables)))
            }
        }
        return BlobGroupSpec(
            count: Int(count), name: name, content: content, contentType: contentType, metadata: metadata, line: YAMLReader.line(of: node) ?? 0)
    }

    func table(_ node: Node, templates: URL) throws(DatasetError) -> TableSpec {
        let pairs = try reader.mapping(node, "a table", allowed: ["name", "kinds"])
        let name = try reader.string(try reader.required(pairs, "name", in: "a table", at: node), "table name")
        var kinds: [KindSpec] = []
        for item in try reader.sequence(try reader.required(pairs, "kinds", in: "table '\(name)'", at: node), "kinds") {
            kinds.append(try kind(item, table: name, templates: templates))
        }
        if kinds.isEmpty { throw reader.error(node, "table '\(name)' has no kinds") }
        return TableSpec(name: name, kinds: kinds, line: YAMLReader.line(of: node) ?? 0)
    }

    func kind(_ node: Node, table: String, templates: URL) throws(DatasetError) -> KindSpec {
        let pairs = try reader.mapping(
            node, "a kind", allowed: ["name", "partition", "key", "rows", "count", "fields", "omit", "types", "entities"])
        let name = try reader.string(try reader.required(pairs, "name", in: "a kind", at: node), "kind name")
        let what = "kind '\(name)'"
        let partition = try reader.string(try reader.required(pairs, "partition", in: what, at: node), "partition")
        if let file = pairs.first(where: { $0.key == "entities" })?.value {
            // Copied entities stand alone: their keys and types are in the file.
            if let other = pairs.first(where: { ["key", "rows", "count", "fields", "omit", "types"].contains($0.key) }) {
                throw reader.error(other.value, "\(what) copies its entities ('entities'); it takes no '\(other.key)'")
            }
            let path = try reader.string(file, "entities")
            return KindSpec(
                name: name, partition: partition, key: [], rows: nil, count: nil, fields: [], omit: [], columnTypes: [:], table: table,
                line: YAMLReader.line(of: node) ?? 0, countLine: YAMLReader.line(of: file) ?? 0,
                entitiesFile: try inside(path, "\(what), entities", file))
        }
        let key = try reader.strings(try reader.required(pairs, "key", in: what, at: node), "key")
        var types: [String: EdmType] = [:]
        if let value = pairs.first(where: { $0.key == "types" })?.value {
            for (column, typeNode, _) in try reader.namedMapping(value, "types") {
                types[column] = try reader.edmType(typeNode, "types.\(column)")
            }
        }
        var rows: [Row]?
        if let value = pairs.first(where: { $0.key == "rows" })?.value {
            var list: [Row] = []
            for rowNode in try reader.sequence(value, "rows") {
                var values: [(String, EdmValue)] = []
                var absent: Set<String> = []
                for (column, cell, _) in try reader.namedMapping(rowNode, "a row of \(what)") {
                    // `~` (YAML's null): this entity has no such property.
                    if case .scalar(let s) = cell, s.style == .plain, s.string == "~" || s.string == "null" {
                        absent.insert(column)
                        values.append((column, .string("")))
                        continue
                    }
                    values.append((column, try reader.value(cell, "\(what), \(column)", type: types[column])))
                }
                list.append(Row(values: values, line: YAMLReader.line(of: rowNode) ?? 0, absent: absent))
            }
            rows = list
        }
        var count: Int?
        var countLine = YAMLReader.line(of: node) ?? 0
        if let value = pairs.first(where: { $0.key == "count" })?.value {
            let n = try reader.int(value, "count")
            guard n > 0 else { throw reader.error(value, "count must be at least 1") }
            count = Int(n)
            countLine = YAMLReader.line(of: value) ?? countLine
        }
        var fields: [FieldDefinition] = []
        if let value = pairs.first(where: { $0.key == "fields" })?.value {
            for (fieldName, spec, keyNode) in try reader.namedMapping(value, "fields of \(what)") {
                let parser = FieldParser(reader: reader, templates: templates, field: fieldName, kind: name)
                fields.append(
                    FieldDefinition(
                        name: fieldName, generator: try parser.parse(spec),
                        line: YAMLReader.line(of: keyNode) ?? 0, presence: try parser.presence(spec), unique: try parser.unique(spec),
                        exact: try parser.exact(spec)))
            }
        }
        var omit: [String] = []
        if let value = pairs.first(where: { $0.key == "omit" })?.value { omit = try reader.strings(value, "omit") }
        return KindSpec(
            name: name, partition: partition, key: key, rows: rows, count: count, fields: fields, omit: omit,
            columnTypes: types, table: table, line: YAMLReader.line(of: node) ?? 0, countLine: countLine)
    }
}
