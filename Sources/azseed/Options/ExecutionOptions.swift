import ArgumentParser

/// How writes are carried out: shared by apply, import and reset.
struct ExecutionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Requests in flight at most.", valueName: "n"))
    var concurrency = 8

    @Flag(help: "Confirm deletes (--prune, reset) against an endpoint that is not loopback.")
    var yes = false

    func validate() throws {
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be 1 to 256, not \(concurrency)") }
    }
}
