"""Peak memory of `azseed emulator` while it takes large uploads and serves a large download.

    .venv/bin/python Benchmarks/python/emulator_memory.py BINARY [BINARY...] [--mib 200]

For each binary and scenario a fresh emulator on disk: 1, 4 and 8 concurrent Put Blob
requests of MIB MiB each (official SDK, one request per blob), then one Get Blob of a MIB MiB
blob (a single request, read as a stream). Prints the emulator's peak RSS (VmHWM) and how
much it grew over the idle server's, per scenario."""
import argparse
import concurrent.futures
import http.client
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from email.utils import formatdate

from azure.core.pipeline import PipelineContext, PipelineRequest
from azure.core.pipeline.transport import HttpRequest
from azure.storage.blob import BlobServiceClient
from azure.storage.blob._shared.authentication import SharedKeyCredentialPolicy

ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def start(binary, folder):
    process = subprocess.Popen([binary, "emulator", "--blob-port", "0", "--table-port", "0", "--data-dir", str(folder)],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    blob = table = None
    while blob is None or table is None:
        line = process.stdout.readline()
        if m := re.match(r"\s+blob:\s+(\S+)", line):
            blob = m.group(1)
        if m := re.match(r"\s+table:\s+(\S+)", line):
            table = m.group(1)
    return process, blob, f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};BlobEndpoint={blob};TableEndpoint={table}"


def kib(pid, field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def streamed_get(blob_endpoint, container, name):
    """One Get Blob, read in 1 MiB pieces, so the client holds little."""
    url = f"{blob_endpoint}/{container}/{name}"
    headers = {"x-ms-version": "2026-10-06", "x-ms-date": formatdate(usegmt=True)}
    request = HttpRequest("GET", url, headers=headers)
    SharedKeyCredentialPolicy(ACCOUNT, KEY).on_request(PipelineRequest(request, PipelineContext(None)))
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)
    connection.request("GET", parts.path, headers=dict(request.headers))
    response = connection.getresponse()
    assert response.status == 200, response.status
    total = 0
    while piece := response.read(1 << 20):
        total += len(piece)
    connection.close()
    return total


def scenario(binary, label, mib, uploads, download):
    folder = pathlib.Path(tempfile.mkdtemp(prefix="azseed-memory-"))
    process, blob_endpoint, connection_string = start(binary, folder / "data")
    try:
        service = BlobServiceClient.from_connection_string(connection_string, max_single_put_size=512 << 20)
        container = service.create_container("big")
        body = os.urandom(1 << 20) * mib
        if download:
            container.upload_blob("one", body)
            time.sleep(0.5)
        idle = kib(process.pid, "VmRSS")
        os.kill(process.pid, 0)
        # The peak is read after the work; reset it first (Linux: write 5 to clear_refs).
        with open(f"/proc/{process.pid}/clear_refs", "w") as refs:
            refs.write("5")
        started = time.time()
        if download:
            assert streamed_get(blob_endpoint, "big", "one") == len(body)
        else:
            with concurrent.futures.ThreadPoolExecutor(uploads) as pool:
                list(pool.map(lambda i: container.upload_blob(f"b{i}", body), range(uploads)))
        seconds = time.time() - started
        peak = kib(process.pid, "VmHWM")
        print(f"{binary:<40} {label:<34} "
              f"idle {idle / 1024:7.1f} MB   peak {peak / 1024:7.1f} MB   growth {(peak - idle) / 1024:7.1f} MB   {seconds:6.2f} s")
        sys.stdout.flush()
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binaries", nargs="+")
    parser.add_argument("--mib", type=int, default=200)
    args = parser.parse_args()
    for binary in args.binaries:
        for n in (1, 4, 8):
            scenario(binary, f"{n} concurrent Put Blob of {args.mib} MiB", args.mib, n, False)
        scenario(binary, f"1 Get Blob of {args.mib} MiB", args.mib, 0, True)


if __name__ == "__main__":
    main()
