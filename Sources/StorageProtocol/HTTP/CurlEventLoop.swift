import CCurl
import Foundation
import Synchronization

/// libcurl's multi interface driven from one thread of its own, the way an event loop drives
/// sockets: every transfer of every `CurlTransport` in the process runs there, so a request in
/// flight occupies no thread at all — not one of the Swift cooperative pool, not one of
/// Dispatch's global queues. (The easy interface's `curl_easy_perform` blocks its thread for
/// the whole request; eight requests in flight blocked both threads of a 2-core machine and
/// starved the embedded emulator's database writer: 7 s for 118 entities.)
///
/// Other threads only append to the inbox and call `curl_multi_wakeup` (thread-safe by
/// libcurl's contract); handles, sockets and callbacks belong to the loop thread alone. The
/// multi handle's connection cache keeps connections alive per host between transfers.
final class CurlEventLoop: Sendable {
    /// The process's loop, started on first use; its thread lives as long as the process.
    static let shared = CurlEventLoop()

    enum Command {
        case start(CurlTransfer)
        case cancel(CurlTransfer)
    }

    private let multi: MultiHandle
    private let inbox = Mutex<[Command]>([])

    private init() {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        guard let handle = curl_multi_init() else { fatalError("curl_multi_init failed: out of memory") }
        multi = MultiHandle(raw: handle)
        // The dedicated thread: the only place libcurl runs.
        let thread = Thread { [self] in CurlLoopThread(multi: multi.raw).run(self) }
        thread.name = "azseed.curl"
        thread.start()
    }

    /// Hands a transfer to the loop; its continuation is resumed from the loop thread.
    func start(_ transfer: CurlTransfer) { post(.start(transfer)) }

    /// Aborts a transfer that has not finished (a cancelled Swift task); it ends with
    /// `CancellationError`. A transfer that already finished is left as it was.
    func cancel(_ transfer: CurlTransfer) { post(.cancel(transfer)) }

    private func post(_ command: Command) {
        inbox.withLock { $0.append(command) }
        curl_multi_wakeup(multi.raw)
    }

    /// What arrived since the last look (called by the loop thread).
    func takeCommands() -> [Command] {
        inbox.withLock { commands in
            defer { commands = [] }
            return commands
        }
    }
}

/// The multi handle's pointer; libcurl allows `curl_multi_wakeup` from any thread, everything
/// else happens on the loop thread.
private struct MultiHandle: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer
}

/// The loop thread's state: transfers in flight by easy handle, easy handles kept for reuse.
/// Touched only by the loop thread.
private final class CurlLoopThread {
    private let multi: UnsafeMutableRawPointer
    private var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var idleEasy: [UnsafeMutableRawPointer] = []
    private static let maxIdleEasy = 64

    init(multi: UnsafeMutableRawPointer) { self.multi = multi }

    func run(_ loop: CurlEventLoop) {
        while true {
            for command in loop.takeCommands() {
                switch command {
                case .start(let transfer): start(transfer)
                case .cancel(let transfer): cancel(transfer)
                }
            }
            var active: Int32 = 0
            let performed = curl_multi_perform(multi, &active)
            if performed != CURLM_OK && performed != CURLM_CALL_MULTI_PERFORM {
                // The multi handle itself failed: no transfer in it can finish; fail them all.
                failAll(CurlError(message: "the transport failed (libcurl multi error \(performed.rawValue))"))
            }
            finishCompleted()
            // Sleeps until a socket is ready, libcurl's next timer, a wakeup, or 1 s.
            _ = curl_multi_poll(multi, nil, 0, 1000, nil)
        }
    }

    private func start(_ transfer: CurlTransfer) {
        guard transfer.isPending else { return }  // cancelled before it began
        let easy = idleEasy.popLast() ?? curl_easy_init()
        guard let easy else {
            transfer.finish(.failure(CurlError(message: "out of memory starting a request")))
            return
        }
        transfer.configure(easy)
        running[easy] = transfer
        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else {
            // Never in the multi: it would wait forever for a completion that cannot come.
            running[easy] = nil
            curl_easy_reset(easy)
            transfer.release()
            curl_easy_cleanup(easy)
            transfer.finish(.failure(CurlError(message: "the transport could not start the request (libcurl multi error \(added.rawValue))")))
            return
        }
    }

    private func failAll(_ error: CurlError) {
        for (easy, transfer) in running {
            retire(easy)
            transfer.finish(.failure(error))
        }
    }

    private func cancel(_ transfer: CurlTransfer) {
        guard let easy = running.first(where: { $0.value === transfer })?.key else {
            transfer.finish(.failure(CancellationError()))  // not started yet: never will be
            return
        }
        retire(easy)
        transfer.finish(.failure(CancellationError()))
    }

    private func finishCompleted() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                let transfer = running[easy]
            else { continue }
            let result = transfer.result(code: azs_curl_msg_result(message), easy: easy)
            retire(easy)
            transfer.finish(result)
        }
    }

    /// Takes a handle out of the multi and keeps it (options cleared, connections kept in the
    /// multi's cache) for the next transfer. Order matters: removed while its options still
    /// hold (a CONNECT_ONLY probe's connection is closed there, not leaked into the cache),
    /// reset so it points at nothing, and only then the transfer's buffers freed.
    private func retire(_ easy: UnsafeMutableRawPointer) {
        _ = curl_multi_remove_handle(multi, easy)
        curl_easy_reset(easy)
        running[easy]?.release()
        running[easy] = nil
        if idleEasy.count < Self.maxIdleEasy { idleEasy.append(easy) } else { curl_easy_cleanup(easy) }
    }
}
