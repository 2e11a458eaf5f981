import Foundation
import PackagePlugin

/// Records the git commit azseed is built from, for `azseed --version`: before every build a
/// prebuild command (git is no part of this package, so it cannot be a build command) writes
/// `BuildInfo.swift` with `git rev-parse --short=12 HEAD`, `-dirty` when tracked files differ
/// from it, or `unknown` outside a checkout. The file is rewritten only when its text changes,
/// so an unchanged commit rebuilds nothing.
@main
struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        let script = #"""
            set -e
            mkdir -p "$2"
            commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
            if [ "$commit" != unknown ] && [ -n "$(git -C "$1" status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit-dirty"; fi
            text="// Generated before each build by Plugins/BuildInfo; not in git.
            enum BuildInfo { static let commit = \"$commit\" }"
            if [ ! -f "$2/BuildInfo.swift" ] || [ "$(cat "$2/BuildInfo.swift")" != "$text" ]; then printf '%s\n' "$text" > "$2/BuildInfo.swift"; fi
            """#
        return [
            .prebuildCommand(
                displayName: "Recording the commit azseed is built from",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", script, "sh", context.package.directoryURL.path, output.path],
                outputFilesDirectory: output)
        ]
    }
}
