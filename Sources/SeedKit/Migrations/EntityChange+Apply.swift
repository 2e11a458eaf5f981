import AzureStorage
import Crypto
import Foundation

/// What a step makes of one entity.
public enum EntityOutcome: Sendable, Equatable {
    case unchanged
    /// The whole entity to write in its place (a Replace, so removed properties go).
    case replaced(TableEntity)
    case deleted
    /// The entity under new keys (a rekey): inserted, then the old one deleted.
    case rekeyed(TableEntity)
    /// The step cannot be applied to this entity: why, naming the property.
    case failed(String)
}

extension EntityChange {
    /// The step applied to `entity`: a pure function of it, so applying it again to what was
    /// read again gives what a first application would have.
    public func apply(to entity: TableEntity) -> EntityOutcome {
        var changed = entity
        switch self {
        case .renameProperty(let from, let to):
            guard let value = entity[from] else { return .unchanged }
            if entity[to] != nil {
                return .failed("it has both \(Printable.escaped(from)) and \(Printable.escaped(to)); rename one of them first")
            }
            changed[from] = nil
            changed[to] = value
        case .setProperty(let name, let value, let ifMissing):
            if ifMissing, entity[name] != nil { return .unchanged }
            switch value {
            case .value(let value): changed[name] = value
            case .template(let template):
                if let missing = template.missing(in: entity) { return .failed(missing) }
                let text = template.render(for: entity)
                guard let typed = EdmValue.parse(text, as: template.type) else {
                    return .failed("the template made '\(Printable.escaped(String(text.prefix(64))))', which is not \(template.type.withArticle)")
                }
                changed[name] = typed
            }
        case .removeProperty(let name):
            guard entity[name] != nil else { return .unchanged }
            changed[name] = nil
        case .retypeProperty(let name, let type, let onFailure):
            guard let value = entity[name], value.type != type else { return .unchanged }
            if let converted = Retype.convert(value, to: type) {
                changed[name] = converted
            } else {
                switch onFailure {
                case .fail:
                    return .failed(
                        "\(Printable.escaped(name)) = \(value.type.shortName) '\(Printable.escaped(String(value.text.prefix(64))))' is not a \(type.shortName)"
                    )
                case .skip: return .unchanged
                case .remove: changed[name] = nil
                }
            }
        case .replaceInProperty(let name, let find, let replace):
            guard case .string(let text)? = entity[name] else { return .unchanged }
            let replaced = Retype.replacingBytes(of: find, with: replace, in: text)
            guard !replaced.utf8.elementsEqual(text.utf8) else { return .unchanged }
            changed[name] = .string(replaced)
        case .deleteEntities:
            return .deleted
        case .mapValues(let name, let map):
            guard let value = entity[name], value.type != .binary else { return .unchanged }
            let text = value.text
            guard let to = map.to(text) else {
                // A value the map wrote is left as it is: applied again, the step changes nothing.
                if map.writes(text) || map.otherwise == .keep { return .unchanged }
                return .failed("\(Printable.escaped(name)) = '\(Printable.escaped(String(text.prefix(64))))' is in no mapping (otherwise: fail)")
            }
            guard let typed = EdmValue.parse(to, as: value.type) else {
                return .failed(
                    "\(Printable.escaped(name)) is \(value.type.withArticle), and '\(Printable.escaped(String(to.prefix(64))))' (mapped from '\(Printable.escaped(String(text.prefix(64))))') is not"
                )
            }
            changed[name] = typed
        case .splitProperty(let name, let separator, let into):
            guard let value = entity[name] else { return .unchanged }
            guard case .string(let text) = value else {
                return .failed("\(Printable.escaped(name)) is \(value.type.withArticle), not a String to split")
            }
            if let there = into.first(where: { entity[$0] != nil }) {
                return .failed("it has \(Printable.escaped(there)) already, which the split would write")
            }
            let parts = Retype.splitBytes(text, separator: separator, maxParts: into.count)
            guard parts.count == into.count else {
                return .failed(
                    "\(Printable.escaped(name)) = '\(Printable.escaped(String(text.prefix(64))))' has \(parts.count) part\(parts.count == 1 ? "" : "s") and into names \(into.count)"
                )
            }
            changed[name] = nil
            for (property, part) in zip(into, parts) { changed[property] = .string(part) }
        case .joinProperties(let names, let separator, let into):
            let present = names.filter { entity[$0] != nil }
            guard !present.isEmpty else { return .unchanged }
            if let missing = names.first(where: { entity[$0] == nil }) {
                return .failed("it has \(Printable.escaped(present[0])) but not \(Printable.escaped(missing)); join-properties joins all or none")
            }
            if entity[into] != nil { return .failed("it has \(Printable.escaped(into)) already, which the join would write") }
            if let binary = names.first(where: { entity[$0]?.type == .binary }) {
                return .failed("\(Printable.escaped(binary)) is Binary, which has no text to join")
            }
            let joined = names.map { entity[$0]!.text }.joined(separator: separator)
            guard joined.utf16.count <= 32 * 1024 else { return .failed("the joined text is longer than a Table property's 32K characters") }
            for name in names { changed[name] = nil }
            changed[into] = .string(joined)
        case .custom(let change):
            return change.outcome(entity)
        case .lookup(let name, let spec):
            switch spec.value(for: entity) {
            case .success(let found?): changed[name] = found
            case .success(nil): return .unchanged
            case .failure(let why): return .failed("lookup \(Printable.escaped(name)): \(why)")
            }
        case .compute(let name, let expression, let type, let ifMissing):
            if ifMissing, entity[name] != nil { return .unchanged }
            let value: ComputeValue
            switch expression.evaluate(entity) {
            case .success(let v): value = v
            case .failure(let why): return .failed("compute \(Printable.escaped(name)): \(why)")
            }
            let chosen = type ?? entity[name].map(\.type).flatMap { $0 == .binary ? nil : $0 } ?? value.naturalType
            guard let typed = value.edm(chosen) else {
                return .failed(
                    "compute \(Printable.escaped(name)): \(value.kind) '\(Printable.escaped(String(value.text.prefix(64))))' is not \(chosen.withArticle)"
                )
            }
            changed[name] = typed
        case .rekey(let partition, let row):
            if let missing = partition?.missing(in: entity) ?? row?.missing(in: entity) { return .failed(missing) }
            func keys(_ of: TableEntity) -> (String, String) {
                (partition.map { $0.text.render(Self.context(of)) } ?? of.partitionKey, row.map { $0.text.render(Self.context(of)) } ?? of.rowKey)
            }
            let (pk, rk) = keys(entity)
            if pk.isExactly(entity.partitionKey) && rk.isExactly(entity.rowKey) { return .unchanged }
            for (key, what) in [(pk, "PartitionKey"), (rk, "RowKey")] {
                if let problem = StorageNames.keyProblem(key) {
                    return .failed("the new \(what) '\(Printable.escaped(String(key.prefix(64))))' is not a key: \(problem)")
                }
            }
            var moved = entity
            moved.partitionKey = pk
            moved.rowKey = rk
            // Applied to its own result, a rekey must change nothing: else a resumed run, or the
            // scan meeting the new entity, would move it again.
            let (again, againRow) = keys(moved)
            guard again.isExactly(pk) && againRow.isExactly(rk) else {
                return .failed(
                    "its new keys ('\(Printable.escaped(String(pk.prefix(64))))', '\(Printable.escaped(String(rk.prefix(64))))') give other keys again; the templates must give an entity's keys from values a rekey does not change"
                )
            }
            return .rekeyed(moved)
        case .undo(let step):
            guard let before = step.change.undoCandidate(entity), step.selects(before), step.change.apply(to: before) == .replaced(entity) else {
                return .unchanged
            }
            return .replaced(before)
        }
        return changed == entity ? .unchanged : .replaced(changed)
    }
}

extension EntityChange {
    /// Whether the step leaves `entity` as it is only because its value cannot be converted
    /// (`retype-property … on-failure: skip`): a plan counts those apart.
    public func skips(_ entity: TableEntity) -> Bool {
        guard case .retypeProperty(let name, let type, .skip) = self, let value = entity[name], value.type != type else { return false }
        return Retype.convert(value, to: type) == nil
    }
}

extension EntityTemplate {
    /// The template with the entity's keys and properties as its variables (each as its text).
    func render(for entity: TableEntity) -> String { text.render(EntityChange.context(entity)) }

    /// Why the template cannot be rendered for `entity`: a variable outside any section that
    /// the entity does not have (a misspelt name would otherwise render as nothing). Names in
    /// sections (`{{#Capacity}}…{{/Capacity}}`) may be missing: that is what sections are for.
    func missing(in entity: TableEntity) -> String? {
        for case .variable(let name) in text.nodes where name != "." {
            if name.isExactly("PartitionKey") || name.isExactly("RowKey") || entity[name] != nil { continue }
            return "the template reads '\(Printable.escaped(name, quotes: false))', which this entity does not have"
        }
        return nil
    }
}

extension EntityChange {
    /// A template's variables for an entity: its properties' text and its keys.
    static func context(_ entity: TableEntity) -> [ExactString: TemplateValue] {
        var context: [ExactString: TemplateValue] = [:]
        for (name, value) in entity.properties { context[ExactString(name)] = .text(value.text) }
        context[ExactString("PartitionKey")] = .text(entity.partitionKey)
        context[ExactString("RowKey")] = .text(entity.rowKey)
        return context
    }
}

extension EdmType {
    /// `Int32`, as migration files name the type.
    public var shortName: String { String(rawValue.dropFirst(4)) }

    /// `an Int32`, `a String`: for messages.
    public var withArticle: String { (shortName.first.map { "AEIOU".contains($0) } ?? false ? "an " : "a ") + shortName }

    /// The type a migration file names (`String`, `Int32`, `Int64`, `Double`, `Boolean`,
    /// `DateTime`, `Guid`; `Edm.` may lead).
    public init?(shortName: String) {
        let name = shortName.hasPrefix("Edm.") ? String(shortName.dropFirst(4)) : shortName
        guard let type = EdmType.allCases.first(where: { $0.shortName.utf8.elementsEqual(name.utf8) }) else { return nil }
        self = type
    }
}

/// Conversions between Edm types that lose nothing, and byte-wise text replacement.
enum Retype {
    /// `value` as `type` when that is exact: numbers only within range (a Double only when
    /// integral, an integer to Double only within 2^53), text parsed as the type, anything to
    /// its text. Nil when it would not be exact.
    static func convert(_ value: EdmValue, to type: EdmType) -> EdmValue? {
        if type == .string { return value.type == .binary ? nil : .string(value.text) }
        switch (value, type) {
        case (.string(let text), _): return EdmValue.parse(text, as: type)
        case (.int32(let v), .int64): return .int64(Int64(v))
        case (.int32(let v), .double): return .double(Double(v))
        case (.int64(let v), .int32): return Int32(exactly: v).map(EdmValue.int32)
        case (.int64(let v), .double): return v.magnitude <= 1 << 53 ? .double(Double(v)) : nil
        case (.double(let v), .int32): return Int32(exactly: v).map(EdmValue.int32)
        case (.double(let v), .int64): return Int64(exactly: v).map(EdmValue.int64)
        default: return nil
        }
    }

    /// `text` cut at its first `maxParts - 1` occurrences of `separator`, matching bytes; the
    /// last part takes the rest. Fewer parts when there are fewer separators.
    static func splitBytes(_ text: String, separator: String, maxParts: Int) -> [String] {
        let source = Array(text.utf8)
        let pattern = Array(separator.utf8)
        guard !pattern.isEmpty else { return [text] }
        var parts: [String] = []
        var start = 0
        var i = 0
        while i + pattern.count <= source.count, parts.count < maxParts - 1 {
            if source[i..<(i + pattern.count)].elementsEqual(pattern) {
                parts.append(String(decoding: source[start..<i], as: UTF8.self))
                i += pattern.count
                start = i
            } else {
                i += 1
            }
        }
        parts.append(String(decoding: source[start...], as: UTF8.self))
        return parts
    }

    /// Every non-overlapping occurrence of `find` in `text` replaced, left to right, matching
    /// bytes (as Azure compares strings), never Swift's canonical equivalence.
    static func replacingBytes(of find: String, with replace: String, in text: String) -> String {
        let source = Array(text.utf8)
        let pattern = Array(find.utf8)
        let replacement = Array(replace.utf8)
        guard !pattern.isEmpty, source.count >= pattern.count else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(source.count)
        var i = 0
        while i < source.count {
            if i + pattern.count <= source.count, source[i] == pattern[0], source[i..<(i + pattern.count)].elementsEqual(pattern) {
                out += replacement
                i += pattern.count
            } else {
                out.append(source[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension EntityStep {
    /// The property a step that is not idempotent writes (`replace-in-property`, a `set-property`
    /// whose template reads itself); nil for the others.
    public var writtenProperty: String? {
        guard !change.isIdempotent else { return nil }
        return writtenPropertyOfChange
    }

    /// The property the step's change writes, idempotent or not.
    var writtenPropertyOfChange: String? {
        switch change {
        case .replaceInProperty(let name, _, _), .setProperty(let name, _, _), .compute(let name, _, _, _), .lookup(let name, _): return name
        case .undo(let step): return step.writtenPropertyOfChange
        default: return nil
        }
    }

    /// A digest of the value ``writtenProperty`` holds in `entity` (its type and text; `absent`
    /// when it has none): recorded for each entity of a pending batch with the value the step
    /// writes, and compared after a stop with what is there, to tell whether the batch was
    /// written even when someone has changed the entity since.
    public func writtenDigest(_ entity: TableEntity) -> String {
        if case .custom = change, !change.isIdempotent {
            // Code may write any property: the whole entity, its properties in byte order.
            return SHA256.hash(data: Data(entity.canonicalText.utf8)).prefix(12).map { String(format: "%02x", $0) }.joined()
        }
        guard let name = writtenProperty, let value = entity[name] else { return "absent" }
        let digest = SHA256.hash(data: Data((value.type.rawValue + "\u{0}" + value.text).utf8))
        return digest.prefix(12).map { String(format: "%02x", $0) }.joined()
    }
}
