"""`azseed copy` between two emulators: the target ends up holding what the source holds (its export
byte for byte), blob bytes go source-to-target without passing through azseed (counted by a proxy in
front of the source that azseed did not write and cannot lie to), the streaming fallback when the
target cannot reach the source, dry-run, --detailed-exitcode, --prune, --shard, and the emulator's
cross-account Put Blob From URL driven by the official SDK."""
import http.client
import json
import subprocess
import threading
import urllib.parse
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableServiceClient
from azure.storage.blob import BlobServiceClient, BlobSasPermissions, ContentSettings, generate_blob_sas

from conftest import ACCOUNT, KEY, origin, run, start_copy_pair, start_emulator, stop_emulator
from test_tls import make_ca_and_server_certificate

EVENTS = ["--now", "2026-11-21", "--events", "2000"]


class CountingProxy:
    """An HTTP proxy in front of the source's Blob endpoint that counts the blob bytes it
    serves: to requests signed with the account key (azseed itself) and to requests carrying a
    SAS (the target, reading the source server-side)."""

    def __init__(self, upstream):
        self.upstream = urllib.parse.urlsplit(upstream)
        self.signed_bytes = self.sas_bytes = 0
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                connection = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                connection.request(self.command, self.path, body=body, headers=headers)
                response = connection.getresponse()
                data = response.read()
                connection.close()
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                is_blob_read = self.command == "GET" and "comp" not in query and "restype" not in query and response.status in (200, 206)
                if is_blob_read:
                    with proxy.lock:
                        if "Authorization" in self.headers:
                            proxy.signed_bytes += len(data)
                        elif "sig" in query:
                            proxy.sas_bytes += len(data)
                self.send_response_only(response.status, response.reason)
                for name, value in response.getheaders():
                    if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}{self.upstream.path}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


def connection_string(blob, table):
    return f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};BlobEndpoint={blob};TableEndpoint={table}"


def export(azseed, target, folder, *tables):
    args = ["export", "--connection-string", target.connection_string, "--out", str(folder)]
    for table in tables:
        args += ["--table", table]
    done = run(azseed, *args)
    assert done.returncode == 0, done.stderr


def assert_same_export(a, b):
    """Two exports hold the same blobs and entities byte for byte; their manifests differ only
    in the endpoints they were taken from."""
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files_a == files_b
    for relative in files_a:
        if relative.name != "manifest.json":
            assert (a / relative).read_bytes() == (b / relative).read_bytes(), relative
    ma, mb = (json.loads((x / "manifest.json").read_text()) for x in (a, b))
    del ma["source"], mb["source"]
    assert ma == mb


def blob_bytes_line(output):
    line = next(l for l in output.splitlines() if l.startswith("Blob bytes: "))
    server = int(line.split("Blob bytes: ")[1].split(" ")[0])
    through = int(line.split(", ")[1].split(" ")[0])
    return server, through, line


@pytest.fixture
def pair(azseed):
    source, target = start_copy_pair(azseed)
    yield source, target
    stop_emulator(source)
    stop_emulator(target)


def test_copy_of_speakeasy_is_byte_identical_and_server_side(azseed, tmp_path, pair):
    source, _ = pair
    seeded = run(azseed, "apply", "--connection-string", source.connection_string, *EVENTS)
    assert seeded.returncode == 0, seeded.stderr
    proxy = CountingProxy(source.blob)
    # The target reads the source through the counting proxy: that is the origin it may read.
    target = start_emulator(azseed, "--in-memory", "--allow-copy-source", origin(proxy.endpoint))
    try:
        done = run(azseed, "copy", "--from", connection_string(proxy.endpoint, source.table), "--to", target.connection_string)
        assert done.returncode == 0, done.stderr
        assert "Plan: 2018 to create" in done.stdout, done.stdout  # 1 container, 8 blobs, 1 table, 2008 entities
        server, through, line = blob_bytes_line(done.stdout)
        assert through == 0 and server > 0, line
        # The proxy saw the target read every blob byte with the SAS, and azseed read none.
        assert proxy.signed_bytes == 0
        assert proxy.sas_bytes == server
    finally:
        proxy.close()
    export(azseed, source, tmp_path / "source")
    export(azseed, target, tmp_path / "target")
    assert_same_export(tmp_path / "source", tmp_path / "target")
    assert sum(p.stat().st_size for p in (tmp_path / "source" / "blobs").rglob("*") if p.is_file()) == server
    # An outside client reads the copied blob as the source holds it, with its properties.
    theirs = BlobServiceClient.from_connection_string(target.connection_string).get_container_client("speakers")
    ours = BlobServiceClient.from_connection_string(source.connection_string).get_container_client("speakers")
    name = next(iter(ours.list_blobs())).name
    assert theirs.download_blob(name).readall() == ours.download_blob(name).readall()
    assert theirs.get_blob_client(name).get_blob_properties().content_settings.content_type == "image/jpeg"
    assert theirs.get_container_access_policy()["public_access"] == ours.get_container_access_policy()["public_access"] == "container"
    # Again: nothing to do.
    again = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string)
    assert again.returncode == 0 and "No changes" in again.stdout and "already matches the source account" in again.stdout, again.stdout
    stop_emulator(target)


def test_dry_run_detailed_exitcode_and_prune(azseed, tmp_path, pair):
    source, target = pair
    assert run(azseed, "apply", "--connection-string", source.connection_string, "--now", "2026-11-21", "--events", "50").returncode == 0
    assert run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string).returncode == 0
    # Drift on both sides: a changed entity at the source, an extra entity and blob at the target.
    source_events = TableServiceClient.from_connection_string(source.connection_string).get_table_client("events")
    entity = next(iter(source_events.query_entities("PartitionKey eq 'Events'")))
    entity["EventDescription"] = "Changed at the source"
    source_events.update_entity(entity)
    target_tables = TableServiceClient.from_connection_string(target.connection_string).get_table_client("events")
    target_tables.create_entity({"PartitionKey": "Extra", "RowKey": "1", "Note": "only in the target"})
    target_blobs = BlobServiceClient.from_connection_string(target.connection_string).get_container_client("speakers")
    target_blobs.upload_blob("extra.txt", b"only in the target")

    dry = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--dry-run", "--detailed-exitcode")
    assert dry.returncode == 2, dry.stdout + dry.stderr
    assert "EventDescription: " in dry.stdout and "Changed at the source" in dry.stdout
    assert "1 blob in container speakers not in the source account, kept (--prune deletes them)" in dry.stdout
    assert "not in the source account, kept" in dry.stdout
    assert target_blobs.get_blob_client("extra.txt").exists()  # a dry run writes nothing
    assert next(iter(target_tables.query_entities("RowKey eq '" + entity["RowKey"] + "'")))["EventDescription"] != "Changed at the source"

    as_json = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--dry-run", "--output", "json")
    plan = json.loads(as_json.stdout)
    assert plan["source"] == "account" and plan["summary"]["update"] == 1, plan["summary"]

    # Without --dry-run, --detailed-exitcode tells whether the run changed the target: 2, then 0.
    pruned = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--prune", "--detailed-exitcode")
    assert pruned.returncode == 2, pruned.stderr
    assert "Apply complete: " in pruned.stdout and "error" not in pruned.stderr
    assert not target_blobs.get_blob_client("extra.txt").exists()
    assert list(target_tables.query_entities("PartitionKey eq 'Extra'")) == []
    export(azseed, source, tmp_path / "source")
    export(azseed, target, tmp_path / "target")
    assert_same_export(tmp_path / "source", tmp_path / "target")
    clean = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--prune", "--dry-run", "--detailed-exitcode")
    assert clean.returncode == 0, clean.stdout
    unchanged = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--detailed-exitcode")
    assert unchanged.returncode == 0 and "No changes" in unchanged.stdout, unchanged.stdout + unchanged.stderr


def test_a_target_that_cannot_reach_the_source_gets_the_bytes_streamed(azseed, tmp_path):
    """The source serves HTTPS from a private CA that azseed trusts (--ca-file) and the target
    emulator does not: the target answers CannotVerifyCopySource and azseed streams the blobs."""
    ca, cert, key = make_ca_and_server_certificate(tmp_path)
    source = start_emulator(azseed, "--in-memory", "--cert", str(cert), "--key", str(key))
    # Allowed to read the source, but it does not trust the source's certificate.
    target = start_emulator(azseed, "--in-memory", "--allow-copy-source", origin(source.blob).replace("http://", "https://"))
    try:
        seeded = run(azseed, "apply", "--connection-string", source.connection_string.replace("http;", "https;"), "--ca-file", str(ca),
                     "--now", "2026-11-21", "--events", "20")
        assert seeded.returncode == 0, seeded.stderr
        # A streamed blob keeps its content headers and metadata as a server-side copy does.
        https = BlobServiceClient.from_connection_string(source.connection_string.replace("http;", "https;").replace("http://", "https://"),
                                                         connection_verify=str(ca))
        https.get_blob_client("speakers", "notes.txt").upload_blob(
            b"streamed with its headers", metadata={"origin": "source"},
            content_settings=ContentSettings(content_type="text/plain", content_language="fr", cache_control="no-cache"))
        done = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--ca-file", str(ca))
        assert done.returncode == 0, done.stderr
        server, through, line = blob_bytes_line(done.stdout)
        assert server == 0 and through > 0, line
        assert "could not read the source" in line and "CannotVerifyCopySource" in line, line
        streamed = BlobServiceClient.from_connection_string(target.connection_string).get_blob_client("speakers", "notes.txt").get_blob_properties()
        assert streamed.metadata == {"origin": "source"} and streamed.content_settings.content_language == "fr"
        assert streamed.content_settings.cache_control == "no-cache" and streamed.content_settings.content_type == "text/plain"
        export(azseed, target, tmp_path / "target")
        assert sum(p.stat().st_size for p in (tmp_path / "target" / "blobs").rglob("*") if p.is_file()) == through
        again = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--ca-file", str(ca))
        assert "No changes" in again.stdout, again.stdout
    finally:
        stop_emulator(source)
        stop_emulator(target)


def test_sharded_copy_gives_what_one_copy_gives(azseed, tmp_path, pair):
    source, target = pair
    assert run(azseed, "apply", "--connection-string", source.connection_string, *EVENTS).returncode == 0
    processes = [subprocess.Popen([azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--shard", f"{i}/2"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    outputs = [p.communicate(timeout=300) for p in processes]
    assert all(p.returncode == 0 for p in processes), outputs
    assert sum(blob_bytes_line(out)[0] for out, _ in outputs) > 0
    export(azseed, source, tmp_path / "source")
    export(azseed, target, tmp_path / "target")
    assert_same_export(tmp_path / "source", tmp_path / "target")


def test_selected_containers_and_tables_and_errors(azseed, pair):
    source, target = pair
    assert run(azseed, "apply", "--connection-string", source.connection_string, "--now", "2026-11-21", "--events", "10").returncode == 0
    # A name given twice is copied once; a connection string pasted with its line ending works.
    only_blobs = run(azseed, "copy", "--from", source.connection_string + "\r\n", "--to", target.connection_string,
                     "--container", "speakers", "--container", "speakers")
    assert only_blobs.returncode == 0, only_blobs.stderr
    assert "1 container, 0 tables" in only_blobs.stderr and "Plan: 9 to create" in only_blobs.stdout, only_blobs.stdout + only_blobs.stderr
    assert list(TableServiceClient.from_connection_string(target.connection_string).list_tables()) == []
    missing = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--table", "nosuchtable")
    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines()[-1].startswith("azseed: error: table 'nosuchtable' does not exist in the source"), missing.stderr
    same = run(azseed, "copy", "--from", source.connection_string, "--to", source.connection_string)
    assert same.returncode == 64 and "same account" in same.stderr
    renamed = run(azseed, "copy", "--from", source.connection_string, "--to", source.connection_string.replace("127.0.0.1", "localhost").replace("/devstoreaccount1", "/devstoreaccount1/"))
    assert renamed.returncode == 64 and "same account" in renamed.stderr, renamed.stderr
    saved = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--out", "plan.json")
    assert saved.returncode == 64 and "not saved" in saved.stderr
    anonymous = run(azseed, "copy", "--from", f"BlobEndpoint={source.blob};TableEndpoint={source.table}", "--to", target.connection_string)
    assert anonymous.returncode == 64 and "no AccountKey or SharedAccessSignature" in anonymous.stderr
    for done in (missing, same, saved, anonymous):
        assert KEY not in done.stdout + done.stderr


def test_emulator_put_blob_from_url_across_accounts_with_the_official_sdk(pair):
    """The official SDK's upload_blob_from_url between two emulators, with a SAS it made: the
    target fetches the bytes from the other emulator; a wrong SAS is the source's 403, passed on
    as CannotVerifyCopySource."""
    source, target = pair
    ours = BlobServiceClient.from_connection_string(source.connection_string)
    ours.create_container("src")
    ours.get_blob_client("src", "a b/ü.bin").upload_blob(b"x" * 100_000, metadata={"origin": "source"})
    expiry = datetime.now(timezone.utc) + timedelta(hours=1)
    sas = generate_blob_sas(ACCOUNT, "src", "a b/ü.bin", account_key=KEY, permission=BlobSasPermissions(read=True), expiry=expiry)
    url = ours.get_blob_client("src", "a b/ü.bin").url + "?" + sas
    theirs = BlobServiceClient.from_connection_string(target.connection_string)
    theirs.create_container("dst")
    copied = theirs.get_blob_client("dst", "copy.bin")
    copied.upload_blob_from_url(url)
    assert copied.download_blob().readall() == b"x" * 100_000
    bad = url.replace("sig=", "sig=A")
    with pytest.raises(Exception) as refused:
        theirs.get_blob_client("dst", "bad.bin").upload_blob_from_url(bad)
    assert "CannotVerifyCopySource" in str(refused.value)
    assert not theirs.get_blob_client("dst", "bad.bin").exists()
    # The source condition travels to the other emulator (If-Match on its GETs): a source
    # rewritten since its ETag was read is not copied, whole or by blocks.
    etag = ours.get_blob_client("src", "a b/ü.bin").get_blob_properties().etag
    ours.get_blob_client("src", "a b/ü.bin").upload_blob(b"y" * 100_000, overwrite=True)
    with pytest.raises(HttpResponseError) as changed:
        copied.upload_blob_from_url(url, overwrite=True, source_etag=etag, source_match_condition=MatchConditions.IfNotModified)
    assert changed.value.status_code == 412 and changed.value.error_code == "SourceConditionNotMet"
    assert copied.download_blob().readall() == b"x" * 100_000
    block = target.raw("PUT", copied.url + "?comp=block&blockid=YmxvY2sx",
                       {"x-ms-copy-source": url, "x-ms-source-range": "bytes=0-99", "x-ms-source-if-match": etag})
    assert block.status_code == 412 and block.headers.get("x-ms-error-code") == "SourceConditionNotMet", block.text


def test_awkward_blobs_are_copied_exactly_and_no_signature_is_kept(azseed, tmp_path, pair):
    """Through `azseed copy` itself: a name that needs percent-encoding, an empty blob, a blob of
    several 8 MiB ranges (the emulator's fetch), one over 64 MiB (Put Block From URL in blocks), a
    blob without a Content-MD5 (a block upload that sets none). Then Copy Blob with a SAS: the
    destination's x-ms-copy-source keeps no signature."""
    from azure.storage.blob import BlobBlock
    source, target = pair
    ours = BlobServiceClient.from_connection_string(source.connection_string, max_single_put_size=128 << 20).get_container_client("awkward")
    ours.create_container()
    blobs = {"a b/ü #1.bin": b"encoded name", "empty.bin": b"", "ranges.bin": bytes(range(256)) * (36 * 1024 + 7),
             "blocks.bin": b"\x5a" * (65 << 20) + b"tail"}
    # Content headers and metadata are copied the same way whatever the path: one request, blocks.
    settings = ContentSettings(content_type="text/csv", content_encoding="x-raw", content_language="de-CH",
                               content_disposition='attachment; filename="a.csv"', cache_control="max-age=60")
    for name, data in blobs.items():
        if name in ("a b/ü #1.bin", "blocks.bin"):
            ours.upload_blob(name, data, content_settings=settings, metadata={"origin": "source", "kind": name.split(".")[0].encode("ascii", "replace").decode().replace(" ", "-")})
        else:
            ours.upload_blob(name, data)
    no_md5 = ours.get_blob_client("no-md5.bin")
    no_md5.stage_block("YmxvY2s=", b"staged without any MD5")
    no_md5.commit_block_list([BlobBlock(block_id="YmxvY2s=")])
    assert no_md5.get_blob_properties().content_settings.content_md5 is None
    blobs["no-md5.bin"] = b"staged without any MD5"

    done = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--container", "awkward")
    assert done.returncode == 0, done.stderr
    server, through, line = blob_bytes_line(done.stdout)
    assert server == sum(len(d) for d in blobs.values()) and through == 0, line
    theirs = BlobServiceClient.from_connection_string(target.connection_string).get_container_client("awkward")
    for name, data in blobs.items():
        assert theirs.download_blob(name).readall() == data, name
    for name in ("a b/ü #1.bin", "blocks.bin"):
        copied_props, source_props = theirs.get_blob_client(name).get_blob_properties(), ours.get_blob_client(name).get_blob_properties()
        assert copied_props.metadata == source_props.metadata and copied_props.metadata["origin"] == "source", name
        for field in ("content_type", "content_encoding", "content_language", "content_disposition", "cache_control", "content_md5"):
            assert getattr(copied_props.content_settings, field) == getattr(source_props.content_settings, field), (name, field)
    again = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--container", "awkward")
    # Only the blob without an MD5 cannot be compared: it is copied again, and the plan says why.
    assert "Plan: 0 to create, 1 to update" in again.stdout and "no Content-MD5 at the source" in again.stdout, again.stdout
    # Content headers and metadata changed at the source (bytes the same) are a difference too.
    small = ours.get_blob_client("a b/ü #1.bin")
    small.set_http_headers(ContentSettings(content_type="text/csv", content_encoding="x-raw", content_language="fr-FR",
                                           content_disposition='attachment; filename="a.csv"', cache_control="no-cache",
                                           content_md5=small.get_blob_properties().content_settings.content_md5))
    big = ours.get_blob_client("blocks.bin")
    big.set_blob_metadata({"origin": "elsewhere"})
    changed = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--container", "awkward")
    assert changed.returncode == 0, changed.stderr
    assert "Plan: 0 to create, 3 to update" in changed.stdout, changed.stdout
    assert "awkward/a b/ü #1.bin (content headers differ" in changed.stdout and "awkward/blocks.bin (metadata differs)" in changed.stdout, changed.stdout
    assert theirs.get_blob_client("a b/ü #1.bin").get_blob_properties().content_settings.content_language == "fr-FR"
    assert theirs.get_blob_client("blocks.bin").get_blob_properties().metadata == {"origin": "elsewhere"}

    expiry = datetime.now(timezone.utc) + timedelta(hours=1)
    copied = theirs.get_blob_client("by-copy-blob.bin")
    sas = generate_blob_sas(ACCOUNT, "awkward", "ranges.bin", account_key=KEY, permission=BlobSasPermissions(read=True), expiry=expiry)
    signature = dict(p.split("=", 1) for p in sas.split("&"))["sig"]
    copied.start_copy_from_url(ours.get_blob_client("ranges.bin").url + "?" + sas)
    properties = copied.get_blob_properties()
    assert properties.copy.status == "success" and copied.download_blob().readall() == blobs["ranges.bin"]
    assert "sig=" in properties.copy.source and signature not in properties.copy.source and urllib.parse.unquote(signature) not in properties.copy.source
    # Any URL can be a source: a token of another service's presigned URL is not kept either.
    other = theirs.get_blob_client("by-presigned-url.bin")
    other.start_copy_from_url(ours.get_blob_client("ranges.bin").url + "?" + sas + "&X-Amz-Security-Token=tok-4f1c&X-Amz-Expires=60")
    shown = other.get_blob_properties().copy.source
    assert "tok-4f1c" not in shown and "X-Amz-Expires=60" in shown, shown


def test_copy_carries_container_metadata(azseed, pair):
    # Issue 29 item 3: a container's metadata is copied, compared and restored like its blobs'.
    source, target = pair
    ours = BlobServiceClient.from_connection_string(source.connection_string)
    ours.create_container("meta", metadata={"owner": "ops"}).upload_blob("x.txt", b"x")
    done = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--container", "meta")
    assert done.returncode == 0, done.stderr
    theirs = BlobServiceClient.from_connection_string(target.connection_string).get_container_client("meta")
    assert theirs.get_container_properties().metadata == {"owner": "ops"}
    again = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--container", "meta")
    assert "No changes" in again.stdout, again.stdout
    theirs.set_container_metadata({})
    drift = run(azseed, "copy", "--from", source.connection_string, "--to", target.connection_string, "--container", "meta", "--dry-run")
    assert "~ container meta: metadata differs" in drift.stdout, drift.stdout


def test_a_copy_into_the_embedded_storage_gives_no_emulator_advice(azseed, tmp_path):
    """From a reviewer: copying into the embedded storage (started by azseed itself, which reads
    no remote source) advised starting "the target emulator with --allow-copy-source"."""
    source = start_emulator(azseed, "--in-memory")
    try:
        assert run(azseed, "apply", "--connection-string", source.connection_string, "--now", "2026-11-21").returncode == 0
        copied = run(azseed, "copy", "--from", source.connection_string, "--data-dir", str(tmp_path / "storage"))
        assert copied.returncode == 0, copied.stderr
        assert "streamed because the target does not read sources from" in copied.stdout, copied.stdout
        assert "--allow-copy-source" not in copied.stdout + copied.stderr
    finally:
        stop_emulator(source)
