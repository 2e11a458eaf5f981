"""Issue 28, items 1, 5 and 6, written as the attacker would: a SAS holder trying to read private
blobs through a copy, and a stranger trying to make the emulator fetch what it should not (a
loopback admin page, a body larger than asked, a source that drips, a redirect, bad headers).
docs/SECURITY.md names the actors; every test here failed on the main before the fix."""
import http.server
import os
import threading
import time

import pytest
from azure.core.exceptions import HttpResponseError
from azure.storage.blob import (BlobBlock, BlobClient, BlobSasPermissions, BlobServiceClient, ContainerClient, ContainerSasPermissions,
                                generate_blob_sas, generate_container_sas)

from conftest import ACCOUNT, KEY, register_secret, start_emulator, stop_emulator
from test_sas import later


@pytest.fixture
def private_and_pub(emulator, name):
    service = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0)
    secret = service.create_container(name + "secret")
    secret.upload_blob("s.txt", b"the private bytes")
    pub = service.create_container(name + "pub")
    pub.upload_blob("mine.txt", b"mine")
    return service, secret, pub


def copy_refused(call, status=401):
    with pytest.raises(HttpResponseError) as e:
        call()
    assert e.value.status_code == status, (e.value.status_code, str(e.value)[:400])
    assert e.value.error_code == "CannotVerifyCopySource", str(e.value)[:400]
    return e.value


def test_a_write_sas_cannot_read_a_private_blob_through_any_copy(emulator, private_and_pub):
    service, secret, pub = private_and_pub
    source = secret.get_blob_client("s.txt").url  # no SAS: private, same account
    sas = register_secret(generate_container_sas(ACCOUNT, pub.container_name, KEY, permission=ContainerSasPermissions(create=True, write=True),
                                                 expiry=later()))
    attacker = ContainerClient(emulator.blob, pub.container_name, credential=sas, retry_total=0)
    target = attacker.get_blob_client("stolen.txt")
    copy_refused(lambda: target.upload_blob_from_url(source))  # Put Blob From URL
    copy_refused(lambda: target.start_copy_from_url(source))  # Copy Blob
    copy_refused(lambda: target.start_copy_from_url(source, requires_sync=True))  # Copy Blob From URL
    copy_refused(lambda: target.stage_block_from_url("YmxvY2sx", source))  # Put Block From URL
    # One blob's SAS (rcw on pub/mine.txt) cannot pull the private blob onto itself either.
    blob_sas = register_secret(generate_blob_sas(ACCOUNT, pub.container_name, "mine.txt", account_key=KEY,
                                                 permission=BlobSasPermissions(read=True, create=True, write=True), expiry=later()))
    mine = BlobClient(emulator.blob, pub.container_name, "mine.txt", credential=blob_sas, retry_total=0)
    copy_refused(lambda: mine.upload_blob_from_url(source, overwrite=True))
    copy_refused(lambda: mine.start_copy_from_url(source))
    error = copy_refused(lambda: mine.start_copy_from_url(source, requires_sync=True))
    assert error.response.headers.get("x-ms-copy-source-status-code") == "401"
    assert mine.download_blob().readall() == b"mine"
    assert not pub.get_blob_client("stolen.txt").exists()


def test_the_source_sas_is_verified_like_any_sas(emulator, private_and_pub):
    service, secret, pub = private_and_pub
    blob = secret.get_blob_client("s.txt")
    target = pub.get_blob_client("copied.txt")  # the destination signed with the key
    # A source SAS without `r`, expired, or for another blob is refused with the source's answer.
    for permission, expiry, blob_name in [(BlobSasPermissions(write=True), later(), "s.txt"), (BlobSasPermissions(read=True), later(-1), "s.txt"),
                                          (BlobSasPermissions(read=True), later(), "other.txt")]:
        sas = register_secret(generate_blob_sas(ACCOUNT, secret.container_name, blob_name, account_key=KEY, permission=permission, expiry=expiry))
        error = copy_refused(lambda: target.upload_blob_from_url(f"{blob.url}?{sas}", overwrite=True), 403)
        assert error.response.headers.get("x-ms-copy-source-status-code") == "403"
    # A forged signature is refused too.
    good = generate_blob_sas(ACCOUNT, secret.container_name, "s.txt", account_key=KEY, permission=BlobSasPermissions(read=True), expiry=later())
    forged = register_secret(good.replace("sig=", "sig=AAAA"))
    copy_refused(lambda: target.upload_blob_from_url(f"{blob.url}?{forged}", overwrite=True), 403)
    # A read SAS for the source works with every copy operation; so does a public container.
    sas = register_secret(good)
    target.upload_blob_from_url(f"{blob.url}?{sas}", overwrite=True)
    assert target.download_blob().readall() == b"the private bytes"
    pub.get_blob_client("c2.txt").start_copy_from_url(f"{blob.url}?{sas}", requires_sync=True)
    secret.set_container_access_policy({}, public_access="blob")
    pub.get_blob_client("c3.txt").upload_blob_from_url(blob.url)
    assert pub.get_blob_client("c3.txt").download_blob().readall() == b"the private bytes"


def test_copy_blob_with_the_account_key_reads_its_own_account(emulator, private_and_pub):
    # The one implicit case Azure has: Copy Blob, same account, Shared Key.
    service, secret, pub = private_and_pub
    target = pub.get_blob_client("k.txt")
    assert target.start_copy_from_url(secret.get_blob_client("s.txt").url)["copy_status"] == "success"
    assert target.download_blob().readall() == b"the private bytes"
    # Put Blob From URL is not that case, even with the key (the official SDK's own test expects 401).
    copy_refused(lambda: pub.get_blob_client("k2.txt").upload_blob_from_url(secret.get_blob_client("s.txt").url))


class Hostile(http.server.BaseHTTPRequestHandler):
    """A copy source that misbehaves as the path says."""
    protocol_version = "HTTP/1.1"
    hits = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        Hostile.hits.append(self.path)
        if self.path.startswith("/admin/keys"):
            self.answer(200, b"root-credentials")
        elif self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "/admin/keys")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path.startswith("/huge"):
            # Ignores Range, answers 200 with far more than one range.
            self.send_response(200)
            self.send_header("Content-Length", str(64 << 20))
            self.end_headers()
            chunk = b"x" * (1 << 20)
            try:
                for _ in range(64):
                    self.wfile.write(chunk)
            except OSError:
                pass
        elif self.path.startswith("/liar"):
            # A 206 that announces a small range, then sends far more with no length.
            self.send_response(206)
            self.send_header("Content-Range", "bytes 0-1023/1024")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for _ in range(64):
                    self.wfile.write(b"y" * (1 << 20))
            except OSError:
                pass
        elif self.path.startswith("/drip"):
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            try:
                for _ in range(60):
                    self.wfile.write(b"zz")
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                pass
        elif self.path.startswith("/ranged"):
            # Honours Range, and claims to be 300 MiB.
            start, end = (int(x) for x in self.headers["Range"].split("=")[1].split("-"))
            total = 300 << 20
            end = min(end, total - 1)
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{total}")
            self.send_header("Content-Length", str(end - start + 1))
            self.end_headers()
            try:
                self.wfile.write(b"r" * (end - start + 1))
            except OSError:
                pass
        elif self.path.startswith("/badmeta"):
            self.answer(200, b"data", [("x-ms-meta-1bad", "v"), ("x-ms-meta-a-b", "v")])
        elif self.path.startswith("/badmd5"):
            self.answer(200, b"data", [("Content-MD5", "not base64!")])
        else:
            self.answer(200, b"fine bytes")

    def answer(self, status, body, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def hostile():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def test_no_remote_source_is_fetched_unless_its_origin_is_allowed(emulator, hostile, private_and_pub):
    service, secret, pub = private_and_pub
    Hostile.hits.clear()
    error = copy_refused(lambda: pub.get_blob_client("loot.txt").upload_blob_from_url(f"{hostile}/admin/keys"), 403)
    assert "--allow-copy-source" in str(error)
    copy_refused(lambda: pub.get_blob_client("loot.txt").start_copy_from_url(f"{hostile}/admin/keys"), 403)
    # The emulator's own Table port is another origin: not reachable either.
    copy_refused(lambda: pub.get_blob_client("loot.txt").upload_blob_from_url(f"{emulator.table}/Tables"), 403)
    assert Hostile.hits == []
    assert not pub.get_blob_client("loot.txt").exists()


def test_an_allowed_remote_source_is_bounded_in_bytes_time_and_never_redirected(azseed, hostile):
    emulator = start_emulator(azseed, "--in-memory", "--allow-copy-source", hostile, "--copy-source-timeout", "6")
    try:
        pub = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0).create_container("pub")
        pub.get_blob_client("ok.txt").upload_blob_from_url(f"{hostile}/fine")
        assert pub.get_blob_client("ok.txt").download_blob().readall() == b"fine bytes"
        before = rss_mib(emulator.process.pid)
        # Ignores Range with 64 MiB: refused, never held whole.
        copy_refused(lambda: pub.get_blob_client("huge").upload_blob_from_url(f"{hostile}/huge"), 500)
        # Announces 1 KiB, sends 64 MiB: cut at what was asked for.
        pub.get_blob_client("liar").upload_blob_from_url(f"{hostile}/liar")
        assert pub.get_blob_client("liar").get_blob_properties().size == 1024
        assert rss_mib(emulator.process.pid) - before < 200
        # Dripping two bytes a second: ended by the deadline, not held open.
        started = time.monotonic()
        copy_refused(lambda: pub.get_blob_client("drip").upload_blob_from_url(f"{hostile}/drip"), 500)
        assert time.monotonic() - started < 12
        # A redirect is the copy's failure, not followed.
        Hostile.hits.clear()
        copy_refused(lambda: pub.get_blob_client("r").upload_blob_from_url(f"{hostile}/redirect"), 500)
        assert not any(h.startswith("/admin") for h in Hostile.hits)
        # Headers are validated as a direct write's are: nothing stored, and listings still parse.
        copy_refused(lambda: pub.get_blob_client("m").upload_blob_from_url(f"{hostile}/badmeta"), 500)
        copy_refused(lambda: pub.get_blob_client("d").upload_blob_from_url(f"{hostile}/badmd5"), 500)
        assert sorted(b.name for b in pub.list_blobs()) == ["liar", "ok.txt"]
        assert emulator.alive()
    finally:
        stop_emulator(emulator)


def test_a_wildcard_allowance_never_reaches_loopback(azseed, hostile):
    # *.localhost names resolve to loopback: a wildcard allows public addresses only.
    port = hostile.rsplit(":", 1)[1]
    emulator = start_emulator(azseed, "--in-memory", "--allow-copy-source", f"http://*.localhost:{port}")
    try:
        pub = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0).create_container("pub")
        Hostile.hits.clear()
        copy_refused(lambda: pub.get_blob_client("x").upload_blob_from_url(f"http://evil.localhost:{port}/admin/keys"), 500)
        assert Hostile.hits == []
    finally:
        stop_emulator(emulator)


def test_allow_copy_source_is_checked(azseed):
    from conftest import run
    for bad in ["ftp://h", "http://h/path", "http://user:pw@h", "not a url", "http://*", "http://*.127.0.0.1", "http://*.[::1]"]:
        done = run(azseed, "emulator", "--in-memory", "--allow-copy-source", bad)
        assert done.returncode == 64, (bad, done.stderr)
        assert "--allow-copy-source" in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_allowing_localhost_allows_this_machines_other_loopback_names(azseed, hostile):
    port = hostile.rsplit(":", 1)[1]
    emulator = start_emulator(azseed, "--in-memory", "--allow-copy-source", f"http://localhost:{port}")
    try:
        pub = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0).create_container("pub")
        pub.get_blob_client("ok.txt").upload_blob_from_url(f"http://127.0.0.1:{port}/fine")
        assert pub.get_blob_client("ok.txt").download_blob().readall() == b"fine bytes"
    finally:
        stop_emulator(emulator)


def test_a_remote_source_stores_no_more_than_a_direct_write_may(azseed, hostile):
    # From an attacker's review: 300 MiB through each copy operation into a --max-blob-mib 1 emulator.
    emulator = start_emulator(azseed, "--in-memory", "--max-blob-mib", "1", "--allow-copy-source", hostile)
    try:
        pub = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0).create_container("pub")
        before = rss_mib(emulator.process.pid)
        for call in (lambda: pub.get_blob_client("a").upload_blob_from_url(f"{hostile}/ranged"),
                     lambda: pub.get_blob_client("b").start_copy_from_url(f"{hostile}/ranged", requires_sync=True),
                     lambda: pub.get_blob_client("c").start_copy_from_url(f"{hostile}/ranged"),
                     lambda: pub.get_blob_client("d").stage_block_from_url("YmxvY2sx", f"{hostile}/ranged")):
            with pytest.raises(HttpResponseError) as e:
                call()
            assert e.value.status_code == 413 and e.value.error_code == "RequestBodyTooLarge", str(e.value)[:300]
        assert list(pub.list_blobs()) == []
        assert rss_mib(emulator.process.pid) - before < 50
    finally:
        stop_emulator(emulator)
