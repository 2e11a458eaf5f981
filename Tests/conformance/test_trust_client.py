"""Issue 28, items 9, 10 and 12, as a hostile or broken far end would behave: a server that
accepts and never answers, one that stalls mid-answer, a stopped emulator, a dripping key set
— the client ends within its bound with one line naming the endpoint."""
import json
import os
import signal
import socket
import threading
import time

import pytest

from conftest import ACCOUNT, KEY, run, start_emulator, start_entra_emulator, stop_emulator, stop_entra_emulator


def silent_server(behaviour):
    """A TCP server on loopback: 'silent' accepts and reads, never answers; 'stall' answers a
    status line and headers, then nothing; 'trickle' sends 2 KiB/s; 'drip' a byte every 5 s."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held = []

    def serve():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            held.append(connection)
            if behaviour == "stall":
                connection.recv(65536)
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nContent-Type: application/json\r\n\r\n{\"value\": [")
            if behaviour == "trickle":
                def trickle(c=connection):
                    try:
                        c.recv(65536)
                        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10485760\r\nContent-Type: application/json\r\n\r\n")
                        for _ in range(200):
                            c.sendall(b" " * 1024)
                            time.sleep(0.5)
                    except OSError:
                        pass
                threading.Thread(target=trickle, daemon=True).start()
            if behaviour == "drip":
                def drip(c=connection):
                    try:
                        c.recv(65536)
                        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
                        for _ in range(100):
                            c.sendall(b" ")
                            time.sleep(5)
                    except OSError:
                        pass
                threading.Thread(target=drip, daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return listener, held, listener.getsockname()[1]


def connection_string(port):
    return (f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
            f"BlobEndpoint=http://127.0.0.1:{port}/{ACCOUNT};TableEndpoint=http://127.0.0.1:{port}/{ACCOUNT}")


@pytest.mark.parametrize("behaviour", ["silent", "stall"])
def test_a_silent_or_stalled_server_ends_plan_within_15_seconds(azseed, behaviour):
    listener, held, port = silent_server(behaviour)
    try:
        started = time.monotonic()
        done = run(azseed, "plan", "--connection-string", connection_string(port), "--now", "2026-11-21", timeout=120)
        elapsed = time.monotonic() - started
        assert done.returncode == 1, done.stderr
        assert elapsed < 15, f"{behaviour}: {elapsed:.1f} s"
        errors = [line for line in done.stderr.splitlines() if "error" in line]
        assert len(errors) == 1 and f"127.0.0.1:{port}" in errors[0] and "--timeout" in errors[0], done.stderr
    finally:
        listener.close()
        for c in held:
            c.close()


def test_a_stopped_emulator_ends_the_command_and_timeout_is_honoured(azseed):
    emulator = start_emulator(azseed, "--in-memory")
    os.kill(emulator.process.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        done = run(azseed, "plan", "--connection-string", emulator.connection_string, "--now", "2026-11-21", "--timeout", "3", timeout=120)
        elapsed = time.monotonic() - started
        assert done.returncode == 1 and elapsed < 8, (elapsed, done.stderr)
        errors = [line for line in done.stderr.splitlines() if "error" in line]
        assert len(errors) == 1 and "no answer within 3 s" in errors[0], done.stderr
    finally:
        os.kill(emulator.process.pid, signal.SIGCONT)
        stop_emulator(emulator)
    bad = run(azseed, "plan", "--timeout", "0")
    assert bad.returncode == 64 and "--timeout" in bad.stderr


# --- The identity authority's key set: one read at a time, bounded (item 10) ---------------

import concurrent.futures

import identity_provider as idp
from test_tls import make_ca_and_server_certificate


@pytest.fixture
def authority(azseed, tmp_path):
    provider = start_entra_emulator(azseed, tmp_path)
    yield provider
    stop_entra_emulator(provider)


def bearer(provider, token):
    import requests
    return requests.get(provider.emulator.blob + "?comp=list", verify=provider.ca, timeout=60,
                        headers={"Authorization": f"Bearer {token}", "x-ms-version": "2025-11-05",
                                 "x-ms-date": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())})


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def test_thirty_unknown_key_ids_start_one_read(authority):
    tokens = [authority.token(key=idp.new_rsa_key(), kid=f"unknown-{i}") for i in range(30)]
    with concurrent.futures.ThreadPoolExecutor(30) as pool:
        statuses = list(pool.map(lambda t: bearer(authority, t).status_code, tokens))
    assert statuses == [401] * 30
    assert authority.key_reads == 1, authority.key_reads
    assert bearer(authority, authority.token()).status_code == 200


@pytest.mark.parametrize("mode", ["drip", "huge"])
def test_a_dripping_or_huge_key_set_is_bounded(authority, mode):
    authority.keys_mode = mode
    before = rss_mib(authority.emulator.process.pid)
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(10) as pool:
        statuses = list(pool.map(lambda _: bearer(authority, authority.token()).status_code, range(10)))
    elapsed = time.monotonic() - started
    assert statuses == [401] * 10, statuses
    assert elapsed < 15, f"{mode}: bearer requests waited {elapsed:.1f} s"
    assert authority.key_reads == 1, authority.key_reads
    assert rss_mib(authority.emulator.process.pid) - before < 40
    assert authority.emulator.alive()


# --- Smaller ways to hang or confuse (item 12) ---------------------------------------------

import subprocess


def test_a_log_file_that_is_a_fifo_is_refused_at_once(azseed, tmp_path):
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    for args in (["emulator", "--in-memory", "--blob-port", "0", "--table-port", "0"], ["plan", "--now", "2026-11-21"]):
        started = time.monotonic()
        done = run(azseed, *args, "--log-file", str(fifo), timeout=20)
        assert done.returncode != 0 and time.monotonic() - started < 5
        assert "named pipe" in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_a_key_of_another_certificate_is_one_line_naming_both(azseed, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _, cert, _ = make_ca_and_server_certificate(tmp_path / "a")
    _, _, other_key = make_ca_and_server_certificate(tmp_path / "b")
    done = run(azseed, "emulator", "--in-memory", "--blob-port", "0", "--table-port", "0", "--cert", str(cert), "--key", str(other_key), timeout=20)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "--key" in done.stderr and "--cert" in done.stderr and "failedToLoad" not in done.stderr, done.stderr


def test_export_of_a_missing_container_names_the_blob_endpoint(azseed, emulator, tmp_path):
    done = run(azseed, "export", "--connection-string", emulator.connection_string, "--container", "nosuch", "--table", "nosuchtable",
               "--out", str(tmp_path / "out"))
    assert done.returncode == 1 and "container 'nosuch'" in done.stderr and emulator.blob in done.stderr, done.stderr
    assert emulator.table not in done.stderr


def test_an_oversized_header_is_refused_and_the_connection_closed(emulator):
    port = int(emulator.blob.split(":")[2].split("/")[0])
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        try:
            s.sendall(b"GET /devstoreaccount1?comp=list HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (8 << 20) + b"\r\n\r\n")
        except OSError:
            pass  # the server stopped reading: what it should do
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        assert data.startswith(b"HTTP/1.1 400") or data == b"", data[:100]
    finally:
        s.close()
    assert emulator.alive()


def test_a_trickling_server_ends_the_command_too(azseed):
    # 2 KiB/s for a 10 MiB answer: never silent, never done; under 4 KiB/s over a timeout (at least 5 s) ends it.
    listener, held, port = silent_server("trickle")
    try:
        started = time.monotonic()
        done = run(azseed, "plan", "--connection-string", connection_string(port), "--now", "2026-11-21", "--timeout", "2", timeout=120)
        elapsed = time.monotonic() - started
        assert done.returncode == 1 and elapsed < 15, (elapsed, done.stderr)
        errors = [line for line in done.stderr.splitlines() if "error" in line]
        assert len(errors) == 1 and "KiB/s" in errors[0] and f"127.0.0.1:{port}" in errors[0], done.stderr
    finally:
        listener.close()
        for c in held:
            c.close()


def test_a_byte_every_few_seconds_ends_the_command_within_15_seconds(azseed):
    # From an attacker's review: one byte every 5 s never trips the no-byte timeout (10 s).
    listener, held, port = silent_server("drip")
    try:
        started = time.monotonic()
        done = run(azseed, "plan", "--connection-string", connection_string(port), "--now", "2026-11-21", timeout=120)
        assert done.returncode == 1 and time.monotonic() - started < 15, (time.monotonic() - started, done.stderr)
    finally:
        listener.close()
        for c in held:
            c.close()


def test_a_trust_file_that_is_not_a_regular_file_is_refused_at_once(azseed, emulator, tmp_path):
    """From an attacker's review: a named pipe as --ca-file or SSL_CERT_FILE held the transport's
    thread while libcurl opened it, so no timeout fired and the command hung."""
    import os
    import time
    fifo = tmp_path / "fifo.pem"
    os.mkfifo(fifo)
    env = {k: v for k, v in os.environ.items() if k != "AZURE_STORAGE_CONNECTION_STRING"}
    started = time.monotonic()
    by_flag = run(azseed, "plan", "--connection-string", emulator.connection_string, "--ca-file", str(fifo), "--now", "2026-11-21", timeout=30)
    by_env = run(azseed, "plan", "--connection-string", emulator.connection_string, "--now", "2026-11-21", env={**env, "SSL_CERT_FILE": str(fifo)},
                 timeout=30)
    assert time.monotonic() - started < 20
    assert by_flag.returncode == 64 and "--ca-file" in by_flag.stderr and "regular file" in by_flag.stderr, by_flag.stderr
    assert by_env.returncode == 64 and "SSL_CERT_FILE" in by_env.stderr and by_env.stderr.count("\n") == 1, by_env.stderr


def test_a_host_header_cannot_write_into_the_emulators_log(azseed, tmp_path):
    """From an attacker's review: a Host of 'h:1/x/ok 200 - 0 B in …' was logged as the URL, so a
    client could forge log lines."""
    import socket
    from conftest import port, start_emulator, stop_emulator
    log = tmp_path / "served.log"
    emulator = start_emulator(azseed, "--in-memory", "--log-file", str(log))
    try:
        with socket.create_connection(("127.0.0.1", port(emulator.blob)), timeout=10) as s:
            s.sendall(b"GET /devstoreaccount1?comp=list HTTP/1.1\r\nHost: 127.0.0.1:1/devstoreaccount1/ok 200 - 0 B\r\nConnection: close\r\n\r\n")
            answer = s.recv(4096).decode("latin-1")
        assert answer.startswith("HTTP/1.1 400"), answer
    finally:
        stop_emulator(emulator)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert lines and all(" " not in entry["url"] and "/ok" not in entry["url"] for entry in lines), lines
