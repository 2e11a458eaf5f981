import AzureStorage
import Foundation

/// One kind's fields: references, values copied through them, blob URLs and templates.
extension Inference {
    // MARK: - one kind

    mutating func describe(_ index: Int) {
        var kind = kinds[index]
        let o = kind.observation
        let entities = kind.rows ? (o.entities ?? o.sample) : o.sample
        var handled = Set<String>()

        // References: the ref field, then the property it fills. A second reference to the
        // same kind that always names the same entity as the first is a value copied from it.
        var refFields: [(name: String, yaml: String)] = []
        var kept: [Reference] = []
        for reference in kind.references {
            if let first = kept.first(where: { $0.target == reference.target }),
                entities.allSatisfy({ e in
                    e[reference.property] == nil || referenced(e, first).map { Self.value($0, reference.via) == e[reference.property] } ?? false
                })
            {
                refFields.append((reference.property, "{ from: \(Self.path(first.field, reference.via)) }"))
                handled.insert(reference.property)
                summary.append(
                    "\(kind.name).\(reference.property) equals the referenced \(kinds[reference.target].name)'s \(reference.via) in every sampled entity: from"
                )
                continue
            }
            kept.append(reference)
            refFields.append((reference.field, "{ ref: \(kinds[reference.target].name) }"))
            refFields.append((reference.property, "{ from: \(Self.path(reference.field, reference.via)) }"))
            // RowKeys are distinct in the dataset too; another property of the target need not
            // be (generated without copied values, it may repeat): it keys nothing on its own.
            kind.domains[reference.property] = reference.via == "RowKey" ? Double(kinds[reference.target].observation.count) : 1
            handled.insert(reference.property)
            summary.append(
                "\(kind.name).\(reference.property) holds \(reference.via == "RowKey" ? "RowKeys" : reference.via + " values") of partition '\(kinds[reference.target].partition)': ref + from"
            )
        }
        kind.references = kept
        // Values copied from the referenced entity.
        for name in o.propertyNames where !handled.contains(name) {
            for reference in kind.references {
                let pairs = entities.compactMap { e -> (EdmValue, TableEntity)? in
                    guard let v = e[name], let r = referenced(e, reference) else { return nil }
                    return (v, r)
                }
                guard pairs.count >= 2 else { continue }
                let target = kinds[reference.target].observation
                if let q = target.propertyNames.first(where: { q in pairs.allSatisfy { $0.1[q] == $0.0 } }) {
                    refFields.append((name, "{ from: \(Self.path(reference.field, q)) }"))
                    handled.insert(name)
                    summary.append("\(kind.name).\(name) equals the referenced \(kinds[reference.target].name)'s \(q) in every sampled entity: from")
                    break
                }
            }
        }
        // Blob URLs and templates come last: they read the other fields.
        var derivedFields: [(name: String, yaml: String)] = []
        var helperFields: [(name: String, yaml: String)] = []
        for name in o.propertyNames where !handled.contains(name) {
            guard let p = o.property(name), p.type == .string, let (container, names) = blobURLs(name, entities, p) else { continue }
            let helper = uniqueName(name + "Blob", in: o)
            if kind.rows {
                kind.helperColumns.append((helper, names))
            } else {
                let list = Array(Set(names.values)).sorted { $0.byteOrder($1) < 0 }.prefix(input.sample)
                // Each entity its own blob when the account shows that and the list holds the count.
                let unique = Self.isUnique(p, o) && list.count >= o.count ? ", unique: true" : ""
                helperFields.append((helper, "{ pick: [\(list.map(Self.quoted).joined(separator: ", "))]\(unique) }"))
            }
            derivedFields.append((name, "{ blobUrl: { container: \(Self.name(container)), name: \(Self.quoted("{{\(helper)}}")) } }"))
            kind.omit.append(helper)
            handled.insert(name)
            summary.append("\(kind.name).\(name) holds URLs of blobs in container '\(container)': blobUrl")
        }
        // A property made a template is no variable of another one: two equal columns would
        // otherwise each be a template of the other, and neither could be generated.
        var templated = Set<String>()
        for name in o.propertyNames where !handled.contains(name) {
            guard let p = o.property(name), p.type == .string, entities.count >= 2, p.present == o.count,
                (p.distinctCount ?? Int.max) > max(1, entities.count / 2) || kind.rows,
                let template = inferTemplate(name, entities, kind, excluding: templated), mayCopyWords(of: template, kind)
            else { continue }
            templated.insert(name)
            // A file name of letters, digits, '-' and '_' only: a property name never picks
            // where scan writes (no '/', no '..').
            var stem = Self.fileStem(
                "\(kind.name)-"
                    + String(name.unicodeScalars.filter { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-") }))
            while templates.contains(where: { $0.name == stem + ".mustache" }) { stem += "_" }
            let file = stem + ".mustache"
            templates.append((file, template))
            derivedFields.append((name, "{ template: \(Self.path(file)) }"))
            handled.insert(name)
            summary.append(
                "\(kind.name).\(name) is the same words around \(Self.variables(template).joined(separator: ", ")) in every sampled entity: template \(file)"
            )
        }
        kind.fields = refFields + helperFields
        if kind.rows {
            kind.columns = o.propertyNames.filter { !handled.contains($0) } + kind.helperColumns.map(\.name)
        } else {
            for name in o.propertyNames where !handled.contains(name) {
                if let relative = relativeDate(name, o, entities, kind) {
                    kind.fields.append((name, relative))
                    continue
                }
                kind.fields.append((name, generator(name, o.property(name)!, o, entities, &kind)))
            }
        }
        kind.fields += derivedFields
        chooseKey(&kind)
        if o.allRowKeysAreGUIDs, o.count > 0 {
            summary.append("\(kind.name): RowKeys are GUIDs; the dataset makes name-based ones from its key (\(kind.key.joined(separator: ", ")))")
        } else if o.count > 0, kind.copiedFile == nil {
            summary.append(
                "\(kind.name): RowKeys are not GUIDs, but a generated kind's are: name-based ones from its key (\(kind.key.joined(separator: ", "))); values that held the account's RowKeys hold these"
            )
        }
        kinds[index] = kind
    }

    /// A date column that follows a referenced entity's date in every sampled entity, within a
    /// span much shorter than the column's own range: `date: {after: ref.Date, within: N}`.
    mutating func relativeDate(_ name: String, _ o: PartitionObservation, _ entities: [TableEntity], _ kind: KindDraft) -> String? {
        guard let p = o.property(name), p.type == .dateTime, p.present == o.count, let low = p.minTicks, let high = p.maxTicks else { return nil }
        for reference in kind.references {
            let target = kinds[reference.target].observation
            for q in target.propertyNames {
                guard let t = target.property(q), t.type == .dateTime, t.present == target.count else { continue }
                var longest: Int64 = -1
                var pairs = 0
                for e in entities {
                    guard case .dateTime(let date)? = e[name], let r = referenced(e, reference), case .dateTime(let start)? = r[q] else { continue }
                    let gap = date.ticks - start.ticks
                    if gap < 0 {
                        longest = -1
                        pairs = 0
                        break
                    }
                    longest = max(longest, gap)
                    pairs += 1
                }
                guard pairs >= 2, pairs == entities.count, longest >= 0, longest * 2 < high - low else { continue }
                let resolution = max(p.dateResolution, EdmDateTime.ticksPerSecond)
                // Without copied values the longest gap (one entity's) is rounded up to whole days.
                let (unit, suffix) =
                    resolution >= EdmDateTime.ticksPerDay || !input.copyValues
                    ? (EdmDateTime.ticksPerDay, "d") : (3600 * EdmDateTime.ticksPerSecond, "h")
                let within = (longest + resolution + unit - 1) / unit
                summary.append(
                    "\(kind.name).\(name) follows the referenced \(kinds[reference.target].name)'s \(q) by at most \(within)\(suffix) in every sampled entity: a date after it"
                )
                return
                    "{ date: { after: \(Self.path(reference.field, q)), within: \(within)\(suffix) }, resolution: \(Self.resolutionName(p.dateResolution)) }"
            }
        }
        return nil
    }

    /// Whether a template's fixed words may reach the dataset: always with `--copy-values`,
    /// else when the partition has enough entities and the words hold no address, URL or number.
    func mayCopyWords(of template: String, _ kind: KindDraft) -> Bool {
        guard !input.copyValues else { return true }
        var words = template
        for variable in Self.variables(template) { words = words.replacingOccurrences(of: "{{\(variable)}}", with: " ") }
        return kind.observation.count >= ValuePrivacy.minimumEntities
            && !words.contains("@") && !words.contains("://") && words.unicodeScalars.filter({ ("0"..."9").contains($0) }).count < 7
    }

    func uniqueName(_ base: String, in o: PartitionObservation) -> String {
        var name = base
        while o.property(name) != nil { name += "_" }
        return name
    }

    /// The container and per-entity blob names when every value is a URL of a blob the scan listed.
    func blobURLs(_ name: String, _ entities: [TableEntity], _ p: PropertyObservation) -> (String, [String: String])? {
        guard !entities.isEmpty, !input.blobEndpoint.isEmpty else { return nil }
        for container in input.containers {
            let prefix = input.blobEndpoint + "/" + container.name + "/"
            let known = Set(container.blobs.map { ExactString($0.name) })
            var names: [String: String] = [:]
            var all = true
            for e in entities {
                guard case .string(let url)? = e[name] else { continue }
                guard url.hasPrefix(prefix), let blob = String(url.dropFirst(prefix.count)).removingPercentEncoding, known.contains(ExactString(blob))
                else {
                    all = false
                    break
                }
                names[e.rowKey] = container.writtenName(blob)
            }
            if all, !names.isEmpty { return (container.name, names) }
        }
        return nil
    }

    /// The text of property `name` with other properties' values (and referenced entities'
    /// as `ref.Property`) replaced by `{{…}}`, when that gives one text for every entity.
    func inferTemplate(_ name: String, _ entities: [TableEntity], _ kind: KindDraft, excluding templated: Set<String> = []) -> String? {
        var result: String?
        for e in entities {
            guard case .string(let text)? = e[name], !text.contains("{{"), !text.contains("}}") else { return nil }
            var candidates: [(variable: String, value: String)] = []
            // Only properties the kind has fields for: an entity still holds a name left out as
            // another's twin in other bytes (``PartitionObservation/dropCanonicalTwins()``).
            for (other, value) in e.properties
            where !other.isExactly(name) && !templated.contains(other) && kind.observation.property(other) != nil {
                if case .string(let s) = value, s.count >= 3 { candidates.append((other, s)) }
            }
            for reference in kind.references {
                guard let target = referenced(e, reference) else { continue }
                for (other, value) in target.properties where kinds[reference.target].observation.property(other) != nil {
                    if case .string(let s) = value, s.count >= 3 { candidates.append(("\(reference.field).\(other)", s)) }
                }
            }
            candidates.sort { a, b in a.value.count != b.value.count ? a.value.count > b.value.count : a.variable.byteOrder(b.variable) < 0 }
            var template = text
            var markers: [(String, String)] = []
            for (i, candidate) in candidates.enumerated() where template.contains(candidate.value) {
                let marker = "\u{1}\(i)\u{2}"
                template = template.replacingOccurrences(of: candidate.value, with: marker)
                markers.append((marker, "{{\(candidate.variable)}}"))
            }
            for (marker, variable) in markers { template = template.replacingOccurrences(of: marker, with: variable) }
            guard template.contains("{{") else { return nil }
            if let result, !result.isExactly(template) { return nil }
            result = template
        }
        return result
    }

    static func variables(_ template: String) -> [String] {
        var out: [String] = []
        var rest = Substring(template)
        while let open = rest.range(of: "{{"), let close = rest.range(of: "}}", range: open.upperBound..<rest.endIndex) {
            let v = String(rest[open.upperBound..<close.lowerBound])
            if !out.contains(v) { out.append(v) }
            rest = rest[close.upperBound...]
        }
        return out
    }
}
