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
