import AzseedTestSupport
import AzureStorage
import Foundation
import Testing

/// The real transport over a real socket: a tiny echo server (Python, on loopback port 0)
/// reports exactly what arrived, so header handling, methods and Content-Length are checked
/// on the wire, not assumed.
@Suite struct TransportTests {
    static let echoServer = #"""
        import json, socket, sys, threading
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0)); s.listen(8)
        print(s.getsockname()[1], flush=True)
        s.settimeout(30)
        # Each connection on its own thread: a client that opens a second connection while its
        # first is idle is served, not left in the backlog until the first one times out.
        def serve(c):
            c.settimeout(10)
            try:
                while True:
                    data = b""
                    while b"\r\n\r\n" not in data:
                        chunk = c.recv(65536)
                        if not chunk: break
                        data += chunk
                    if not data: break
                    head, _, rest = data.partition(b"\r\n\r\n")
                    lines = head.decode("latin-1").split("\r\n")
                    method, target, _ = lines[0].split(" ", 2)
                    headers = [l.split(":", 1) for l in lines[1:]]
                    headers = [[k.strip(), v.strip()] for k, v in headers]
                    length = int(next((v for k, v in headers if k.lower() == "content-length"), "0"))
                    while len(rest) < length:
                        rest += c.recv(65536)
                    body = json.dumps({"method": method, "target": target, "headers": headers, "body": rest[:length].decode("latin-1")}).encode()
                    c.sendall(b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nx-ms-request-id: echo\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            except OSError:
                pass
            c.close()
        while True:
            try:
                c, _ = s.accept()
            except socket.timeout:
                break
            threading.Thread(target=serve, args=(c,), daemon=True).start()
        """#

    @Test func requestsArriveExactlyAsBuilt() async throws {
        let server = try Processes.startPythonServer(Self.echoServer)
        defer { server.stop() }
        let port = server.port
        let transport = CurlTransport(timeout: 10)
        for method in ["PUT", "MERGE", "PATCH", "POST", "DELETE", "GET"] {
            let body = method == "GET" || method == "DELETE" ? Data() : Data("{\"a\":\"ü\"}".utf8)
            let request = TransportRequest(
                method: method, origin: "http://127.0.0.1:\(port)", path: "/devstoreaccount1/t(PartitionKey='p%20k%27%271',RowKey='r')",
                query: [("$filter", "A eq 'x y'"), ("comp", "list")],
                headers: HeaderFields([("x-ms-meta-a_b", "1"), ("Content-Length", String(body.count)), ("If-Match", "*")]), body: body)
            let response = try await transport.send(request)
            #expect(response.status == 201)
            #expect(response.headers["x-ms-request-id"] == "echo")
            let echo = try JSONParser.parse(Array(response.body))
            #expect(echo["method"]?.stringValue == method)
            #expect(
                echo["target"]?.stringValue == "/devstoreaccount1/t(PartitionKey='p%20k%27%271',RowKey='r')?$filter=A%20eq%20%27x%20y%27&comp=list")
            // The server decodes bytes as Latin-1, so this compares the raw bytes sent.
            #expect(echo["body"]?.stringValue == String(data: body, encoding: .isoLatin1))
            guard case .array(let headers)? = echo["headers"] else {
                Issue.record("no headers")
                continue
            }
            let pairs = headers.compactMap { h -> (String, String)? in
                guard case .array(let kv) = h, kv.count == 2, let k = kv[0].stringValue, let v = kv[1].stringValue else { return nil }
                return (k.lowercased(), v)
            }
            #expect(pairs.contains { $0 == ("x-ms-meta-a_b", "1") })
            #expect(pairs.contains { $0 == ("if-match", "*") })
            #expect(!pairs.contains { $0.0 == "transfer-encoding" }, "bodies must not be chunked")
            if !body.isEmpty { #expect(pairs.contains { $0 == ("content-length", String(body.count)) }) }
        }
    }

    @Test func refusedConnectionIsATransportError() async throws {
        let transport = CurlTransport(timeout: 5)
        let client = TableClient(
            account: .development(host: "127.0.0.1", blobPort: 9, tablePort: 9), transport: transport,
            configuration: ClientConfiguration(retry: .noRetry))
        await #expect(
            performing: { try await client.createTable("events") },
            throws: { error in
                guard let e = error as? AzureStorageError else { return false }
                return e.kind == .transport && e.isTransient && "\(e)".contains("http://127.0.0.1:9/devstoreaccount1/Tables")
            })
    }
}
