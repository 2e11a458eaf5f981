import Foundation

/// The products of the build the tests run from: found beside the test runner (the build
/// folder, whatever its configuration or triple), or named by `AZSEED_BIN`.
public enum BuiltProducts {
    /// The `azseed` executable.
    public static var azseed: URL {
        if let named = ProcessInfo.processInfo.environment["AZSEED_BIN"], !named.isEmpty { return URL(fileURLWithPath: named) }
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        // `…/debug/azseedPackageTests.xctest` (an executable on Linux, a bundle elsewhere).
        var folder = runner.deletingLastPathComponent()
        while !folder.path.isEmpty, folder.path != "/" {
            let candidate = folder.appendingPathComponent("azseed")
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isFolder), !isFolder.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate.path)
            {
                return candidate
            }
            folder = folder.deletingLastPathComponent()
        }
        return runner.deletingLastPathComponent().appendingPathComponent("azseed")
    }
}
