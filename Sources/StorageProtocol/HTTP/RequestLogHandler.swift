import Foundation
import Logging

/// The request log as a swift-log handler: the clients, the runner and the emulator log through
/// an injected `Logger` (``ClientConfiguration/logger``), and this handler turns their request
/// records into `--verbose`'s lines on stderr and `--log-file`'s JSON lines, in the formats
/// those flags promise. A record is a message with the metadata of ``RequestRecord/metadata``
/// or of a served request (``ServedRecord``); any other message (a library's own) is written
/// on stderr with `--verbose` when it is a warning or worse, and never to the file.
public struct RequestLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let log: RequestLog
    private let label: String

    public init(label: String, log: RequestLog) {
        self.label = label
        self.log = log
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let fields = metadata.merging(event.metadata ?? [:]) { $1 }
        if let record = RequestRecord(metadata: fields) {
            log.record(record)
        } else if let served = ServedRecord(metadata: fields) {
            log.write(text: served.text, json: served.json)
        } else if event.level >= .warning {
            log.write(text: "azseed: \(label): \(event.message)\n", json: nil)
        }
    }
}

/// A logger that drops everything: the default of every configuration.
extension Logger {
    public static let silent = Logger(label: "azseed") { _ in SwiftLogNoOpLogHandler() }

    /// A logger whose request records go to `log` (`--verbose`, `--log-file`).
    public static func requests(_ log: RequestLog, label: String = "azseed") -> Logger {
        Logger(label: label) { RequestLogHandler(label: $0, log: log) }
    }
}

extension RequestRecord {
    /// The record as log metadata: what a ``RequestLogHandler`` (or any handler) reads back.
    public var metadata: Logger.Metadata {
        var fields: Logger.Metadata = [
            "azseed.record": "request", "operation": .string(operation), "method": .string(method), "url": .string(url),
            "bytesSent": .stringConvertible(bytesSent), "bytesReceived": .stringConvertible(bytesReceived),
            "seconds": .stringConvertible(seconds), "attempt": .stringConvertible(attempt),
        ]
        if let status { fields["status"] = .stringConvertible(status) }
        if let errorCode { fields["errorCode"] = .string(errorCode) }
        if let retryReason { fields["retry"] = .string(retryReason) }
        return fields
    }

    /// A record read back from log metadata; nil when the metadata is not one.
    init?(metadata: Logger.Metadata) {
        guard case .string("request")? = metadata["azseed.record"], let operation = metadata["operation"]?.text,
            let method = metadata["method"]?.text,
            let url = metadata["url"]?.text, let sent = metadata["bytesSent"]?.text.flatMap(Int.init),
            let received = metadata["bytesReceived"]?.text.flatMap(Int.init), let seconds = metadata["seconds"]?.text.flatMap(Double.init),
            let attempt = metadata["attempt"]?.text.flatMap(Int.init)
        else { return nil }
        self.init(
            operation: operation, method: method, url: url, status: metadata["status"]?.text.flatMap(Int.init),
            errorCode: metadata["errorCode"]?.text,
            bytesSent: sent, bytesReceived: received, seconds: seconds, attempt: attempt, retryReason: metadata["retry"]?.text)
    }
}

/// One request the emulator answered, as `azseed emulator --verbose` and `--log-file` show it.
public struct ServedRecord: Sendable {
    public var service: String
    public var method: String
    public var url: String
    /// nil when the connection was dropped (an injected fault).
    public var status: Int?
    public var errorCode: String?
    public var requestBytes: Int
    public var responseBytes: Int
    public var milliseconds: Double
    public var client: String?

    public init(
        service: String, method: String, url: String, status: Int?, errorCode: String?, requestBytes: Int, responseBytes: Int, milliseconds: Double,
        client: String?
    ) {
        self.service = service
        self.method = method
        self.url = url
        self.status = status
        self.errorCode = errorCode
        self.requestBytes = requestBytes
        self.responseBytes = responseBytes
        self.milliseconds = milliseconds
        self.client = client
    }

    public var metadata: Logger.Metadata {
        var fields: Logger.Metadata = [
            "azseed.record": "served", "service": .string(service), "method": .string(method), "url": .string(url),
            "requestBytes": .stringConvertible(requestBytes), "responseBytes": .stringConvertible(responseBytes),
            "ms": .stringConvertible(milliseconds),
        ]
        if let status { fields["status"] = .stringConvertible(status) }
        if let errorCode { fields["errorCode"] = .string(errorCode) }
        if let client { fields["client"] = .string(client) }
        return fields
    }

    init?(metadata: Logger.Metadata) {
        guard case .string("served")? = metadata["azseed.record"], let service = metadata["service"]?.text, let method = metadata["method"]?.text,
            let url = metadata["url"]?.text, let requestBytes = metadata["requestBytes"]?.text.flatMap(Int.init),
            let responseBytes = metadata["responseBytes"]?.text.flatMap(Int.init), let ms = metadata["ms"]?.text.flatMap(Double.init)
        else { return nil }
        self.init(
            service: service, method: method, url: url, status: metadata["status"]?.text.flatMap(Int.init), errorCode: metadata["errorCode"]?.text,
            requestBytes: requestBytes, responseBytes: responseBytes, milliseconds: ms, client: metadata["client"]?.text)
    }

    var text: String {
        "azseed emulator: \(client ?? "-") \(method) \(url) \(status.map(String.init) ?? "dropped")\(errorCode.map { " \($0)" } ?? "") "
            + "\(requestBytes) B in \(responseBytes) B out \(Int(milliseconds.rounded())) ms\n"
    }

    var json: [UInt8] {
        let members: [(String, JSONValue)] = [
            ("time", .string(RequestLog.timestamp())), ("service", .string(service)),
            ("method", .string(method)), ("url", .string(url)), ("status", status.map { .number(String($0)) } ?? .null),
            ("errorCode", errorCode.map { .string($0) } ?? .null), ("requestBytes", .number(String(requestBytes))),
            ("responseBytes", .number(String(responseBytes))), ("ms", .number(String(format: "%.1f", milliseconds))),
            ("client", client.map { .string($0) } ?? .null),
        ]
        return Array((JSONValue.object(members).compact() + "\n").utf8)
    }
}

extension Logger.MetadataValue {
    /// The value as text, for the values this file writes (strings and numbers).
    fileprivate var text: String? {
        switch self {
        case .string(let text): text
        case .stringConvertible(let value): value.description
        default: nil
        }
    }
}
