import StorageProtocol

/// Writes an entity's stored properties as a query response carries them, straight from the
/// stored bytes: no `TableEntity`, no String per value.
///
/// The stored form is `EntityJSONEncoder.encodeProperties`: no white space, names in byte order,
/// each typed value followed by its `Name@odata.type` annotation. A response puts the
/// annotation first, and at minimal metadata leaves it out for a finite Edm.Double (a JSON
/// number) as Azure does; at no metadata it has none. Strings are already escaped as a
/// response escapes them, so names and values are copied as they are.
enum StoredPropertiesTranscoder {
    private static let quote = UInt8(ascii: "\"")
    private static let annotationSuffix = Array("@odata.type\"".utf8)
    private static let edmDouble = Array("\"Edm.Double\"".utf8)

    /// Appends `,"Name@odata.type":"Edm.X","Name":value` for each stored property at `level`.
    /// Returns false, with `out` as it was, when `body` is not in the stored form; the caller
    /// then decodes it. At full metadata every annotation the stored form holds is written: it
    /// holds one for exactly the types full metadata annotates (all but String, Int32, Boolean).
    static func append(_ body: [UInt8], level: MetadataLevel, to out: inout [UInt8]) -> Bool {
        body.withUnsafeBufferPointer { bytes in
            guard let members = members(bytes) else { return false }
            let mark = out.count
            var index = 0
            while index < members.count {
                let property = members[index]
                guard !isAnnotation(property.name, bytes) else {
                    out.removeSubrange(mark...)
                    return false
                }
                var annotation: Member?
                if index + 1 < members.count, annotates(members[index + 1].name, property.name, bytes) {
                    annotation = members[index + 1]
                    index += 1
                }
                if let annotation,
                    level == .full
                        || (level == .minimal
                            && !(bytes[property.value.lowerBound] != quote && equal(bytes, annotation.value, edmDouble)))
                {
                    appendMember(annotation, bytes, to: &out)
                }
                appendMember(property, bytes, to: &out)
                index += 1
            }
            return true
        }
    }

    private struct Member {
        /// The name with its quotes.
        var name: Range<Int>
        var value: Range<Int>
    }

    private static func appendMember(_ member: Member, _ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[member.name]))
        out.append(UInt8(ascii: ":"))
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[member.value]))
    }

    /// The members of a flat object with no white space, or nil for anything else.
    private static func members(_ bytes: UnsafeBufferPointer<UInt8>) -> [Member]? {
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "{"), bytes[bytes.count - 1] == UInt8(ascii: "}") else { return nil }
        var members: [Member] = []
        members.reserveCapacity(16)
        var i = 1
        if bytes[i] == UInt8(ascii: "}") { return i == bytes.count - 1 ? members : nil }
        while true {
            guard let nameEnd = stringEnd(bytes, from: i) else { return nil }
            let name = i..<nameEnd
            guard nameEnd < bytes.count, bytes[nameEnd] == UInt8(ascii: ":") else { return nil }
            let valueStart = nameEnd + 1
            guard valueStart < bytes.count else { return nil }
            var valueEnd: Int
            if bytes[valueStart] == quote {
                guard let end = stringEnd(bytes, from: valueStart) else { return nil }
                valueEnd = end
            } else {
                // A number or a literal: no comma, brace, bracket or quote inside.
                valueEnd = valueStart
                while valueEnd < bytes.count, !isDelimiter(bytes[valueEnd]) { valueEnd += 1 }
                guard valueEnd > valueStart else { return nil }
            }
            members.append(Member(name: name, value: valueStart..<valueEnd))
            guard valueEnd < bytes.count else { return nil }
            if bytes[valueEnd] == UInt8(ascii: ",") {
                i = valueEnd + 1
                continue
            }
            return bytes[valueEnd] == UInt8(ascii: "}") && valueEnd == bytes.count - 1 ? members : nil
        }
    }

    private static func isDelimiter(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[")
            || byte == UInt8(ascii: "]") || byte == quote || byte == UInt8(ascii: ":") || byte <= 0x20
    }

    /// The index just past the string starting at `start` (its closing quote included).
    private static func stringEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < bytes.count, bytes[start] == quote else { return nil }
        var i = start + 1
        while i < bytes.count {
            // Eight plain bytes at a time (a byte at a time, this scan was an eighth of
            // serving a query page of SpeakEasy's long descriptions).
            if i + 8 <= bytes.count, !ByteScan.mayEndString(ByteScan.word(bytes, at: i)) {
                i += 8
                continue
            }
            switch bytes[i] {
            case quote: return i + 1
            case UInt8(ascii: "\\"): i += 2
            default: i += 1
            }
        }
        return nil
    }

    private static func isAnnotation(_ name: Range<Int>, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        name.count > annotationSuffix.count && equal(bytes, name.upperBound - annotationSuffix.count..<name.upperBound, annotationSuffix)
    }

    /// Whether `annotation` is `"<property>@odata.type"`, byte for byte.
    private static func annotates(_ annotation: Range<Int>, _ property: Range<Int>, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // `property` includes its closing quote; the annotation's name is the property's
        // without it, then the suffix (which brings its own closing quote).
        guard annotation.count == property.count - 1 + annotationSuffix.count, isAnnotation(annotation, bytes) else { return false }
        for offset in 0..<(property.count - 1) where bytes[annotation.lowerBound + offset] != bytes[property.lowerBound + offset] {
            return false
        }
        return true
    }

    private static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ expected: [UInt8]) -> Bool {
        guard range.count == expected.count else { return false }
        for (offset, byte) in expected.enumerated() where bytes[range.lowerBound + offset] != byte { return false }
        return true
    }
}
