import AzureStorage

/// Cross-checks a parsed dataset: names, references, keys and template variables.
struct DatasetValidator {
    let dataset: Dataset

    private func fail(_ line: Int, _ message: Phrase) -> DatasetError {
        DatasetError(file: dataset.file, line: line, message)
    }

    func validate() throws(DatasetError) {
        var containerNames: Set<String> = []
        for c in dataset.containers {
            if let problem = StorageNames.containerProblem(c.name) ?? ReservedNames.containerProblem(c.name) {
                throw fail(c.line, "container '\(c.name)': \(problem)")
            }
            if !containerNames.insert(c.name).inserted { throw fail(c.line, "container '\(c.name)' is declared twice") }
        }
        var tableNames: Set<String> = []
        var kindNames: Set<String> = []
        for t in dataset.tables {
            if let problem = StorageNames.tableProblem(t.name) ?? ReservedNames.tableProblem(t.name) {
                throw fail(t.line, "table '\(t.name)': \(problem)")
            }
            if !tableNames.insert(t.name.lowercased()).inserted { throw fail(t.line, "table '\(t.name)' is declared twice") }
            for k in t.kinds where !kindNames.insert(k.name).inserted {
                throw fail(k.line, "kind '\(k.name)' is declared twice")
            }
        }
        for kind in dataset.kinds { try validate(kind) }
        try checkReferenceCycles()
    }

    private func validate(_ kind: KindSpec) throws(DatasetError) {
        let what = "kind '\(kind.name)'"
        if let problem = StorageNames.keyProblem(kind.partition) { throw fail(kind.line, "\(what), partition '\(kind.partition)': \(problem)") }
        if kind.partition.isEmpty { throw fail(kind.line, "\(what): partition must not be empty") }
        // Copied entities are checked line by line when they are read (``KindEngine``); their
        // partition is theirs alone, and no kind draws from them (their RowKeys are not the
        // generator's, so no key order can be merged with another kind's).
        if kind.entitiesFile != nil {
            if let other = dataset.kinds.first(where: { $0.name != kind.name && $0.table == kind.table && $0.partition.isExactly(kind.partition) }) {
                throw fail(kind.line, "\(what) copies its entities, so its partition is its own; kind '\(other.name)' shares it")
            }
            for other in dataset.kinds {
                for field in other.fields {
                    if case .ref(kind.name) = field.generator {
                        throw fail(
                            field.line,
                            "kind '\(other.name)', field '\(field.name)': kind '\(kind.name)' copies its entities; a ref draws from generated or row kinds only"
                        )
                    }
                }
            }
            return
        }
        switch (kind.rows, kind.count) {
        case (nil, nil): throw fail(kind.line, "\(what) needs 'rows' (explicit entities) or 'count' (generated ones)")
        case (.some, .some): throw fail(kind.countLine, "\(what) takes 'rows' or 'count', not both")
        case (.some(let rows), nil) where rows.isEmpty: throw fail(kind.line, "\(what): rows is empty")
        default: break
        }
        if kind.key.isEmpty { throw fail(kind.line, "\(what): key needs at least one field") }

        let columns = kind.columns
        for row in kind.rows ?? [] {
            let names = row.values.map(\.0)
            if let missing = columns.first(where: { !names.contains($0) }) { throw fail(row.line, "\(what): this row is missing '\(missing)'") }
            if let extra = names.first(where: { !columns.contains($0) }) {
                throw fail(row.line, "\(what): this row has '\(extra)', which the first row does not")
            }
        }
        for column in columns {
            if let problem = StorageNames.propertyProblem(column), !kind.omit.contains(column) {
                throw fail(kind.rows?.first?.line ?? kind.line, "\(what), column '\(column)': \(problem)")
            }
            if kind.field(named: column) != nil { throw fail(kind.line, "\(what): '\(column)' is both a row column and a field") }
        }

        // Names visible so far, in evaluation order: columns, then each field after it is made.
        var known = Set(columns)
        var refs: [String: KindSpec] = [:]
        for field in kind.fields {
            if known.contains(field.name) || refs[field.name] != nil { throw fail(field.line, "\(what): field '\(field.name)' is defined twice") }
            if !field.isRef, let problem = StorageNames.propertyProblem(field.name), !kind.omit.contains(field.name) {
                throw fail(field.line, "\(what), field '\(field.name)': \(problem)")
            }
            switch field.generator {
            case .ref(let target):
                guard let targetKind = dataset.kind(named: target) else {
                    throw fail(field.line, "\(what), field '\(field.name)': no kind named '\(target)'")
                }
                if target == kind.name { throw fail(field.line, "\(what), field '\(field.name)': a kind cannot reference itself") }
                refs[field.name] = targetKind
                continue
            case .from(let ref, let property):
                guard let target = refs[ref] else {
                    throw fail(field.line, "\(what), field '\(field.name)': '\(ref)' is not a ref field defined before it")
                }
                if !["RowKey", "PartitionKey"].contains(property) && !target.storedNames.contains(property) {
                    throw fail(field.line, "\(what), field '\(field.name)': kind '\(target.name)' has no stored property '\(property)'")
                }
            case .fake(.email(let of?, _)):
                guard known.contains(of) else {
                    throw fail(field.line, "\(what), field '\(field.name)': 'of' names '\(of)', which is not a column or field defined before it")
                }
            case .dateAfter(let ref, let property, _, _):
                guard let target = refs[ref] else {
                    throw fail(field.line, "\(what), field '\(field.name)': date.after names '\(ref)', which is not a ref field defined before it")
                }
                guard target.storedNames.contains(property) else {
                    throw fail(field.line, "\(what), field '\(field.name)': kind '\(target.name)' has no stored property '\(property)'")
                }
            case .template(let template):
                try checkVariables(template, known: known, refs: refs, line: field.line, what: "\(what), field '\(field.name)'")
            case .blobURL(let container, let name):
                if !dataset.containers.contains(where: { $0.name == container }) {
                    throw fail(field.line, "\(what), field '\(field.name)': no container named '\(container)' in the dataset")
                }
                try checkVariables(name, known: known, refs: refs, line: field.line, what: "\(what), field '\(field.name)'")
            case .pick(let values), .weightedPick(let values, _):
                for case .string(let s) in values where s.utf16.count > StorageNames.maxStringUTF16 {
                    throw fail(field.line, "\(what), field '\(field.name)': a value is longer than 32K characters")
                }
            default: break
            }
            known.insert(field.name)
        }
        if kind.storedNames.count > StorageNames.maxProperties {
            throw fail(kind.line, "\(what) has \(kind.storedNames.count) properties; Azure allows \(StorageNames.maxProperties)")
        }
        for name in kind.omit where !known.contains(name) {
            throw fail(kind.line, "\(what): omit names '\(name)', which is not a column or field")
        }
        for name in kind.key {
            if refs[name] != nil { throw fail(kind.line, "\(what): key field '\(name)' is a ref; use a 'from' field of it") }
            guard known.contains(name) else { throw fail(kind.line, "\(what): key field '\(name)' is not a column or field") }
            if kind.omit.contains(name) { throw fail(kind.line, "\(what): key field '\(name)' must be stored, not omitted") }
            if kind.field(named: name)?.presence != nil {
                throw fail(kind.line, "\(what): key field '\(name)' is on every entity; drop its presence")
            }
            if let row = kind.rows?.first(where: { $0.absent.contains(name) }) {
                throw fail(row.line, "\(what): key column '\(name)' cannot be ~ (absent)")
            }
            if kind.count != nil, let field = kind.field(named: name) {
                if case .weightedPick = field.generator {
                    throw fail(
                        field.line,
                        "\(what): key field '\(name)' is a pick with weights; a key draws each of its values alike — drop the weights, or take '\(name)' out of the key"
                    )
                }
                switch field.generator {
                case .pick, .date, .int, .const, .sequence, .from: break
                default:
                    throw fail(field.line, "\(what): key field '\(name)' of a generated kind must be pick, date, int, const, sequence or from")
                }
            }
        }
    }

    private func checkVariables(_ template: Template, known: Set<String>, refs: [String: KindSpec], line: Int, what: String) throws(DatasetError) {
        for name in template.variables {
            let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
            if parts.count == 2, let target = refs[parts[0]] {
                if ["RowKey", "PartitionKey"].contains(parts[1]) || target.storedNames.contains(parts[1]) { continue }
                throw DatasetError(
                    file: template.origin, line: nil,
                    "\(what) (\(dataset.file):\(line)): template names '\(name)', but kind '\(target.name)' has no stored property '\(parts[1])'")
            }
            if parts.count == 1 && known.contains(name) { continue }
            let available = (known.sorted() + refs.keys.sorted().map { "\($0).…" }).joined(separator: ", ")
            throw DatasetError(
                file: template.origin, line: nil,
                "\(what) (\(dataset.file):\(line)): template names unknown field '\(name)' (known here: \(available))")
        }
    }

    private func checkReferenceCycles() throws(DatasetError) {
        var state: [String: Int] = [:]  // 1 visiting, 2 done
        func visit(_ kind: KindSpec, path: [String]) throws(DatasetError) {
            if state[kind.name] == 2 { return }
            if state[kind.name] == 1 {
                throw fail(kind.line, "kinds reference each other in a cycle: \((path + [kind.name]).joined(separator: " → "))")
            }
            state[kind.name] = 1
            for field in kind.fields {
                if case .ref(let target) = field.generator, let next = dataset.kind(named: target) {
                    try visit(next, path: path + [kind.name])
                }
            }
            state[kind.name] = 2
        }
        for kind in dataset.kinds { try visit(kind, path: []) }
    }
}
