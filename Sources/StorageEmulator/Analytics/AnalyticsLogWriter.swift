import Foundation
import StorageProtocol

/// Writes Storage Analytics log entries into `$logs`: one block blob per flush and hour,
/// `<service>/YYYY/MM/DD/hh00/nnnnnn.log`, with Azure's metadata (`LogType`, `StartTime`,
/// `EndTime`, `LogVersion`); entries in format 1.0 (30 fields) or 2.0 (38: the OAuth fields
/// stay empty), `;`-separated, one per line; fields that could hold `"`, `;` or a newline are
/// quoted, `"` and newlines inside HTML-encoded.
struct AnalyticsLogWriter {
    let store: EmulatorStore
    let account: String

    static let container = "$logs"

    func write(_ observations: [StorageAnalytics.Observation], service: EmulatorServiceKind, version: String) async throws {
        // Each hour's entries go to that hour's folder.
        let byHour = Dictionary(grouping: observations) { Self.hourFolder($0.start, service) }
        for (folder, entries) in byHour.sorted(by: { $0.key < $1.key }) {
            var text = ""
            for entry in entries { text += Self.line(entry, version: version, account: account) + "\n" }
            let (existing, _) = try await store.listBlobs(container: Self.container, prefix: folder, marker: "", limit: 5000)
            var number = existing.count
            let existingNames = Set(existing.map(\.name))
            while existingNames.contains(folder + String(format: "%06d.log", number)) { number += 1 }
            let name = folder + String(format: "%06d.log", number)
            let kinds = Set(entries.map(\.operation.category))
            let logType = [StorageOperation.Category.read, .write, .delete].filter(kinds.contains).map(\.rawValue).joined(separator: ",")
            let upload = try await StagedUpload.store(Data(text.utf8), in: store.bytes)
            do {
                _ = try await store.putBlob(
                    container: Self.container, name: name, upload: upload,
                    properties: BlobHTTPProperties(contentType: "application/octet-stream", contentMD5: upload.md5),
                    metadata: [
                        ("LogType", logType), ("StartTime", entries.map(\.start.iso8601).min() ?? ""),
                        ("EndTime", entries.map(\.start.iso8601).max() ?? ""), ("LogVersion", version),
                    ],
                    conditions: WriteConditions())
            } catch {
                await upload.release(from: store.bytes)
                throw error
            }
        }
    }

    /// `blob/2026/11/26/1600/`.
    static func hourFolder(_ time: EdmDateTime, _ service: EmulatorServiceKind) -> String {
        let iso = Array(time.iso8601)
        return "\(service == .blob ? "blob" : "table")/\(String(iso[0..<4]))/\(String(iso[5..<7]))/\(String(iso[8..<10]))/\(String(iso[11..<13]))00/"
    }

    /// One entry. Every field is either quoted here (a value Azure's format quotes) or plain;
    /// a plain one that holds a separator, a quote or a line break — a caller's `x-ms-version`
    /// or `Content-MD5`, whatever it starts with — is quoted too, so no request adds fields
    /// to its entry or lines to the log.
    static func line(_ o: StorageAnalytics.Observation, version: String, account: String) -> String {
        let q = { (value: String) in Field.quoted(value) }
        let p = { (value: String) in Field.plain(value) }
        var fields: [Field] = [
            p(version), p(o.start.iso8601), p(o.operation.name), p(MetricsCounts.requestStatus(o.status, o.authentication)), p(String(o.status)),
            p(String(o.milliseconds)), p(String(o.milliseconds)), p(o.authentication.rawValue),
            p(o.authentication == .anonymous ? "" : account), p(account), p(o.service == .blob ? "blob" : "table"), q(o.url),
            q(o.objectKey), p(o.requestID), p("0"), p(o.client), p(o.version), p(""), p(String(o.requestBytes)), p(""), p(String(o.responseBytes)),
            p(String(o.requestBytes)), p(o.contentMD5), p(o.contentMD5), q(Self.unquoted(o.etag)), p(o.lastModified), q(o.conditions),
            q(o.userAgent), q(o.referrer), q(o.clientRequestID),
        ]
        if version == "2.0" { fields += Array(repeating: p(""), count: 8) }
        return fields.map { field in
            switch field {
            case .quoted(let value): quoted(value)
            case .plain(let value):
                value.unicodeScalars.contains(where: { $0 == ";" || $0 == "\"" || isLineBreak($0) }) ? quoted(value) : value
            }
        }.joined(separator: ";")
    }

    /// A field of an entry: quoted as Azure's format quotes it, or plain unless it must be.
    enum Field {
        case quoted(String)
        case plain(String)
    }

    /// Quoted (so a `;` inside is no separator), with `&`, `"` and line breaks HTML-encoded;
    /// empty stays empty.
    static func quoted(_ value: String) -> String {
        guard !value.isEmpty else { return "" }
        var out = "\""
        for c in value.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            case _ where isLineBreak(c): out += "&#\(c.value);"
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }

    /// Every character a reader may take for the end of a line: CR and LF, and the other
    /// Unicode line breaks (VT, FF, NEL, LINE and PARAGRAPH SEPARATOR — Python's `splitlines`
    /// splits at them), so no value adds a line to the log.
    static func isLineBreak(_ c: Unicode.Scalar) -> Bool {
        switch c.value {
        case 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029: true
        default: false
        }
    }

    /// An ETag without the quotes its header carries (the field is quoted as a whole).
    static func unquoted(_ etag: String) -> String {
        etag.count >= 2 && etag.hasPrefix("\"") && etag.hasSuffix("\"") ? String(etag.dropFirst().dropLast()) : etag
    }

    /// Removes the service's logs of hours more than `days` old.
    func removeOlder(than days: Int, service: EmulatorServiceKind, now: EdmDateTime) async throws {
        let cutoff = Self.hourFolder(EdmDateTime(ticks: now.ticks - Int64(days) * 864_000_000_000), service)
        let prefix = service == .blob ? "blob/" : "table/"
        var marker = ""
        while true {
            let (blobs, next) = try await store.listBlobs(container: Self.container, prefix: prefix, marker: marker, limit: 1000)
            for blob in blobs where blob.name.utf8.lexicographicallyPrecedes(cutoff.utf8) {
                try? await store.deleteBlob(container: Self.container, name: blob.name, conditions: WriteConditions())
            }
            guard let next else { return }
            marker = next
        }
    }
}
