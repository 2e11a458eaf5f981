import ArgumentParser

/// The folder a snapshot is written to: shared by generate and export.
struct OutputFolderOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The folder to write.", valueName: "dir"))
    var out: String

    @Flag(help: "Replace --out if it exists and is not empty.")
    var force = false
}
