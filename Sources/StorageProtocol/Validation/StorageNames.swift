import Foundation

/// Client-side checks of names, keys and sizes (docs/PROTOCOL.md §6–7), so that a bad value is
/// reported before the first request instead of as a service error halfway through a run.
/// Each check returns nil when the value is valid, else the reason.
public enum StorageNames {
    /// Container names: 3–63 characters of `a-z`, `0-9` and `-`, starting and ending with a
    /// letter or digit, no `--`.
    public static func containerProblem(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count) else { return "a container name has 3 to 63 characters" }
        let allowed = bytes.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 }
        guard allowed else { return "a container name uses only lowercase letters, digits and '-'" }
        guard bytes.first != 45, bytes.last != 45 else { return "a container name starts and ends with a letter or digit" }
        guard !name.contains("--") else { return "a container name has no '--'" }
        return nil
    }

    /// Table names: `^[A-Za-z][A-Za-z0-9]{2,62}$`, and not `tables`.
    /// Why a storage account name is not one (3 to 24 lowercase letters and digits), or nil.
    public static func accountProblem(_ name: String) -> String? {
        guard (3...24).contains(name.utf8.count) else { return "must be 3 to 24 characters long" }
        guard name.utf8.allSatisfy({ ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) }) else { return "may hold only lowercase letters and digits" }
        return nil
    }

    public static func tableProblem(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count) else { return "a table name has 3 to 63 characters" }
        guard isLetter(bytes[0]) else { return "a table name starts with a letter" }
        guard bytes.allSatisfy({ isLetter($0) || ($0 >= 48 && $0 <= 57) }) else { return "a table name uses only letters and digits" }
        guard name.lowercased() != "tables" else { return "'tables' is a reserved table name" }
        return nil
    }

    /// Blob names as Azure stores them: 1–1,024 characters, no control characters. (A name
    /// ending with `.` or `/` is one Azure advises against, and stores: the SDKs' own tests
    /// create `.a.a.` and `/a/a/`.)
    public static func blobProblem(_ name: String) -> String? {
        guard !name.isEmpty, name.count <= 1024 else { return "a blob name has 1 to 1024 characters" }
        guard !name.unicodeScalars.contains(where: isControl) else { return "a blob name must not contain control characters" }
        return nil
    }

    /// `blobProblem`, and the names azseed does not write: one ending with `.` or `/` (Azure
    /// advises against them, and tools and file systems trim them), and one with `.` or `..`
    /// segments, which Azure stores but URLs resolve (`speakers/../x` would reach another
    /// container).
    public static func addressableBlobProblem(_ name: String) -> String? {
        if let problem = blobProblem(name) { return problem }
        guard !name.hasSuffix("."), !name.hasSuffix("/") else { return "a blob name must not end with '.' or '/'" }
        guard !name.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." }) else {
            return "a blob name with '.' or '..' segments cannot be addressed safely (URLs resolve them)"
        }
        return nil
    }

    /// PartitionKey and RowKey: at most 1 KiB of UTF-16, none of `/ \ # ?` or control characters.
    public static func keyProblem(_ key: String) -> String? {
        guard key.utf16.count <= 1024 else { return "a key is at most 1 KiB" }
        // ASCII keys (nearly all) by their bytes: a scalar-by-scalar search of "/\\#?" per key
        // was a fiftieth of a seeding run on each side.
        if key.utf8.allSatisfy({ $0 < 0x80 && $0 >= 0x20 && $0 != 0x7F && $0 != 0x2F && $0 != 0x5C && $0 != 0x23 && $0 != 0x3F }) {
            return nil
        }
        if let bad = key.unicodeScalars.first(where: { "/\\#?".unicodeScalars.contains($0) || isControl($0) }) {
            let shown = isControl(bad) ? String(format: "U+%04X", bad.value) : "'\(bad)'"
            return "a key must not contain \(shown)"
        }
        return nil
    }

    private static func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
        // ASCII first: Unicode property lookups were a tenth of planning 100,000 entities.
        if scalar.isASCII { return scalar == "_" || isASCIILetter(scalar) || ("0"..."9").contains(scalar) }
        if scalar == "_" || scalar.properties.isAlphabetic || scalar.properties.numericType != nil { return true }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .decimalNumber, .connectorPunctuation, .format: return true
        default: return false
        }
    }

    private static func isASCIILetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    /// Property names: C# identifier rules, at most 255 characters, not a system property.
    public static func propertyProblem(_ name: String) -> String? {
        guard !name.isEmpty, name.utf16.count <= 255 else { return "a property name has 1 to 255 UTF-16 code units" }
        // An ASCII name by its bytes, without an array of its scalars.
        if name.utf8.allSatisfy({ $0 < 0x80 }) {
            func letter(_ b: UInt8) -> Bool { (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") }
            func part(_ b: UInt8) -> Bool { letter(b) || b == UInt8(ascii: "_") || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) }
            let first = name.utf8.first!
            guard letter(first) || first == UInt8(ascii: "_") else { return "a property name starts with a letter or '_'" }
            guard name.utf8.allSatisfy(part) else { return "a property name uses only letters, digits, combining marks and '_'" }
            return JSONParser.isKeyOrTimestamp(name) ? "'\(name)' is a system property" : nil
        }
        let scalars = Array(name.unicodeScalars)
        let first = scalars[0]
        guard first == "_" || isASCIILetter(first) || (!first.isASCII && first.properties.isAlphabetic) else {
            return "a property name starts with a letter or '_'"
        }
        // C# identifier-part characters: letters, digits, connectors, and the combining and
        // formatting marks an NFD name is made of (`Cafe\u{301}`), as Azure accepts them.
        guard scalars.allSatisfy(Self.isIdentifierPart) else {
            return "a property name uses only letters, digits, combining marks and '_'"
        }
        guard !JSONParser.isKeyOrTimestamp(name) else { return "'\(name)' is a system property" }
        return nil
    }

    /// Blob and container metadata names: C# identifiers (as Azure requires of `x-ms-meta-*`).
    public static func metadataNameProblem(_ name: String) -> String? {
        guard let first = name.unicodeScalars.first, first == "_" || first.properties.isAlphabetic,
            name.unicodeScalars.allSatisfy({ $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) })
        else {
            return "a metadata name is a C# identifier: a letter or '_', then letters, digits or '_'"
        }
        return nil
    }

    /// The largest number of custom properties an entity may have.
    public static let maxProperties = 252
    /// The largest String value, in UTF-16 code units (64 KiB).
    public static let maxStringUTF16 = 32 * 1024
    /// The largest Binary value in bytes.
    public static let maxBinaryBytes = 64 * 1024
    /// The largest entity, in bytes.
    public static let maxEntityBytes = 1024 * 1024

    /// The entity's size as the Table service documents it: 4 bytes, the keys in UTF-16, and
    /// per property 8 bytes, its name in UTF-16 and its value.
    public static func entitySize(_ entity: TableEntity) -> Int {
        entitySize(partitionKey: entity.partitionKey, rowKey: entity.rowKey, properties: entity.properties.lazy.map { ($0.key, $0.value) })
    }

    /// The same measure of keys and properties held in another form (a generated entity's
    /// names and values side by side).
    public static func entitySize(partitionKey: String, rowKey: String, properties: some Sequence<(String, EdmValue)>) -> Int {
        var size = 4 + partitionKey.utf16.count * 2 + rowKey.utf16.count * 2
        for (name, value) in properties {
            size += 8 + name.utf16.count * 2
            switch value {
            case .string(let s): size += s.utf16.count * 2 + 4
            case .binary(let b): size += b.count + 4
            case .int32, .boolean: size += 4
            case .int64, .double, .dateTime: size += 8
            case .guid: size += 16
            }
        }
        return size
    }

    /// Why Azure Tables would refuse the whole entity — a key, the number of properties, a
    /// property name or value, the total size — or nil. Phrased to follow "entity (PK, RK) …".
    /// Every path that writes entities checks all of them with this before the first write.
    public static func entityProblem(_ entity: TableEntity) -> String? {
        for (what, key) in [("PartitionKey", entity.partitionKey), ("RowKey", entity.rowKey)] {
            if let problem = keyProblem(key) { return "has an invalid \(what): \(problem)" }
        }
        if entity.properties.count > maxProperties {
            return "has \(entity.properties.count) properties; Azure allows \(maxProperties)"
        }
        for (name, value) in entity.properties {
            if let problem = propertyProblem(name) { return "has an invalid property name '\(name)': \(problem)" }
            if let problem = valueProblem(value) { return "has a property '\(name)' that \(problem)" }
        }
        let size = entitySize(entity)
        if size > maxEntityBytes { return "is \(size) bytes as Azure counts them; an entity is at most \(maxEntityBytes) (1 MiB)" }
        return nil
    }

    /// Why Azure Tables would refuse a property value (too long, too large, out of range),
    /// or nil; phrased to follow "property 'Name' …".
    public static func valueProblem(_ value: EdmValue) -> String? {
        switch value {
        case .string(let s) where s.utf16.count > maxStringUTF16:
            "is longer than 32K characters (\(s.utf16.count) UTF-16 code units; Azure stores \(maxStringUTF16))"
        case .binary(let b) where b.count > maxBinaryBytes: "is larger than 64 KiB (\(b.count) bytes)"
        case .dateTime(let d) where !d.isInAzureRange: "is outside Edm.DateTime's range (1601-01-01 to 9999-12-31)"
        default: nil
        }
    }

    private static func isLetter(_ b: UInt8) -> Bool { (b >= 65 && b <= 90) || (b >= 97 && b <= 122) }

    static func isControl(_ s: Unicode.Scalar) -> Bool { s.value < 0x20 || (0x7F...0x9F).contains(s.value) }
}
