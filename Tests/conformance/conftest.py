"""Shared fixtures of the conformance suite: where the built azseed lives."""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def azseed() -> str:
    path = os.environ.get("AZSEED_BIN", str(ROOT / ".build" / "debug" / "azseed"))
    if not os.path.exists(path):
        pytest.fail(f"{path} not built; run `swift build` first (make test does)")
    return path


# --- The emulator under test -------------------------------------------------------------

import re
import subprocess
import uuid

import http.client
from email.utils import formatdate
import urllib.parse
from azure.core.credentials import AzureNamedKeyCredential
from azure.core.pipeline import PipelineContext, PipelineRequest
from azure.core.pipeline.transport import HttpRequest
from azure.data.tables._authentication import SharedKeyCredentialPolicy as TablePolicy
from azure.storage.blob._shared.authentication import SharedKeyCredentialPolicy as BlobPolicy

ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


class Emulator:
    """A running `azseed emulator` and how to reach it."""

    def __init__(self, process, blob, table):
        self.process, self.blob, self.table = process, blob, table
        self.connection_string = (f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
                                  f"BlobEndpoint={blob};TableEndpoint={table}")

    def alive(self):
        return self.process.poll() is None

    def raw(self, method, url, headers=None, body=b"", service="blob", sign=True, timeout=10):
        """Sends one request as written, signed with the official SDK's own policy."""
        headers = dict(headers or {})
        headers.setdefault("x-ms-version", "2026-10-06" if service == "blob" else "2019-02-02")
        headers.setdefault("x-ms-date", formatdate(usegmt=True))
        if service == "table":
            headers.setdefault("Date", headers["x-ms-date"])  # the tables SDK sends both
        if body and "Content-Length" not in headers:
            headers["Content-Length"] = str(len(body))
        if sign:
            request = HttpRequest(method, url, headers=headers)
            policy = BlobPolicy(ACCOUNT, KEY) if service == "blob" else TablePolicy(AzureNamedKeyCredential(ACCOUNT, KEY))
            policy.on_request(PipelineRequest(request, PipelineContext(None)))
            headers = dict(request.headers)
        return send(method, url, headers, body, timeout)


class Response:
    def __init__(self, status_code, headers, content):
        self.status_code, self.headers, self.content = status_code, headers, content
        self.text = content.decode("utf-8", "replace")


def send(method, url, headers, body=b"", timeout=10):
    """One HTTP request exactly as given: the path is sent as is, dot segments included."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        target = parts.path + ("?" + parts.query if parts.query else "")
        connection.request(method, target, body=body or None, headers=headers)
        response = connection.getresponse()
        return Response(response.status, {k: v for k, v in response.getheaders()}, response.read())
    finally:
        connection.close()


def start_emulator(azseed, *extra):
    process = subprocess.Popen([azseed, "emulator", "--blob-port", "0", "--table-port", "0", *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    blob = table = None
    while blob is None or table is None:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("emulator did not start: " + process.stderr.read())
        if m := re.match(r"\s+blob:\s+(\S+)", line):
            blob = m.group(1)
        if m := re.match(r"\s+table:\s+(\S+)", line):
            table = m.group(1)
    return Emulator(process, blob, table)


def stop_emulator(emulator):
    emulator.process.terminate()
    try:
        emulator.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        emulator.process.kill()


@pytest.fixture(scope="session")
def emulator(azseed):
    running = start_emulator(azseed, "--in-memory")
    yield running
    stop_emulator(running)


@pytest.fixture
def name():
    """A fresh resource name: letters and digits, valid for containers and tables."""
    return "t" + uuid.uuid4().hex[:16]
