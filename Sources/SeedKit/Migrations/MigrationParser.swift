import AzureStorage
import Crypto
import Foundation
import Yams

/// Reads one migration file: `description:` and `operations:`, each operation a one-key
/// mapping. Every name, type, filter and template is checked here, before anything runs.
struct MigrationParser {
    let reader: YAMLReader

    /// The operations this azseed implements, with the keys each takes.
    static let operationKeys: [(String, [String])] = [
        ("create-table", ["table"]),
        ("delete-table", ["table"]),
        ("copy-table", ["from", "to"]),
        ("rename-property", ["table", "where", "from", "to"]),
        ("set-property", ["table", "where", "name", "value", "template", "type", "if-missing"]),
        ("remove-property", ["table", "where", "name"]),
        ("retype-property", ["table", "where", "name", "to", "on-failure"]),
        ("replace-in-property", ["table", "where", "name", "find", "replace"]),
        ("delete-entities", ["table", "where"]),
        ("rekey", ["table", "where", "partition", "row"]),
        ("map-values", ["table", "where", "name", "map", "otherwise"]),
        ("split-property", ["table", "where", "name", "separator", "into"]),
        ("join-properties", ["table", "where", "names", "separator", "into"]),
        ("compute", ["table", "where", "name", "expression", "type", "if-missing"]),
        ("lookup", ["table", "where", "name", "from-table", "partition", "row", "property", "if-missing"]),
        ("move-blobs", ["container", "prefix", "to-container", "to-prefix"]),
        ("set-blob-properties", ["container", "prefix", "content-type", "cache-control", "metadata"]),
        ("delete-blobs", ["container", "prefix"]),
    ]
    /// The most mappings a `map-values` holds, and properties a split or a join names.
    static let maxMappings = 1000
    static let maxParts = 64
    /// The longest `where:`, `template:`, `find:` or `replace:` text.
    static let maxText = 32 << 10
    /// Azure allows 15 comparisons in one `$filter`; a resumed run adds 3 (the key it is past).
    static let maxComparisons = 12

    static func read(_ url: URL, version: MigrationVersion) throws(DatasetError) -> Migration {
        let file = url.relativePathForMessages
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        guard attributes?[.type] as? FileAttributeType == .typeRegular else {
            throw DatasetError(file: file, line: nil, "not a regular file; a migration is a YAML file")
        }
        if let size = attributes?[.size] as? Int, size > MigrationSet.maxFileBytes {
            throw DatasetError(file: file, line: nil, "\(size) bytes; a migration file holds at most \(MigrationSet.maxFileBytes)")
        }
        guard let data = FileManager.default.contents(atPath: url.path), data.count <= MigrationSet.maxFileBytes else {
            throw DatasetError(file: file, line: nil, "cannot read the file")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw DatasetError(file: file, line: nil, "cannot read the file as UTF-8 text") }
        let root = try YAMLReader(file: file).compose(text)
        let parser = MigrationParser(reader: YAMLReader(file: file))
        let pairs = try parser.reader.mapping(root, "a migration", allowed: ["description", "operations"])
        let descriptionNode = try parser.reader.required(pairs, "description", in: "a migration", at: root)
        let description = try parser.reader.string(descriptionNode, "description")
        guard description.utf8.count <= 1024 else { throw parser.reader.error(descriptionNode, "description is longer than 1024 bytes") }
        if description.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\u{2028}" || $0 == "\u{2029}" }) {
            throw parser.reader.error(descriptionNode, "description holds a control character; it is one line of text")
        }
        let list = try parser.reader.sequence(try parser.reader.required(pairs, "operations", in: "a migration", at: root), "operations")
        guard !list.isEmpty else { throw parser.reader.error(root, "operations is empty; a migration does at least one thing") }
        guard list.count <= MigrationSet.maxOperations else {
            throw parser.reader.error(root, "\(list.count) operations; a migration holds at most \(MigrationSet.maxOperations)")
        }
        var operations: [MigrationOperation] = []
        var sources: [OperationSource] = []
        for node in list {
            let (operation, source) = try parser.operation(node)
            operations.append(operation)
            sources.append(source)
        }
        return Migration(
            version: version, description: description, script: url.lastPathComponent, file: file,
            checksum: SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined(), operations: operations, sources: sources)
    }

    /// An operation and where it is: its line, and whether `allow-destructive: true` beside its
    /// keys acknowledges what it destroys (refused on an operation that destroys nothing).
    private func operation(_ node: Node) throws(DatasetError) -> (MigrationOperation, OperationSource) {
        let outer = try reader.mapping(node, "an operation", allowed: [])
        guard outer.count == 1, let (name, body, nameNode) = outer.first.map({ ($0.key, $0.value, $0.keyNode) }) else {
            throw reader.error(node, "an operation is a mapping of one key, its name (e.g. '- rename-property: {table: t, from: A, to: B}')")
        }
        guard let keys = Self.operationKeys.first(where: { $0.0.utf8.elementsEqual(name.utf8) })?.1 else {
            throw reader.error(
                nameNode,
                "unknown operation '\(Printable.escaped(name))' (this azseed implements: \(Self.operationKeys.map(\.0).joined(separator: ", ")))")
        }
        let fields = try reader.mapping(body, name, allowed: keys + ["allow-destructive"])
        let acknowledgement = fields.first(where: { $0.key == "allow-destructive" })?.value
        let allows = try flag(acknowledgement, "\(name): allow-destructive")
        let operation = try self.operation(name, fields.filter { $0.key != "allow-destructive" }, body)
        if allows, operation.destroys == nil {
            throw reader.error(
                acknowledgement,
                "\(name): allow-destructive acknowledges an operation that destroys data, and this one destroys nothing; remove it")
        }
        return (operation, OperationSource(line: YAMLReader.line(of: nameNode), allowsDestructive: allows))
    }

    private func operation(_ name: String, _ fields: [(key: String, value: Node, keyNode: Node)], _ body: Node) throws(DatasetError)
        -> MigrationOperation
    {
        let what = "\(name)"
        func field(_ key: String) -> Node? { fields.first(where: { $0.key == key })?.value }
        func required(_ key: String) throws(DatasetError) -> String {
            try reader.string(try reader.required(fields, key, in: what, at: body), "\(what): \(key)")
        }
        func optional(_ key: String) throws(DatasetError) -> String? {
            guard let node = field(key) else { return nil }
            return try reader.string(node, "\(what): \(key)")
        }
        func text(_ key: String) throws(DatasetError) -> String {
            let value = try required(key)
            guard value.utf8.count <= Self.maxText else { throw reader.error(field(key), "\(what): \(key) is longer than \(Self.maxText) bytes") }
            return value
        }
        func property(_ key: String) throws(DatasetError) -> String {
            let name = try required(key)
            if let problem = StorageNames.propertyProblem(name) {
                throw reader.error(field(key), "\(what): \(key) '\(Printable.escaped(name))': \(problem)")
            }
            if ["PartitionKey", "RowKey", "Timestamp"].contains(where: { $0.utf8.elementsEqual(name.utf8) }) {
                throw reader.error(field(key), "\(what): \(key) '\(name)' is a key or system property, which a property operation cannot change")
            }
            return name
        }
        func names(_ key: String) throws(DatasetError) -> [String] {
            let node = try reader.required(fields, key, in: what, at: body)
            let items = try reader.sequence(node, "\(what): \(key)")
            guard items.count <= Self.maxParts else { throw reader.error(node, "\(what): \(key) lists more than \(Self.maxParts) properties") }
            var out: [String] = []
            for item in items {
                let name = try reader.string(item, "\(what): an item of \(key)")
                if let problem = StorageNames.propertyProblem(name) {
                    throw reader.error(item, "\(what): \(key) '\(Printable.escaped(name))': \(problem)")
                }
                if ["PartitionKey", "RowKey", "Timestamp"].contains(where: { $0.utf8.elementsEqual(name.utf8) }) {
                    throw reader.error(item, "\(what): \(key) '\(name)' is a key or system property, which a property operation cannot change")
                }
                if out.contains(where: { $0.utf8.elementsEqual(name.utf8) }) {
                    throw reader.error(item, "\(what): \(key) names '\(Printable.escaped(name))' twice")
                }
                out.append(name)
            }
            return out
        }
        if name.hasSuffix("-blobs") || name == "set-blob-properties" { return .blobs(try blobStep(name, fields, body)) }
        if name == "copy-table" {
            var names: [String] = []
            for key in ["from", "to"] {
                let table = try required(key)
                if let problem = StorageNames.tableProblem(table) ?? ReservedNames.tableProblem(table) {
                    throw reader.error(field(key), "\(what): \(key) '\(Printable.escaped(table))': \(problem)")
                }
                names.append(table)
            }
            guard names[0].lowercased() != names[1].lowercased() else { throw reader.error(body, "\(what): from and to are the same table") }
            return .copyTable(from: names[0], to: names[1])
        }
        let table = try required("table")
        if let problem = StorageNames.tableProblem(table) ?? ReservedNames.tableProblem(table) {
            throw reader.error(field("table"), "\(what): table '\(Printable.escaped(table))': \(problem)")
        }
        switch name {
        case "create-table": return .createTable(table)
        case "delete-table": return .deleteTable(table)
        default: break
        }
        var filterText = try optional("where")
        if name == "delete-entities", filterText == nil {
            throw reader.error(body, "\(what) needs 'where' (to delete every entity, use delete-table)")
        }
        var filter: FilterExpression?
        if let text = filterText {
            guard text.utf8.count <= Self.maxText else { throw reader.error(field("where"), "\(what): where is longer than \(Self.maxText) bytes") }
            do { filter = try FilterParser.parse(text) } catch {
                throw reader.error(field("where"), "\(what): where is not an OData filter the Table service accepts: \(error)")
            }
            if filter!.comparisonCount > Self.maxComparisons {
                throw reader.error(
                    field("where"),
                    "\(what): where holds \(filter!.comparisonCount) comparisons; at most \(Self.maxComparisons) (the Table service allows 15, and a resumed run adds 3)"
                )
            }
            filterText = text
        }
        let change: EntityChange
        switch name {
        case "rename-property":
            let from = try property("from")
            let to = try property("to")
            guard !from.utf8.elementsEqual(to.utf8) else { throw reader.error(body, "\(what): from and to are the same name") }
            change = .renameProperty(from: from, to: to)
        case "set-property":
            change = .setProperty(
                name: try property("name"), value: try setValue(fields, body, what), ifMissing: try flag(field("if-missing"), "\(what): if-missing"))
        case "remove-property":
            change = .removeProperty(try property("name"))
        case "retype-property":
            let typeName = try required("to")
            guard let type = EdmType(shortName: typeName), type != .binary else {
                throw reader.error(
                    field("to"), "\(what): to '\(Printable.escaped(typeName))' is not one of String, Int32, Int64, Double, Boolean, DateTime, Guid")
            }
            let failure = try optional("on-failure") ?? "fail"
            guard let onFailure = EntityChange.RetypeFailure(rawValue: failure) else {
                throw reader.error(field("on-failure"), "\(what): on-failure '\(Printable.escaped(failure))' is not fail, skip or remove")
            }
            change = .retypeProperty(name: try property("name"), to: type, onFailure: onFailure)
        case "replace-in-property":
            let name = try property("name")
            let find = try text("find")
            guard let replaceNode = field("replace") else { throw reader.error(body, "\(what) is missing 'replace'") }
            change = .replaceInProperty(name: name, find: find, replace: try scalarText(replaceNode, "\(what): replace"))
        case "compute":
            let source = try text("expression")
            let expression: ComputeExpression
            do { expression = try ComputeExpression.parse(source) } catch {
                throw reader.error(field("expression"), "\(what): expression: \(error.description)")
            }
            var type: EdmType?
            if let typeName = try optional("type") {
                guard let parsed = EdmType(shortName: typeName), parsed != .binary else {
                    throw reader.error(
                        field("type"),
                        "\(what): type '\(Printable.escaped(typeName))' is not one of String, Int32, Int64, Double, Boolean, DateTime, Guid")
                }
                type = parsed
            }
            change = .compute(
                name: try property("name"), expression: expression, type: type, ifMissing: try flag(field("if-missing"), "\(what): if-missing"))
        case "map-values":
            change = .mapValues(name: try property("name"), map: try valueMap(fields, body, what))
        case "split-property", "join-properties":
            let separator = try text("separator")
            let into = name == "split-property" ? try names("into") : [try property("into")]
            let read = name == "split-property" ? [try property("name")] : try names("names")
            if name == "join-properties" && read.count < 2 { throw reader.error(field("names"), "\(what): names lists at least two properties") }
            if name == "split-property" && into.count < 2 { throw reader.error(field("into"), "\(what): into lists at least two properties") }
            // What the step reads it removes: one of them among what it writes would be read again.
            if let both = read.first(where: { r in into.contains { $0.utf8.elementsEqual(r.utf8) } }) {
                throw reader.error(body, "\(what): \(Printable.escaped(both)) is both read and written; name new properties")
            }
            change =
                name == "split-property"
                ? .splitProperty(name: read[0], separator: separator, into: into) : .joinProperties(names: read, separator: separator, into: into[0])
        case "lookup":
            let fromTable = try required("from-table")
            if let problem = StorageNames.tableProblem(fromTable) ?? ReservedNames.tableProblem(fromTable) {
                throw reader.error(field("from-table"), "\(what): from-table '\(Printable.escaped(fromTable))': \(problem)")
            }
            func keyTemplate(_ key: String) throws(DatasetError) -> EntityTemplate {
                try template(try reader.required(fields, key, in: what, at: body), "\(what): \(key)")
            }
            let ifMissingText = try optional("if-missing") ?? "fail"
            guard let ifMissing = LookupSpec.IfMissing(rawValue: ifMissingText) else {
                throw reader.error(field("if-missing"), "\(what): if-missing '\(Printable.escaped(ifMissingText))' is not fail or skip")
            }
            let spec = LookupSpec(
                fromTable: fromTable, partition: try keyTemplate("partition"), row: try keyTemplate("row"), property: try property("property"),
                ifMissing: ifMissing)
            let name = try property("name")
            if fromTable.lowercased() == table.lowercased(), spec.property.utf8.elementsEqual(name.utf8) {
                throw reader.error(
                    body,
                    "\(what): looks up \(Printable.escaped(name)) in its own table to write \(Printable.escaped(name)); the values would change as the step writes them"
                )
            }
            change = .lookup(name: name, spec)
        case "rekey":
            let partition = try field("partition").map { (node: Node) throws(DatasetError) in try template(node, "\(what): partition") }
            let row = try field("row").map { (node: Node) throws(DatasetError) in try template(node, "\(what): row") }
            guard partition != nil || row != nil else {
                throw reader.error(body, "\(what) takes 'partition', 'row' or both (templates of the new keys)")
            }
            change = .rekey(partition: partition, row: row)
        default:
            change = .deleteEntities
        }
        return .entities(EntityStep(table: table, filterText: filterText, filter: filter, change: change))
    }

    /// A blob operation: containers named as Azure allows (not azseed's own), prefixes that
    /// could start a blob name, and a move whose source and destination do not overlap (a move
    /// into its own prefix would meet its own blobs again).
    private func blobStep(_ what: String, _ fields: [(key: String, value: Node, keyNode: Node)], _ body: Node) throws(DatasetError) -> BlobStep {
        func field(_ key: String) -> Node? { fields.first(where: { $0.key == key })?.value }
        func container(_ key: String) throws(DatasetError) -> String {
            let name = try reader.string(try reader.required(fields, key, in: what, at: body), "\(what): \(key)")
            if let problem = StorageNames.containerProblem(name) ?? ReservedNames.containerProblem(name) {
                throw reader.error(field(key), "\(what): \(key) '\(Printable.escaped(name))': \(problem)")
            }
            return name
        }
        func prefix(_ key: String) throws(DatasetError) -> String {
            guard let node = field(key) else { throw reader.error(body, "\(what) is missing '\(key)' (\"\" for every blob)") }
            let text = try scalarText(node, "\(what): \(key)")
            guard text.utf8.count <= 1024 else { throw reader.error(node, "\(what): \(key) is longer than a blob name's 1,024 bytes") }
            if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                throw reader.error(node, "\(what): \(key) holds a control character, which no blob name may")
            }
            // A `.` or `..` segment would make URLs that resolve to another blob (or container).
            if text.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." }) {
                throw reader.error(node, "\(what): \(key) '\(Printable.escaped(text))' has a '.' or '..' segment, which names another blob in a URL")
            }
            return text
        }
        let source = try container("container")
        let from = try prefix("prefix")
        switch what {
        case "move-blobs":
            let target = try container("to-container")
            let to = try prefix("to-prefix")
            if source == target && (from.utf8.starts(with: to.utf8) || to.utf8.starts(with: from.utf8)) {
                throw reader.error(
                    body,
                    "\(what): '\(Printable.escaped(from))' and '\(Printable.escaped(to))' overlap in one container; a move must leave the blobs it reads"
                )
            }
            return BlobStep(container: source, prefix: from, change: .move(toContainer: target, toPrefix: to))
        case "set-blob-properties":
            var metadata: [String: String] = [:]
            if let node = field("metadata") {
                for pair in try reader.namedMapping(node, "\(what): metadata") {
                    if let problem = StorageNames.metadataNameProblem(pair.key) {
                        throw reader.error(pair.keyNode, "\(what): metadata name '\(Printable.escaped(pair.key))': \(problem)")
                    }
                    metadata[pair.key] = try scalarText(pair.value, "\(what): metadata \(pair.key)")
                }
            }
            let contentType = try field("content-type").map { (node: Node) throws(DatasetError) -> String in
                try reader.string(node, "\(what): content-type")
            }
            let cacheControl = try field("cache-control").map { (node: Node) throws(DatasetError) -> String in
                try reader.string(node, "\(what): cache-control")
            }
            guard contentType != nil || cacheControl != nil || !metadata.isEmpty else {
                throw reader.error(body, "\(what) changes nothing; give content-type, cache-control or metadata")
            }
            return BlobStep(
                container: source, prefix: from, change: .setProperties(contentType: contentType, cacheControl: cacheControl, metadata: metadata))
        default:
            return BlobStep(container: source, prefix: from, change: .delete)
        }
    }

    /// `value:` (typed by `type:`, else by how YAML wrote it) or `template:` (its text read
    /// as `type:`, String by default).
    private func setValue(_ fields: [(key: String, value: Node, keyNode: Node)], _ body: Node, _ what: String) throws(DatasetError)
        -> EntityChange.SetValue
    {
        func field(_ key: String) -> Node? { fields.first(where: { $0.key == key })?.value }
        var type: EdmType?
        if let node = field("type") {
            let name = try reader.string(node, "\(what): type")
            guard let parsed = EdmType(shortName: name), parsed != .binary else {
                throw reader.error(
                    node, "\(what): type '\(Printable.escaped(name))' is not one of String, Int32, Int64, Double, Boolean, DateTime, Guid")
            }
            type = parsed
        }
        switch (field("value"), field("template")) {
        case (let value?, nil):
            guard case .scalar(let scalar) = value else { throw reader.error(value, "\(what): value must be a single value") }
            let text = YAMLReader.text(scalar)
            let chosen = type ?? Self.inferredType(scalar)
            guard let typed = EdmValue.parse(text, as: chosen) else {
                throw reader.error(value, "\(what): value '\(Printable.escaped(String(text.prefix(64))))' is not \(chosen.withArticle)")
            }
            if case .string(let s) = typed, s.utf16.count > 32 * 1024 {
                throw reader.error(value, "\(what): value is longer than a Table property's 32K characters")
            }
            return .value(typed)
        case (nil, let template?):
            let source = try scalarText(template, "\(what): template")
            guard source.utf8.count <= Self.maxText else { throw reader.error(template, "\(what): template is longer than \(Self.maxText) bytes") }
            do {
                return .template(
                    EntityTemplate(text: try MustacheText.parse(source, maxDepth: Template.maxSectionDepth), source: source, type: type ?? .string))
            } catch {
                throw reader.error(template, "\(what): template: \(error.description)")
            }
        default:
            throw reader.error(body, "\(what) takes one of 'value' or 'template'")
        }
    }

    /// `map:` (old text to new, each a single value, at most ``maxMappings``, no old value
    /// twice, no chain) and `otherwise:` (keep, the default, or fail).
    private func valueMap(_ fields: [(key: String, value: Node, keyNode: Node)], _ body: Node, _ what: String) throws(DatasetError) -> ValueMap {
        func field(_ key: String) -> Node? { fields.first(where: { $0.key == key })?.value }
        let node = try reader.required(fields, "map", in: what, at: body)
        let entries = try reader.namedMapping(node, "\(what): map")
        guard !entries.isEmpty else { throw reader.error(node, "\(what): map is empty; give old: new pairs") }
        guard entries.count <= Self.maxMappings else { throw reader.error(node, "\(what): map holds more than \(Self.maxMappings) pairs") }
        var pairs: [(from: String, to: String)] = []
        for entry in entries {
            if pairs.contains(where: { $0.from.utf8.elementsEqual(entry.key.utf8) }) {
                throw reader.error(entry.keyNode, "\(what): map names '\(Printable.escaped(entry.key))' twice")
            }
            let to = try scalarText(entry.value, "\(what): map \(entry.key)")
            guard to.utf16.count <= 32 * 1024, entry.key.utf16.count <= 32 * 1024 else {
                throw reader.error(entry.value, "\(what): map holds a value longer than a Table property's 32K characters")
            }
            pairs.append((entry.key, to))
        }
        let otherwiseText =
            try field("otherwise").map { (node: Node) throws(DatasetError) -> String in try reader.string(node, "\(what): otherwise") } ?? "keep"
        guard let otherwise = ValueMap.Otherwise(rawValue: otherwiseText) else {
            throw reader.error(field("otherwise"), "\(what): otherwise '\(Printable.escaped(otherwiseText))' is not keep or fail")
        }
        let map = ValueMap(pairs: pairs, otherwise: otherwise)
        if let chain = map.firstChain {
            throw reader.error(
                node,
                "\(what): '\(Printable.escaped(chain))' is mapped from and to: a chain would change values again each time the step runs; map every old value straight to its last"
            )
        }
        return map
    }

    /// A key template (`rekey`, `lookup`): Mustache over the entity's values, at most
    /// ``maxText`` bytes.
    private func template(_ node: Node, _ what: String) throws(DatasetError) -> EntityTemplate {
        let source = try scalarText(node, what)
        guard source.utf8.count <= Self.maxText else { throw reader.error(node, "\(what) is longer than \(Self.maxText) bytes") }
        do {
            return EntityTemplate(text: try MustacheText.parse(source, maxDepth: Template.maxSectionDepth), source: source, type: .string)
        } catch {
            throw reader.error(node, "\(what): \(error.description)")
        }
    }

    /// A plain YAML scalar's type: a whole number is Int32 (Int64 beyond it), a decimal is
    /// Double, true/false Boolean; anything quoted, or other text, is String.
    static func inferredType(_ scalar: Node.Scalar) -> EdmType {
        guard scalar.style == .plain else { return .string }
        let text = scalar.string
        if text == "true" || text == "false" { return .boolean }
        if Int32(text) != nil { return .int32 }
        if Int64(text) != nil { return .int64 }
        if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let value = Double(text), value.isFinite { return .double }
        return .string
    }

    private func scalarText(_ node: Node, _ what: String) throws(DatasetError) -> String {
        guard case .scalar(let scalar) = node else { throw reader.error(node, "\(what) must be a single value") }
        return YAMLReader.text(scalar)
    }

    private func flag(_ node: Node?, _ what: String) throws(DatasetError) -> Bool {
        guard let node else { return false }
        switch try reader.string(node, what) {
        case "true": return true
        case "false": return false
        default: throw reader.error(node, "\(what) must be true or false")
        }
    }
}
