import Foundation
import StorageProtocol

/// A service's Storage Analytics settings, read from its service properties document: logging
/// (which requests, how long logs are kept) and hour and minute metrics (whether per-API rows
/// are kept, for how long). docs/PROTOCOL.md §7, "Storage Analytics".
struct AnalyticsSettings: Equatable, Sendable {
    struct Logging: Equatable, Sendable {
        var read: Bool
        var write: Bool
        var delete: Bool
        var version: String
        var retentionDays: Int?

        var isOn: Bool { read || write || delete }
    }

    struct Metrics: Equatable, Sendable {
        var includeAPIs: Bool
        var retentionDays: Int?
    }

    var logging: Logging?
    var hour: Metrics?
    var minute: Metrics?

    var isOn: Bool { logging != nil || hour != nil || minute != nil }

    /// The settings a stored document holds (missing or off parts: nil).
    init(_ document: XMLTree) {
        func flag(_ node: XMLTree?, _ name: String) -> Bool { node?[name]?.text.lowercased() == "true" }
        func days(_ node: XMLTree?) -> Int? {
            guard let policy = node?["RetentionPolicy"], flag(policy, "Enabled") else { return nil }
            return policy["Days"].flatMap { Int($0.text) }
        }
        if let node = document["Logging"] {
            let logging = Logging(
                read: flag(node, "Read"), write: flag(node, "Write"), delete: flag(node, "Delete"), version: node["Version"]?.text ?? "1.0",
                retentionDays: days(node))
            self.logging = logging.isOn ? logging : nil
        }
        for (name, path) in [("HourMetrics", \AnalyticsSettings.hour), ("MinuteMetrics", \AnalyticsSettings.minute)] {
            if let node = document[name], flag(node, "Enabled") {
                self[keyPath: path] = Metrics(includeAPIs: flag(node, "IncludeAPIs"), retentionDays: days(node))
            }
        }
    }

    init(logging: Logging? = nil, hour: Metrics? = nil, minute: Metrics? = nil) {
        self.logging = logging
        self.hour = hour
        self.minute = minute
    }

    /// Checks what a Set Service Properties request sends, as Azure does: versions, booleans,
    /// IncludeAPIs with metrics on, and retention days 1–365 exactly when retention is on.
    static func validate(_ sent: XMLTree) throws(ServiceError) {
        func invalid(_ what: String) -> ServiceError {
            ServiceError(400, .invalidXmlNodeValue, "The value for one of the XML nodes is not in the correct format: \(what).")
        }
        func boolean(_ node: XMLTree, _ name: String, in parent: String, required: Bool = true) throws(ServiceError) -> Bool? {
            guard let value = node[name]?.text.lowercased() else {
                if required { throw invalid("\(parent) needs \(name)") }
                return nil
            }
            guard value == "true" || value == "false" else { throw invalid("\(parent)/\(name) is '\(value)', not true or false") }
            return value == "true"
        }
        func retention(_ node: XMLTree, in parent: String) throws(ServiceError) {
            guard let policy = node["RetentionPolicy"] else { return }
            let on = try boolean(policy, "Enabled", in: "\(parent)/RetentionPolicy") ?? false
            if on {
                guard let days = policy["Days"].flatMap({ Int($0.text) }), (1...365).contains(days) else {
                    throw invalid("\(parent)/RetentionPolicy needs Days, from 1 to 365")
                }
            } else if policy["Days"] != nil {
                throw invalid("\(parent)/RetentionPolicy gives Days only when it is enabled")
            }
        }
        if let logging = sent["Logging"] {
            if let version = logging["Version"]?.text, version != "1.0", version != "2.0" {
                throw invalid("Logging/Version is '\(version)'; the versions are 1.0 and 2.0")
            }
            for name in ["Read", "Write", "Delete"] { _ = try boolean(logging, name, in: "Logging") }
            try retention(logging, in: "Logging")
        }
        for name in ["HourMetrics", "MinuteMetrics"] {
            guard let metrics = sent[name] else { continue }
            if let version = metrics["Version"]?.text, version != "1.0" { throw invalid("\(name)/Version is '\(version)'; the version is 1.0") }
            let on = try boolean(metrics, "Enabled", in: name) ?? false
            let apis = try boolean(metrics, "IncludeAPIs", in: name, required: false)
            if on && apis == nil { throw invalid("\(name) needs IncludeAPIs when it is enabled") }
            try retention(metrics, in: name)
        }
    }
}
