"""Shared fixtures of the conformance suite: where the built azseed lives, the emulator under
test, and the record of every azseed output, scanned for secrets."""
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


# --- Secrets: every output of azseed is recorded and scanned ----------------------------

# Account keys the suite uses (the development key, and any a test makes up) and SAS
# signatures: none may appear in anything azseed prints.
SECRETS = {KEY}
SAS_SIGNATURE = re.compile(r"sig=(?!<|redacted)[A-Za-z0-9%+/=]{8,}")
# Bearer tokens and client assertions: JSON Web Tokens (three base64url parts, `eyJ…`).
JSON_WEB_TOKEN = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
OUTPUT_LOG = pathlib.Path(os.environ.get("AZSEED_OUTPUT_LOG", ROOT / ".build" / "test-output" / "azseed-outputs.log"))
_recorded = []


def register_secret(secret):
    """A key or SAS token a test passes to azseed: it must never come back out."""
    SECRETS.add(secret)
    return secret


def leaked(text):
    """The secrets found in `text` (masked), empty when it is clean."""
    found = [f"account key {s[:4]}…" for s in SECRETS if s in text or urllib.parse.quote(s, safe="") in text]
    found += [f"SAS signature {m.group(0)[:8]}…" for m in SAS_SIGNATURE.finditer(text)]
    found += [f"token {m.group(0)[:6]}…" for m in JSON_WEB_TOKEN.finditer(text)]
    return found


def record(args, stdout, stderr):
    """Keeps one invocation's output for the end-of-session scan and checks it at once."""
    stdout = stdout.decode("utf-8", "replace") if isinstance(stdout, bytes) else (stdout or "")
    stderr = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else (stderr or "")
    shown = " ".join("<connection string>" if "AccountKey=" in a or "SharedAccessSignature=" in a
                     else "<argument holding a secret>" if leaked(a) else a for a in args[1:])
    _recorded.append(f"$ azseed {shown}\n{stdout}{stderr}")
    found = leaked(stdout + stderr)
    assert not found, f"azseed {shown} printed a secret: {found}"


def run(azseed, *args, cwd=None, env=None, timeout=300, input=None):
    """Runs azseed with no connection string in the environment (unless `env` says), records
    its output and fails the test if the output holds a secret."""
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "AZURE_STORAGE_CONNECTION_STRING"}
    done = subprocess.run([azseed, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout, input=input)
    record([azseed, *args], done.stdout, done.stderr)
    return done


def pytest_sessionfinish(session, exitstatus):
    """Writes every recorded output to OUTPUT_LOG (for `make test`'s own scan) and fails the
    session if any of it holds a secret."""
    OUTPUT_LOG.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(_recorded)
    OUTPUT_LOG.write_text(text)
    found = leaked(text)
    if found:
        print(f"\nsecrets found in azseed output: {found}")
        session.exitstatus = 1


def port(endpoint):
    """The port of an emulator endpoint such as http://127.0.0.1:10000/devstoreaccount1."""
    return int(urllib.parse.urlsplit(endpoint).port)


def start_emulator(azseed, *extra, blob_port=0, table_port=0):
    process = subprocess.Popen([azseed, "emulator", "--blob-port", str(blob_port), "--table-port", str(table_port), *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    blob = table = None
    lines = []
    while blob is None or table is None:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("emulator did not start: " + process.stderr.read())
        lines.append(line)
        if m := re.match(r"\s+blob:\s+(\S+)", line):
            blob = m.group(1)
        if m := re.match(r"\s+table:\s+(\S+)", line):
            table = m.group(1)
    emulator = Emulator(process, blob, table)
    emulator.args, emulator.started = [azseed, "emulator", *extra], "".join(lines)
    return emulator


def origin(endpoint):
    """`scheme://host:port` of an endpoint, as `--allow-copy-source` takes it."""
    parts = urllib.parse.urlsplit(endpoint)
    return f"{parts.scheme}://{parts.netloc}"


def start_copy_pair(azseed, *extra):
    """A source emulator and a target that may read copy sources from it (an emulator reads no
    remote source unless its origin is allowed)."""
    source = start_emulator(azseed, "--in-memory", *extra)
    target = start_emulator(azseed, "--in-memory", "--allow-copy-source", origin(source.blob), *extra)
    return source, target


def stop_emulator(emulator):
    emulator.process.terminate()
    try:
        out, err = emulator.process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        emulator.process.kill()
        out, err = emulator.process.communicate()
    record(emulator.args, emulator.started + (out or ""), err)


@pytest.fixture(scope="session")
def emulator(azseed):
    running = start_emulator(azseed, "--in-memory")
    yield running
    stop_emulator(running)


@pytest.fixture
def name():
    """A fresh resource name: letters and digits, valid for containers and tables."""
    return "t" + uuid.uuid4().hex[:16]


def start_entra_emulator(azseed, folder, *extra):
    """An HTTPS emulator trusting a local identity provider (identity_provider.py) for bearer
    tokens: the provider, with `.ca` (the test CA's PEM) and `.emulator`. `stop_entra_emulator` ends both."""
    import identity_provider as idp
    from test_tls import make_ca_and_server_certificate
    ca, cert, key = make_ca_and_server_certificate(folder)
    provider = idp.IdentityProvider().start(cert, key)
    provider.emulator = start_emulator(azseed, "--in-memory", "--cert", str(cert), "--key", str(key), "--oauth-authority", provider.authority,
                                       "--oauth-tenant", idp.TENANT, "--ca-file", str(ca), *extra)
    provider.ca, provider.folder = str(ca), folder
    return provider


def stop_entra_emulator(provider):
    stop_emulator(provider.emulator)
    provider.stop()

