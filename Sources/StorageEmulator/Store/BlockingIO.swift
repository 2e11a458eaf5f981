import NIOPosix

/// Where the emulator's blocking file work runs — writing blob bytes, reading them back,
/// database reads: NIO's shared thread pool (`NIOThreadPool.singleton`), a set of threads of its
/// own, never the Swift cooperative pool or Dispatch's global queues, so a slow disk cannot
/// starve request handling or the database's writer.
enum BlockingIO {
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(body)
    }
}
