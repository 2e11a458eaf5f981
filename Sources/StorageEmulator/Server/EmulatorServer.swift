import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import StorageProtocol

/// A running emulator: the Blob and Table services on their ports, over one store.
public final class EmulatorServer: AccountServer {
    public let blobPort: Int
    public let tablePort: Int
    public let configuration: EmulatorConfiguration
    private let group: ServiceGroup
    private let runner: Task<Void, any Error>
    private let core: StorageEmulatorCore

    /// The account the emulator serves, with endpoints on its actual ports. Clients connect to
    /// loopback when the server listens on every address.
    public var servedAccount: ServedAccount {
        let host = configuration.host == "0.0.0.0" || configuration.host == "::" ? "127.0.0.1" : configuration.host
        let scheme = configuration.tls == nil ? "http" : "https"
        return ServedAccount(
            name: configuration.accountName, key: configuration.accountKey,
            blobEndpoint: URL(string: "\(scheme)://\(host):\(blobPort)/\(configuration.accountName)")!,
            tableEndpoint: URL(string: "\(scheme)://\(host):\(tablePort)/\(configuration.accountName)")!)
    }

    private init(
        blobPort: Int, tablePort: Int, configuration: EmulatorConfiguration, group: ServiceGroup, runner: Task<Void, any Error>,
        core: StorageEmulatorCore
    ) {
        self.core = core
        self.blobPort = blobPort
        self.tablePort = tablePort
        self.configuration = configuration
        self.group = group
        self.runner = runner
    }

    /// The server side of TLS from PEM files; a file that cannot be used is an
    /// ``EmulatorStartError`` naming it.
    static func tlsConfiguration(certificateFile: String, keyFile: String) throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMFile(certificateFile) } catch {
            throw EmulatorStartError(
                phrase:
                    "\(Setting.certificate) \(certificateFile): not a readable PEM certificate (\(FileManager.default.isReadableFile(atPath: certificateFile) ? "no certificate in it" : "cannot be read")); pass the server certificate (and its chain) in PEM"
            )
        }
        guard !chain.isEmpty else { throw EmulatorStartError(phrase: "\(Setting.certificate) \(certificateFile): holds no PEM certificate") }
        let key: NIOSSLPrivateKey
        do { key = try NIOSSLPrivateKey(file: keyFile, format: .pem) } catch {
            throw EmulatorStartError(
                phrase:
                    "\(Setting.privateKey) \(keyFile): not a readable PEM private key (\(FileManager.default.isReadableFile(atPath: keyFile) ? "no key in it" : "cannot be read")); pass the certificate's private key in PEM"
            )
        }
        let configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        // A key of another certificate is only found when a context is made: made here, so
        // it is one line naming both files, not NIOSSL's `failedToLoadPrivateKey`.
        do { _ = try NIOSSLContext(configuration: configuration) } catch {
            throw EmulatorStartError(
                phrase:
                    "\(Setting.privateKey) \(keyFile) is not the private key of the certificate in \(Setting.certificate) \(certificateFile); pass the key that goes with it"
            )
        }
        return configuration
    }

    /// HTTP/1.1 as Azure speaks it: `Expect: 100-continue` answered (``ExpectContinueHandler``).
    static var http1: HTTP1Channel.Configuration { HTTP1Channel.Configuration(additionalChannelHandlers: [ExpectContinueHandler()]) }

    /// Opens the store and starts both services; returns once both listen.
    /// How long a graceful stop waits for requests in flight before cancelling them.
    static let gracefulStopBound: Duration = .seconds(5)

    /// `shutdownOnSignals` makes SIGINT, SIGTERM and SIGHUP stop it gracefully (for `azseed emulator`).
    public static func start(_ configuration: EmulatorConfiguration, shutdownOnSignals: Bool = false) async throws -> EmulatorServer {
        // The certificate and key are read (blocking file reads) before the store opens.
        let server: HTTPServerBuilder
        if let tls = configuration.tls {
            let tlsConfiguration = try await BlockingPool.run {
                try Self.tlsConfiguration(certificateFile: tls.certificateFile, keyFile: tls.keyFile)
            }
            server = try .tls(.http1(configuration: Self.http1), tlsConfiguration: tlsConfiguration)
        } else {
            server = .http1(configuration: Self.http1)
        }
        // Opening the store locks the folder, opens and migrates the database and sweeps orphan
        // files: blocking work, done on the blocking-I/O threads.
        let core = try await BlockingPool.run { try StorageEmulatorCore(configuration: configuration) }
        await core.finishInterruptedWork()
        let startup = StartupGate()
        // The HTTP server logs through the same injected logger as the requests.
        let logger = configuration.logger
        func application(_ kind: EmulatorServiceKind, port: Int) -> some Service {
            Application(
                responder: EmulatorResponder(core: core, service: kind),
                server: server,
                configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: port), serverName: nil),
                onServerRunning: { channel in await startup.listening(kind, port: channel.localAddress?.port ?? port) },
                logger: logger)
        }
        var groupConfiguration = ServiceGroupConfiguration(
            services: [application(.blob, port: configuration.blobPort), application(.table, port: configuration.tablePort)].map {
                ServiceGroupConfiguration.ServiceConfiguration(service: $0)
            },
            gracefulShutdownSignals: shutdownOnSignals ? [.sigterm, .sigint, .sighup] : [],
            logger: logger)
        // A graceful stop waits for requests in flight, but not for ever: an attacker's review
        // held one open (a body never finished) and no signal stopped the emulator. Past the
        // bound the requests are cancelled; the store still closes as on any stop.
        groupConfiguration.maximumGracefulShutdownDuration = Self.gracefulStopBound
        let group = ServiceGroup(configuration: groupConfiguration)
        let runner = Task {
            // Storage Analytics writes what it gathered every few seconds, and once more when
            // the services stop (before the store closes: every caller awaits the runner first).
            let analytics = Task { await core.analytics.run() }
            do {
                try await group.run()
                analytics.cancel()
                await analytics.value  // a flush under way finishes before the last one
                await core.analytics.flush()
                await startup.failed(EmulatorStartError(phrase: "the emulator stopped before it was listening"))
            } catch {
                analytics.cancel()
                await analytics.value
                await core.analytics.flush()
                await startup.failed(error)
                throw error
            }
        }
        do {
            let (blob, table) = try await startup.wait()
            let server = EmulatorServer(blobPort: blob, tablePort: table, configuration: configuration, group: group, runner: runner, core: core)
            core.store.lock?.write(blob: server.servedAccount.blobEndpoint, table: server.servedAccount.tableEndpoint)
            return server
        } catch {
            await group.triggerGracefulShutdown()
            _ = try? await runner.value
            await core.store.close()
            let reason: Phrase =
                "\(error)".contains("Address already in use")
                ? "a port is already in use (another emulator or Azurite?); stop it, or pick \(Setting.ports)"
                : Phrase(verbatim: "\(error)")
            throw EmulatorStartError(
                phrase: "cannot listen on \(configuration.host) ports \(configuration.blobPort) and \(configuration.tablePort): \(reason)")
        }
    }

    /// Stops accepting requests, lets those in flight finish, and returns when both services stopped.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await runner.value
        await core.store.close()
    }

    /// Starts a server, runs `body` with it, and stops it whether or not `body` threw.
    public static func withRunning<T>(_ configuration: EmulatorConfiguration, _ body: (EmulatorServer) async throws -> T) async throws -> T {
        let server = try await start(configuration)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Returns when the server stops (a signal, when started with `shutdownOnSignals`).
    public func wait() async throws {
        do {
            try await runner.value
        } catch {
            await core.store.close()
            throw error
        }
        await core.store.close()
    }
}

/// Why the emulator could not start.
public struct EmulatorStartError: Error, CustomStringConvertible, PersonFacingError {
    public var phrase: Phrase
}

/// Waits until both services listen, or one fails to.
private actor StartupGate {
    private var ports: [EmulatorServiceKind: Int] = [:]
    private var error: (any Error)?
    private var waiter: CheckedContinuation<(Int, Int), any Error>?

    func listening(_ kind: EmulatorServiceKind, port: Int) {
        ports[kind] = port
        resume()
    }

    func failed(_ error: any Error) {
        if self.error == nil { self.error = error }
        resume()
    }

    func wait() async throws -> (Int, Int) {
        try await withCheckedThrowingContinuation { continuation in
            waiter = continuation
            resume()
        }
    }

    private func resume() {
        guard let waiter else { return }
        if let blob = ports[.blob], let table = ports[.table] {
            self.waiter = nil
            waiter.resume(returning: (blob, table))
        } else if let error {
            self.waiter = nil
            waiter.resume(throwing: error)
        }
    }
}
