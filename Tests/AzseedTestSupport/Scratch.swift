import Foundation

/// Fresh folders for tests, under the system temporary folder (`TMPDIR`).
public enum Scratch {
    /// A new empty folder named `azseed-<label>-<uuid>`.
    public static func folder(_ label: String = "test") throws -> URL {
        let base = URL(fileURLWithPath: ProcessInfo.processInfo.environment["TMPDIR"] ?? NSTemporaryDirectory())
        let url = base.appendingPathComponent("azseed-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
