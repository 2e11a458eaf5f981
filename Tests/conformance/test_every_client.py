"""Every client, not only Python's (issue 46): the HTTP exchange as other SDKs and tools make it.

`Expect: 100-continue` (the Azure SDK for C++ on every body, curl on large ones) is answered at
the socket; listings leave out the optional elements a request did not send (Rust's
object_store refuses `<MaxResults />`); a container name no container can have is 400 on every
request; the service versions current SDKs send are served; Rust's object_store (through
obstore) makes a whole round trip."""
import os
import shutil
import socket
import subprocess
import time
import uuid
from email.utils import formatdate

import pytest
from azure.core.pipeline import PipelineContext, PipelineRequest
from azure.core.pipeline.transport import HttpRequest
from azure.storage.blob._shared.authentication import SharedKeyCredentialPolicy as BlobPolicy

from conftest import ACCOUNT, KEY, port


def signed(method, url, headers):
    """Shared Key headers for a request, signed with the official SDK's own policy."""
    headers = {"x-ms-version": "2026-06-06", "x-ms-date": formatdate(usegmt=True), **headers}
    request = HttpRequest(method, url, headers=headers)
    BlobPolicy(ACCOUNT, KEY).on_request(PipelineRequest(request, PipelineContext(None)))
    return dict(request.headers)


def head_bytes(method, target, headers):
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


class Wire:
    """One connection, read by hand: what a client that waits for `100 Continue` sees."""

    def __init__(self, emulator, timeout=5):
        self.sock = socket.create_connection(("127.0.0.1", port(emulator.blob)), timeout=timeout)
        self.buffer = b""

    def send(self, data):
        self.sock.sendall(data)

    def response(self):
        """(status, headers, body) of the next response, informational ones included."""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError(f"closed before a response; had {self.buffer!r}")
            self.buffer += chunk
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
        length = int(headers.get("content-length", "0")) if status >= 200 else 0
        while len(self.buffer) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.buffer += chunk
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, headers, body

    def closed(self):
        """Whether the server closed the connection (nothing more to read)."""
        try:
            return self.buffer == b"" and self.sock.recv(1) == b""
        except socket.timeout:
            return False

    def close(self):
        self.sock.close()


@pytest.fixture
def container(emulator):
    name = "c" + uuid.uuid4().hex[:12]
    assert emulator.raw("PUT", f"{emulator.blob}/{name}?restype=container").status_code == 201
    return name


def put_blob(emulator, container, blob, body, extra=None):
    url = f"{emulator.blob}/{container}/{blob}"
    headers = signed("PUT", url, {"x-ms-blob-type": "BlockBlob", "Content-Length": str(len(body)), **(extra or {})})
    return f"/{ACCOUNT}/{container}/{blob}", headers


def test_expect_continue_is_answered_before_the_body(emulator, container):
    body = os.urandom(70_000)
    target, headers = put_blob(emulator, container, "expect.bin", body, {"Expect": "100-continue"})
    wire = Wire(emulator)
    wire.send(head_bytes("PUT", target, headers))
    status, _, _ = wire.response()  # before the fix: a timeout, nothing ever came
    assert status == 100
    wire.send(body)
    status, headers, _ = wire.response()
    assert status == 201 and headers.get("connection", "").lower() != "close"
    # The connection carries the next request.
    get = signed("GET", f"{emulator.blob}/{container}/expect.bin", {})
    wire.send(head_bytes("GET", target, get))
    status, _, read = wire.response()
    assert (status, read) == (200, body)
    wire.close()


def test_a_request_refused_on_its_headers_gets_its_answer_without_the_body(emulator, container):
    body = b"x" * 5000
    target, headers = put_blob(emulator, container, "refused.bin", body, {"Expect": "100-continue"})
    headers["Authorization"] = headers["Authorization"][:-6] + "AAAAA="  # a wrong signature
    wire = Wire(emulator)
    wire.send(head_bytes("PUT", target, headers))
    status, answer, _ = wire.response()
    assert status == 403 and answer.get("connection", "").lower() == "close"
    assert wire.closed()
    wire.close()
    assert emulator.raw("HEAD", f"{emulator.blob}/{container}/refused.bin").status_code == 404
    # A body over the limit: refused on its Content-Length the same way, the body never asked for.
    wire = Wire(emulator)
    target, headers = put_blob(emulator, container, "huge.bin", b"", {"Expect": "100-continue"})
    headers["Content-Length"] = str(5 * 1024**4)
    wire.send(head_bytes("PUT", target, headers))
    status, answer, _ = wire.response()
    assert status == 413 and answer.get("connection", "").lower() == "close"
    assert wire.closed()
    wire.close()


def test_a_slow_client_sends_its_body_after_continue_in_pieces(emulator, container):
    body = os.urandom(30_000)
    target, headers = put_blob(emulator, container, "slow.bin", body, {"Expect": "100-Continue"})
    wire = Wire(emulator)
    wire.send(head_bytes("PUT", target, headers))
    assert wire.response()[0] == 100
    for start in range(0, len(body), 10_000):
        time.sleep(0.3)
        wire.send(body[start:start + 10_000])
    assert wire.response()[0] == 201
    wire.close()
    assert emulator.raw("GET", f"{emulator.blob}/{container}/slow.bin").content == body


def test_pipelined_requests_with_an_expectation_among_them(emulator, container):
    first = b"first body"
    second = os.urandom(4000)
    target1, headers1 = put_blob(emulator, container, "one.txt", first)
    target2, headers2 = put_blob(emulator, container, "two.bin", second, {"Expect": "100-continue"})
    wire = Wire(emulator)
    # The first request whole and the second's head in one write: the first is answered, then
    # the second gets its `100 Continue`.
    wire.send(head_bytes("PUT", target1, headers1) + first + head_bytes("PUT", target2, headers2))
    assert wire.response()[0] == 201
    assert wire.response()[0] == 100
    wire.send(second)
    assert wire.response()[0] == 201
    # A client that does not wait sends the body at once: it needs no `100 Continue`, and one
    # sent anyway is read past.
    target3, headers3 = put_blob(emulator, container, "three.bin", second, {"Expect": "100-continue"})
    wire.send(head_bytes("PUT", target3, headers3) + second)
    status = wire.response()[0]
    if status == 100:
        status = wire.response()[0]
    assert status == 201
    wire.close()
    assert emulator.raw("GET", f"{emulator.blob}/{container}/two.bin").content == second


def test_curl_uploads_with_expect_continue_at_once(emulator, container, tmp_path):
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    source = tmp_path / "upload.bin"
    source.write_bytes(os.urandom(2 * 1024 * 1024))
    url = f"{emulator.blob}/{container}/curl.bin"
    headers = signed("PUT", url, {"x-ms-blob-type": "BlockBlob", "Content-Length": str(source.stat().st_size)})
    args = [curl, "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-T", str(source), "--expect100-timeout", "20",
            "-H", "Expect: 100-continue"]
    for name, value in headers.items():
        if name.lower() != "content-length":
            args += ["-H", f"{name}: {value}"]
    started = time.monotonic()
    done = subprocess.run(args + [url], capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - started
    assert done.stdout == "201", done.stderr
    # Without an answer curl waits out its expect100-timeout (20 s here, 1 s by default).
    assert elapsed < 5, f"curl took {elapsed:.1f} s"
    assert emulator.raw("HEAD", url).headers["Content-Length"] == str(2 * 1024 * 1024)


def test_listings_leave_out_the_elements_the_request_did_not_send(emulator, container):
    emulator.raw("PUT", f"{emulator.blob}/{container}/a.txt", {"x-ms-blob-type": "BlockBlob"}, b"a")
    bare = emulator.raw("GET", f"{emulator.blob}/{container}?restype=container&comp=list").text
    for element in ("<Prefix", "<Marker", "<MaxResults", "<Delimiter"):
        assert element not in bare, bare
    assert "<NextMarker />" in bare  # Azure always sends it
    asked = emulator.raw("GET", f"{emulator.blob}/{container}?restype=container&comp=list&prefix=a&maxresults=5&delimiter=/").text
    assert "<Prefix>a</Prefix>" in asked and "<MaxResults>5</MaxResults>" in asked and "<Delimiter>/</Delimiter>" in asked
    containers = emulator.raw("GET", f"{emulator.blob}/?comp=list").text
    for element in ("<Prefix", "<Marker", "<MaxResults"):
        assert element not in containers, containers
    assert "<MaxResults>2</MaxResults>" in emulator.raw("GET", f"{emulator.blob}/?comp=list&maxresults=2").text


@pytest.mark.parametrize("name,code", [
    ("ab", "OutOfRangeInput"), ("a" * 64, "OutOfRangeInput"), ("Upper", "InvalidResourceName"),
    ("under_score", "InvalidResourceName"), ("double--dash", "InvalidResourceName"), ("-leading", "InvalidResourceName"),
])
def test_a_container_name_no_container_can_have_is_400_on_every_request(emulator, name, code):
    for method, suffix in [("GET", "?restype=container"), ("HEAD", "?restype=container"), ("DELETE", "?restype=container"),
                           ("GET", "?restype=container&comp=list"), ("GET", "/blob.txt"), ("PUT", "/blob.txt")]:
        extra = {"x-ms-blob-type": "BlockBlob"} if method == "PUT" else {}
        answer = emulator.raw(method, f"{emulator.blob}/{name}{suffix}", extra, b"x" if method == "PUT" else b"")
        assert answer.status_code == 400, (method, suffix, answer.status_code, answer.text)
        assert answer.headers.get("x-ms-error-code") == code, (method, suffix, answer.headers)
    # The names Azure itself uses answer as they did.
    assert emulator.raw("GET", f"{emulator.blob}/$logs?restype=container").status_code in (200, 404)
    assert emulator.raw("GET", f"{emulator.blob}/$root?restype=container").status_code in (200, 404)


def test_current_service_versions_are_served_and_a_future_one_refused(emulator):
    for version in ("2026-06-06", "2026-10-06", "2019-02-02"):
        answer = emulator.raw("GET", f"{emulator.blob}/?comp=list", {"x-ms-version": version})
        assert answer.status_code == 200 and answer.headers["x-ms-version"] == version
    future = emulator.raw("GET", f"{emulator.blob}/?comp=list", {"x-ms-version": "2099-01-01"})
    assert future.status_code == 400 and future.headers["x-ms-error-code"] == "InvalidHeaderValue"
    assert "<HeaderName>x-ms-version</HeaderName>" in future.text


def test_rust_object_store_round_trip(emulator, container):
    """Rust's object_store, through obstore: the calls a dataframe library makes."""
    obstore = pytest.importorskip("obstore")
    from obstore.store import AzureStore

    store = AzureStore(container_name=container, account_name=ACCOUNT, account_key=KEY, endpoint=emulator.blob,
                       client_options={"allow_http": True})
    obstore.put(store, "data/one.txt", b"hello object store")
    obstore.put(store, "data/deep/two.txt", b"two")
    obstore.put(store, "top.txt", b"top")
    assert obstore.get(store, "data/one.txt").bytes().to_bytes() == b"hello object store"
    assert bytes(obstore.get_range(store, "data/one.txt", start=6, end=12)) == b"object"
    everything = sorted(m["path"] for batch in obstore.list(store) for m in batch)
    assert everything == ["data/deep/two.txt", "data/one.txt", "top.txt"]
    assert sorted(m["path"] for batch in obstore.list(store, prefix="data") for m in batch) == ["data/deep/two.txt", "data/one.txt"]
    listed = obstore.list_with_delimiter(store, prefix="data")
    assert listed["common_prefixes"] == ["data/deep"] and [m["path"] for m in listed["objects"]] == ["data/one.txt"]
    # A multipart upload of 20 MiB (Put Block and Put Block List underneath).
    big = os.urandom(20 * 1024 * 1024)
    obstore.put(store, "big.bin", big, chunk_size=5 * 1024 * 1024, max_concurrency=4)
    assert obstore.head(store, "big.bin")["size"] == len(big)
    assert obstore.get(store, "big.bin").bytes().to_bytes() == big
    obstore.delete(store, "top.txt")
    with pytest.raises(FileNotFoundError):
        obstore.get(store, "top.txt")


def test_a_forged_upload_that_does_not_wait_is_refused_and_nothing_stored(emulator, container):
    """An attacker announces `Expect: 100-continue` with a forged signature and sends 4 MiB at
    once anyway: the answer is 403 and a closed connection, and nothing is stored."""
    body = os.urandom(4 << 20)
    target, headers = put_blob(emulator, container, "forged.bin", body, {"Expect": "100-continue"})
    headers["Authorization"] = headers["Authorization"][:-6] + "AAAAA="
    wire = Wire(emulator, timeout=10)
    try:
        wire.send(head_bytes("PUT", target, headers) + body)
    except (BrokenPipeError, ConnectionResetError):
        pass  # closed while the body was still going: refused without reading it
    status, answer, _ = wire.response()
    assert status == 403 and answer.get("connection", "").lower() == "close"
    wire.close()
    assert emulator.raw("HEAD", f"{emulator.blob}/{container}/forged.bin").status_code == 404


def test_an_anonymous_preflight_body_is_not_held(emulator, container):
    """An attacker's review: an anonymous OPTIONS with a body had it buffered (up to the 128 MiB
    budget, then every signed table write was 503). Now it is answered at once, its body never
    buffered nor asked for."""
    wire = Wire(emulator)
    preflight = {"Origin": "http://example.com", "Access-Control-Request-Method": "PUT", "Content-Length": str(64 << 20),
                 "Expect": "100-continue"}
    wire.send(head_bytes("OPTIONS", f"/{ACCOUNT}/{container}/x", preflight))
    status, _, _ = wire.response()  # not 100: the body is never asked for
    assert status in (200, 403)
    wire.close()
