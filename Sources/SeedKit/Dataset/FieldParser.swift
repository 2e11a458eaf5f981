import AzureStorage
import Foundation
import Yams

/// Parses one entry of a kind's `fields:` mapping into a ``FieldGenerator``.
struct FieldParser {
    let reader: YAMLReader
    let templates: URL
    let field: String
    let kind: String

    static let generators = ["const", "pick", "ref", "from", "date", "int", "double", "sequence", "template", "blobUrl", "fake"]
    /// What a field may say beside its generator.
    static let modifiers = ["type", "resolution", "weights", "presence", "unique", "round", "of", "domain", "exact"]

    /// `unique: true|false`.
    func unique(_ node: Node) throws(DatasetError) -> Bool { try flag(node, "unique") }

    /// `exact: true|false`, on a pick with weights only.
    func exact(_ node: Node) throws(DatasetError) -> Bool {
        let exact = try flag(node, "exact")
        let pairs = try reader.mapping(node, "field '\(field)' of kind '\(kind)'", allowed: FieldParser.generators + FieldParser.modifiers)
        if exact, !pairs.contains(where: { $0.key == "weights" }) {
            throw reader.error(node, "field '\(field)' of kind '\(kind)': 'exact' applies only to a pick with weights")
        }
        return exact
    }

    private func flag(_ node: Node, _ name: String) throws(DatasetError) -> Bool {
        let what = "field '\(field)' of kind '\(kind)'"
        let pairs = try reader.mapping(node, what, allowed: FieldParser.generators + FieldParser.modifiers)
        guard let value = pairs.first(where: { $0.key == name })?.value else { return false }
        switch try reader.string(value, "\(what), \(name)") {
        case "true": return true
        case "false": return false
        default: throw reader.error(value, "\(what): \(name) is true or false")
        }
    }

    /// `presence: p` (0 < p ≤ 1): the fraction of entities that have the property.
    func presence(_ node: Node) throws(DatasetError) -> Double? {
        let what = "field '\(field)' of kind '\(kind)'"
        guard
            let value = try reader.mapping(node, what, allowed: FieldParser.generators + FieldParser.modifiers)
                .first(where: { $0.key == "presence" })?.value
        else { return nil }
        let p = try reader.double(value, "\(what), presence")
        guard p > 0, p <= 1 else { throw reader.error(value, "\(what): presence is a fraction of entities, above 0 and at most 1") }
        return p == 1 ? nil : p
    }

    func parse(_ node: Node) throws(DatasetError) -> FieldGenerator {
        let what = "field '\(field)' of kind '\(kind)'"
        let pairs = try reader.mapping(node, what, allowed: FieldParser.generators + FieldParser.modifiers)
        let chosen = pairs.filter { FieldParser.generators.contains($0.key) }
        guard chosen.count == 1, let (generator, value, _) = chosen.first else {
            throw reader.error(node, "\(what) needs exactly one of: \(FieldParser.generators.joined(separator: ", "))")
        }
        var type: EdmType?
        if let typeNode = pairs.first(where: { $0.key == "type" })?.value { type = try reader.edmType(typeNode, "\(what), type") }
        if let resolution = pairs.first(where: { $0.key == "resolution" }), generator != "date" {
            throw reader.error(resolution.keyNode, "\(what): 'resolution' applies only to a date field")
        }
        if let weights = pairs.first(where: { $0.key == "weights" }), generator != "pick" {
            throw reader.error(weights.keyNode, "\(what): 'weights' applies only to a pick field")
        }
        if let round = pairs.first(where: { $0.key == "round" }), generator != "double" {
            throw reader.error(round.keyNode, "\(what): 'round' applies only to a double field")
        }
        for modifier in ["of", "domain"] {
            if let node = pairs.first(where: { $0.key == modifier }), generator != "fake" {
                throw reader.error(node.keyNode, "\(what): '\(modifier)' applies only to a fake e-mail field")
            }
        }
        switch generator {
        case "const":
            return .const(try reader.value(value, what, type: type))
        case "pick":
            let items = try reader.sequence(value, "\(what), pick")
            if items.isEmpty { throw reader.error(value, "\(what): pick needs at least one value") }
            var values: [EdmValue] = []
            for item in items { values.append(try reader.value(item, "\(what), pick", type: type)) }
            guard let weightsNode = pairs.first(where: { $0.key == "weights" })?.value else { return .pick(values) }
            var weights: [UInt64] = []
            for item in try reader.sequence(weightsNode, "\(what), weights") {
                let w = try reader.int(item, "\(what), weights")
                guard w >= 0 else { throw reader.error(item, "\(what): a weight is a whole number ≥ 0") }
                weights.append(UInt64(w))
            }
            guard weights.count == values.count else {
                throw reader.error(
                    weightsNode, "\(what): weights has \(weights.count) entries for \(values.count) pick values; give one weight per value")
            }
            guard weights.reduce(0, { $0 &+ $1 }) > 0, weights.reduce(UInt64(0), { $0 > UInt64.max - $1 ? UInt64.max : $0 + $1 }) < UInt64.max else {
                throw reader.error(weightsNode, "\(what): the weights must add up to at least 1")
            }
            return .weightedPick(values, weights: weights)
        case "ref":
            try noType(type, node, what)
            return .ref(kind: try reader.string(value, "\(what), ref"))
        case "from":
            try noType(type, node, what)
            let path = try reader.string(value, "\(what), from")
            let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw reader.error(value, "\(what): from must be 'refField.Property', not '\(path)'")
            }
            return .from(ref: parts[0], property: parts[1])
        case "date":
            var window: ResolvedWindow?
            var after: (ref: String, property: String, within: Int64)?
            if case .mapping = value,
                try reader.mapping(value, "\(what), date", allowed: ["from", "to", "days", "after", "within"]).contains(where: {
                    $0.key == "after"
                })
            {
                after = try relativeDate(value, what)
            } else if case .mapping = value {
                window = try fieldWindow(value, what)
            } else if try reader.string(value, "\(what), date") != "window" {
                throw reader.error(
                    value,
                    "\(what): date must be 'window' (the dataset's window, or \(Setting.windowStart)/\(Setting.windowEnd)) or {from: YYYY-MM-DD, to: YYYY-MM-DD}"
                )
            }
            if let type, type != .dateTime { throw reader.error(node, "\(what): a date is always Edm.DateTime") }
            var resolution = EdmDateTime.ticksPerMinute
            if let r = pairs.first(where: { $0.key == "resolution" })?.value {
                let text = try reader.string(r, "\(what), resolution")
                switch text {
                case "second": resolution = EdmDateTime.ticksPerSecond
                case "minute": resolution = EdmDateTime.ticksPerMinute
                case "hour": resolution = 60 * EdmDateTime.ticksPerMinute
                case "day": resolution = EdmDateTime.ticksPerDay
                default: throw reader.error(r, "\(what): resolution '\(text)' is not second, minute, hour or day")
                }
            }
            if let after {
                guard after.within >= resolution else {
                    throw reader.error(value, "\(what): within is shorter than the resolution; widen it or choose a finer resolution")
                }
                return .dateAfter(ref: after.ref, property: after.property, withinTicks: after.within, resolutionTicks: resolution)
            }
            return .date(resolutionTicks: resolution, window: window)
        case "int":
            let bounds = try range(value, what) { (n: Node, w: String) throws(DatasetError) in try reader.int(n, w) }
            let intType = type ?? (Int32(exactly: bounds.0) != nil && Int32(exactly: bounds.1) != nil ? .int32 : .int64)
            guard intType == .int32 || intType == .int64 else { throw reader.error(node, "\(what): an int is Edm.Int32 or Edm.Int64") }
            if intType == .int32 && (Int32(exactly: bounds.0) == nil || Int32(exactly: bounds.1) == nil) {
                throw reader.error(value, "\(what): the range does not fit Edm.Int32")
            }
            guard bounds.0 <= bounds.1 else { throw reader.error(value, "\(what): int range [min, max] needs min ≤ max") }
            return .int(min: bounds.0, max: bounds.1, type: intType)
        case "double":
            if let type, type != .double { throw reader.error(node, "\(what): a double is always Edm.Double") }
            let bounds = try range(value, what) { (n: Node, w: String) throws(DatasetError) in try reader.double(n, w) }
            guard bounds.0 < bounds.1 else { throw reader.error(value, "\(what): double range [min, max) needs min < max") }
            // Finite bounds whose width is finite too: else every value would be infinite.
            guard bounds.0.isFinite, bounds.1.isFinite, (bounds.1 - bounds.0).isFinite else {
                throw reader.error(value, "\(what): the range [\(bounds.0), \(bounds.1)) is too wide for a double; narrow it")
            }
            var round: Int?
            if let node = pairs.first(where: { $0.key == "round" })?.value {
                let places = try reader.int(node, "\(what), round")
                guard (0...15).contains(places) else { throw reader.error(node, "\(what): round is a number of decimal places, 0 to 15") }
                // Past 2^53 a double has no decimals left to round (and scaling it would overflow).
                guard max(abs(bounds.0), abs(bounds.1)) * pow(10, Double(places)) < 0x1p53 else {
                    throw reader.error(node, "\(what): values this large have no \(places) decimal places to round to; lower round or the range")
                }
                round = Int(places)
            }
            return .double(min: bounds.0, max: bounds.1, round: round)
        case "sequence":
            var start: Int64 = 1
            var step: Int64 = 1
            if case .mapping = value {
                for (key, v, _) in try reader.mapping(value, "\(what), sequence", allowed: ["start", "step"]) {
                    if key == "start" {
                        start = try reader.int(v, "\(what), sequence.start")
                    } else {
                        step = try reader.int(v, "\(what), sequence.step")
                    }
                }
            } else {
                start = try reader.int(value, "\(what), sequence")
            }
            let seqType = type ?? .int32
            guard seqType == .int32 || seqType == .int64 || seqType == .string else {
                throw reader.error(node, "\(what): a sequence is Edm.Int32, Edm.Int64 or Edm.String")
            }
            return .sequence(start: start, step: step, type: seqType)
        case "fake":
            if let type, type != .string { throw reader.error(node, "\(what): a fake value is always Edm.String") }
            let kind = try reader.string(value, "\(what), fake")
            let of = try pairs.first(where: { $0.key == "of" }).map { (pair) throws(DatasetError) in try reader.string(pair.value, "\(what), of") }
            let domainNode = pairs.first(where: { $0.key == "domain" })
            if kind != "email", let extra = pairs.first(where: { $0.key == "of" }) ?? domainNode {
                throw reader.error(extra.keyNode, "\(what): '\(extra.key)' applies only to fake: email")
            }
            switch kind {
            case "name": return .fake(.name)
            case "phone": return .fake(.phone)
            case "email":
                var domain = "example.com"
                if let domainNode {
                    domain = try reader.string(domainNode.value, "\(what), domain")
                    let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
                    guard labels.count >= 2,
                        labels.allSatisfy({ label in
                            !label.isEmpty && label.count <= 63
                                && label.unicodeScalars.allSatisfy {
                                    $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-")
                                }
                        })
                    else {
                        throw reader.error(
                            domainNode.value, "\(what): domain '\(domain)' is not a domain name (letters, digits and '-', dot-separated)")
                    }
                }
                return .fake(.email(of: of, domain: domain))
            default:
                throw reader.error(value, "\(what): fake is name, email or phone, not '\(kind)'")
            }
        case "template":
            if let type, type != .string { throw reader.error(node, "\(what): a template is always Edm.String") }
            let name = try reader.string(value, "\(what), template")
            // A template is a file of the templates folder, never a path leading out of it.
            let url = templates.appendingPathComponent(name).standardizedFileURL
            let base = templates.standardizedFileURL.resolvingSymlinksInPath().path
            guard !name.hasPrefix("/"), !name.split(separator: "/").contains(".."), url.resolvingSymlinksInPath().path.hasPrefix(base + "/") else {
                throw reader.error(value, "\(what): template '\(name)' leads out of the templates folder; name a file inside it")
            }
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw reader.error(value, "\(what): template '\(url.relativePathForMessages)' not found")
            }
            guard let source = String(data: data, encoding: .utf8) else {
                throw reader.error(value, "\(what): template '\(url.relativePathForMessages)' is not UTF-8 text")
            }
            return .template(try Template(source: source, origin: url.relativePathForMessages))
        default:
            if let type, type != .string { throw reader.error(node, "\(what): a blob URL is always Edm.String") }
            let parts = try reader.mapping(value, "\(what), blobUrl", allowed: ["container", "name"])
            let container = try reader.string(try reader.required(parts, "container", in: "\(what), blobUrl", at: value), "container")
            let nameNode = try reader.required(parts, "name", in: "\(what), blobUrl", at: value)
            let origin = "\(reader.file):\(YAMLReader.line(of: nameNode) ?? 0)"
            return .blobURL(container: container, name: try Template(source: try reader.string(nameNode, "name"), origin: origin))
        }
    }

    /// `{after: ref.Property, within: 30d}` (`d`, `h`, `m` or `s`; at most 100 years).
    private func relativeDate(_ node: Node, _ what: String) throws(DatasetError) -> (ref: String, property: String, within: Int64) {
        let pairs = try reader.mapping(node, "\(what), date", allowed: ["after", "within"])
        let afterNode = try reader.required(pairs, "after", in: "\(what), date", at: node)
        let path = try reader.string(afterNode, "\(what), date.after")
        let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw reader.error(afterNode, "\(what): date.after must be 'refField.Property', not '\(path)'")
        }
        let withinNode = try reader.required(pairs, "within", in: "\(what), date", at: node)
        let text = try reader.string(withinNode, "\(what), date.within")
        let units: [Character: Int64] = [
            "d": EdmDateTime.ticksPerDay, "h": 3600 * EdmDateTime.ticksPerSecond, "m": EdmDateTime.ticksPerMinute, "s": EdmDateTime.ticksPerSecond,
        ]
        guard let unit = text.last.flatMap({ units[$0] }), let n = Int64(text.dropLast()), n > 0, n <= 36_500 * EdmDateTime.ticksPerDay / unit else {
            throw reader.error(withinNode, "\(what): date.within '\(text)' is not a duration like 30d, 12h, 90m or 45s (at most 100 years)")
        }
        return (parts[0], parts[1], n * unit)
    }

    /// A date field's own window: `{from, to}` or `{from, days}`, absolute dates (the dataset's
    /// window and `--from`/`--to` do not move it).
    private func fieldWindow(_ node: Node, _ what: String) throws(DatasetError) -> ResolvedWindow {
        var from: EdmDateTime?
        var to: EdmDateTime?
        var days: Int64?
        for (key, value, _) in try reader.mapping(node, "\(what), date", allowed: ["from", "to", "days"]) {
            if key == "days" {
                let n = try reader.int(value, "\(what), date.days")
                guard n > 0, n <= 3_000_000 else { throw reader.error(value, "\(what): date.days must be a positive number of days") }
                days = n
                continue
            }
            let text = try reader.string(value, "\(what), date.\(key)")
            guard let date = EdmDateTime(iso8601: text), date.isInAzureRange || (key == "to" && date == EdmDateTime.endOfRange) else {
                throw reader.error(value, "\(what): date.\(key) '\(text)' is not a date (YYYY-MM-DD) or ISO 8601 timestamp from 1601 to 9999")
            }
            if key == "from" { from = date } else { to = date }
        }
        guard let from else { throw reader.error(node, "\(what): date needs 'from' (and 'to' or 'days')") }
        if to != nil && days != nil { throw reader.error(node, "\(what): date takes 'to' or 'days', not both") }
        guard let end = to ?? days.map({ EdmDateTime(ticks: from.ticks + $0 * EdmDateTime.ticksPerDay) }) else {
            throw reader.error(node, "\(what): date needs 'to' or 'days' beside 'from'")
        }
        guard from < end, end.ticks <= EdmDateTime.endOfRange.ticks else {
            throw reader.error(
                node, "\(what): date.from \(from.shortISO8601) is not before date.to \(end.shortISO8601) (or the end passes 9999-12-31)")
        }
        return ResolvedWindow(from: from, to: end)
    }

    private func noType(_ type: EdmType?, _ node: Node, _ what: String) throws(DatasetError) {
        if type != nil { throw reader.error(node, "\(what): 'type' does not apply here") }
    }

    private func range<T>(_ node: Node, _ what: String, _ read: (Node, String) throws(DatasetError) -> T) throws(DatasetError) -> (T, T) {
        let items = try reader.sequence(node, what)
        guard items.count == 2 else { throw reader.error(node, "\(what): a range is [min, max]") }
        return (try read(items[0], "\(what), min"), try read(items[1], "\(what), max"))
    }
}
