"""Issue 30, item 3: `azseed emulator` as a test fixture for any language. With port 0 it says
where it serves in one JSON line (`--output json`) and, with `--ready-file`, in a file written
whole once it serves and removed when it stops; examples/python builds a pytest fixture on it."""
import json
import os
import subprocess
import time

from azure.storage.blob import BlobServiceClient

from conftest import KEY, run


def test_port_zero_endpoints_come_as_one_json_line_and_a_ready_file(azseed, tmp_path):
    ready = tmp_path / "ready.json"
    process = subprocess.Popen([azseed, "emulator", "--in-memory", "--blob-port", "0", "--table-port", "0", "--output", "json",
                                "--ready-file", str(ready)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        endpoints = json.loads(line)
        assert set(endpoints) == {"account", "blobEndpoint", "tableEndpoint", "pid", "dataDirectory"}
        assert endpoints["pid"] == process.pid and endpoints["dataDirectory"] is None
        assert json.loads(ready.read_text()) == endpoints
        assert not [p for p in os.listdir(tmp_path) if p.endswith(".partial")]
        connection = (f"DefaultEndpointsProtocol=http;AccountName={endpoints['account']};AccountKey={KEY};"
                      f"BlobEndpoint={endpoints['blobEndpoint']};TableEndpoint={endpoints['tableEndpoint']}")
        BlobServiceClient.from_connection_string(connection).create_container("fixture")
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=15)
    assert out == "", out  # nothing but the one line
    assert not ready.exists()


def test_a_ready_file_that_cannot_be_one_is_refused(azseed, tmp_path):
    done = run(azseed, "emulator", "--in-memory", "--blob-port", "0", "--table-port", "0", "--ready-file", str(tmp_path))
    assert done.returncode == 64 and "--ready-file" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    started = time.monotonic()
    done = run(azseed, "emulator", "--in-memory", "--blob-port", "0", "--table-port", "0", "--ready-file", str(tmp_path / "missing" / "ready.json"),
               timeout=30)
    assert done.returncode == 1 and "--ready-file" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert time.monotonic() - started < 20


def start(azseed, *extra, stdout=subprocess.PIPE):
    return subprocess.Popen([azseed, "emulator", "--in-memory", "--blob-port", "0", "--table-port", "0", *extra],
                            stdout=stdout, stderr=subprocess.PIPE, text=True)


def wait_for(path, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return json.loads(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def test_the_ready_file_survives_attacks_on_it(azseed, tmp_path):
    """From an attacker's review: a closed stdout crashed the emulator with a backtrace (and left
    the file); a stale file stayed until the rename; one emulator's exit removed another's file;
    SIGHUP left it; a long valid name was refused."""
    import signal
    # A closed stdout: the emulator serves on, and the file says where.
    ready = tmp_path / "closed.json"
    closed = start(azseed, "--output", "json", "--ready-file", str(ready), stdout=subprocess.DEVNULL)
    try:
        endpoints = wait_for(ready)
        BlobServiceClient.from_connection_string(
            f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={KEY};BlobEndpoint={endpoints['blobEndpoint']};"
            f"TableEndpoint={endpoints['tableEndpoint']}").create_container("alive")
    finally:
        closed.send_signal(signal.SIGHUP)  # SIGHUP stops it gracefully, file and all
        _, err = closed.communicate(timeout=15)
    assert "Fatal error" not in err and not ready.exists(), err

    # A stale file is gone before the emulator binds its ports (here it cannot: the port is taken).
    holder = start(azseed, "--output", "json")
    try:
        taken = json.loads(holder.stdout.readline())["blobEndpoint"].split(":")[2].split("/")[0]
        stale = tmp_path / "stale.json"
        stale.write_text('{"stale": 1}')
        failed = run(azseed, "emulator", "--in-memory", "--blob-port", taken, "--table-port", "0", "--ready-file", str(stale), timeout=30)
        assert failed.returncode == 1 and not stale.exists(), failed.stderr
    finally:
        holder.terminate()
        holder.communicate(timeout=15)

    # Two emulators, one path: the first to stop leaves the second's file alone.
    shared = tmp_path / ("r" * 240 + ".json")  # a long, valid name
    first = start(azseed, "--ready-file", str(shared))
    first_endpoints = wait_for(shared)
    second = start(azseed, "--ready-file", str(shared))
    try:
        # The second removes the file before it binds its ports, then writes its own: in between
        # there is none to read.
        def current():
            try:
                return json.loads(shared.read_text())
            except FileNotFoundError:
                return None
        deadline = time.monotonic() + 15
        while current() in (first_endpoints, None) and time.monotonic() < deadline:
            time.sleep(0.05)
        second_endpoints = current()
        assert second_endpoints["pid"] == second.pid
        first.terminate()
        first.communicate(timeout=15)
        assert json.loads(shared.read_text()) == second_endpoints
    finally:
        second.terminate()
        second.communicate(timeout=15)
    assert not shared.exists()
