"""What clients this project did not write send (issue 14). Go clients such as rclone write a
space in a query value as `+` and sign the decoded value; Azure reads `+` as a space."""
import os
from email.utils import formatdate

from azure.core.pipeline import PipelineContext, PipelineRequest
from azure.core.pipeline.transport import HttpRequest
from azure.data.tables import TableServiceClient
from datetime import timedelta

from azure.storage.blob import BlobSasPermissions, BlobServiceClient, generate_blob_sas
from azure.storage.blob._shared.authentication import SharedKeyCredentialPolicy as BlobPolicy

from conftest import ACCOUNT, KEY, register_secret, send


def go_style(method, signed_url, sent_url):
    """Signs `signed_url` (spaces as %20, what a Go client signs after decoding) and sends the
    same headers to `sent_url` (spaces as `+`, what it puts on the wire)."""
    headers = {"x-ms-version": "2026-10-06", "x-ms-date": formatdate(usegmt=True)}
    request = HttpRequest(method, signed_url, headers=headers)
    BlobPolicy(ACCOUNT, KEY).on_request(PipelineRequest(request, PipelineContext(None)))
    return send(method, sent_url, dict(request.headers))


def test_plus_in_a_query_value_is_a_space(emulator, name):
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name, public_access="container")
    for i in range(9):
        container.upload_blob(f"with space/{i}.txt", b"x")
    container.upload_blob("with+plus/0.txt", b"x")
    base = f"{emulator.blob}/{name}?restype=container&comp=list"
    signed = go_style("GET", base + "&prefix=with%20space%2F", base + "&prefix=with+space%2F")
    assert signed.status_code == 200, signed.text
    assert signed.text.count("<Name>with space/") == 9
    anonymous = send("GET", base + "&prefix=with+space%2F", {"x-ms-version": "2026-10-06"})
    assert anonymous.status_code == 200 and anonymous.text.count("<Name>with space/") == 9
    # A literal plus is %2B, as every client writes it.
    plus = send("GET", base + "&prefix=with%2Bplus%2F", {"x-ms-version": "2026-10-06"})
    assert plus.text.count("<Name>with+plus/") == 1
    # A page marker holding a space, written with '+', pages on.
    first = send("GET", base + "&prefix=with+space%2F&maxresults=4", {"x-ms-version": "2026-10-06"})
    marker = first.text.split("<NextMarker>")[1].split("</NextMarker>")[0]
    assert " " in marker
    second = send("GET", base + "&prefix=with+space%2F&maxresults=4&marker=" + marker.replace(" ", "+").replace("/", "%2F"),
                  {"x-ms-version": "2026-10-06"})
    assert second.status_code == 200 and second.text.count("<Name>with space/") == 4
    assert second.text.split("<Name>")[1].startswith("with space/4.txt")


def test_plus_in_a_table_filter_is_a_space(emulator, name):
    table = TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
    table.create_entity({"PartitionKey": "a b", "RowKey": "1"})
    table.create_entity({"PartitionKey": "a+b", "RowKey": "2"})
    r = emulator.raw("GET", f"{emulator.table}/{name}()?$filter=PartitionKey+eq+'a+b'", service="table",
                     headers={"Accept": "application/json;odata=nometadata"})
    assert r.status_code == 200, r.text
    assert '"RowKey":"1"' in r.text and '"RowKey":"2"' not in r.text


# --- Blob copy (issue 14, items 2 and 3) -------------------------------------------------

import pytest
from azure.core.exceptions import HttpResponseError
from azure.storage.blob import BlobBlock, ContentSettings


@pytest.fixture
def copy_setup(emulator, name):
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    container = service.create_container(name)
    source = container.upload_blob("source.txt", b"0123456789" * 100 + b"end",
                                   content_settings=ContentSettings(content_type="text/plain"), metadata={"origin": "src"})
    destination = container.upload_blob("destination.txt", b"d" * 1003)  # what a silent empty upload destroyed
    return container, source, destination


def test_copy_blob_copies_bytes_properties_and_metadata(copy_setup):
    container, source, destination = copy_setup
    result = destination.start_copy_from_url(source.url)
    assert result["copy_status"] == "success" and result["copy_id"]
    assert destination.download_blob().readall() == b"0123456789" * 100 + b"end"
    props = destination.get_blob_properties()
    assert props.copy.status == "success" and props.copy.id == result["copy_id"] and props.copy.source == source.url
    assert props.copy.progress == "1003/1003"
    assert props.content_settings.content_type == "text/plain" and props.metadata == {"origin": "src"}
    # Metadata given with the copy replaces the source's.
    other = container.get_blob_client("other.txt")
    other.start_copy_from_url(source.url, metadata={"mine": "yes"})
    assert other.get_blob_properties().metadata == {"mine": "yes"}
    # A finished copy cannot be aborted, as Azure answers it.
    with pytest.raises(HttpResponseError) as refused:
        destination.abort_copy(result["copy_id"])
    assert refused.value.error_code == "NoPendingCopyOperation"
    # A later Put Blob drops the copy properties.
    destination.upload_blob(b"new", overwrite=True)
    assert destination.get_blob_properties().copy.id is None


def readable(source):
    """The source's URL with a read SAS: Put Blob/Block From URL read a private source only so."""
    sas = generate_blob_sas(ACCOUNT, source.container_name, source.blob_name, account_key=KEY, permission=BlobSasPermissions(read=True),
                            expiry=datetime.now(timezone.utc) + timedelta(hours=1))
    return f"{source.url}?{register_secret(sas)}"


def test_put_blob_and_put_block_from_url(copy_setup):
    container, source, destination = copy_setup
    destination.upload_blob_from_url(readable(source), overwrite=True)
    assert destination.download_blob().readall() == b"0123456789" * 100 + b"end"
    staged = container.get_blob_client("staged.txt")
    staged.stage_block_from_url("YmxvY2sx", readable(source), source_offset=0, source_length=10)
    staged.stage_block_from_url("YmxvY2sy", readable(source), source_offset=1000, source_length=3)
    staged.commit_block_list([BlobBlock("YmxvY2sx"), BlobBlock("YmxvY2sy")])
    assert staged.download_blob().readall() == b"0123456789end"


def test_a_copy_from_elsewhere_or_with_unimplemented_headers_changes_nothing(copy_setup, emulator):
    container, source, destination = copy_setup
    with pytest.raises(HttpResponseError) as missing:
        destination.start_copy_from_url(source.url.replace("source.txt", "nope.txt"))
    assert missing.value.error_code == "CannotVerifyCopySource"
    url = f"{emulator.blob}/{container.container_name}/destination.txt"
    # x-ms-source-if-tags: the source has no tag a (Azure answers ConditionNotMet, as the SDK expects).
    r = emulator.raw("PUT", url, {"x-ms-copy-source": source.url, "x-ms-source-if-tags": "\"a\" = 'b'"})
    assert r.status_code == 412 and r.headers.get("x-ms-error-code") == "ConditionNotMet", r.text
    # ... but it reads the source's tags: a SAS holder (here with write on the destination and
    # read on the source, no t) must not learn them from whether the copy happens.
    write = generate_blob_sas(ACCOUNT, container.container_name, "destination.txt", account_key=KEY,
                              permission=BlobSasPermissions(write=True, create=True), expiry=datetime.now(timezone.utc) + timedelta(hours=1))
    r = emulator.raw("PUT", f"{url}?{register_secret(write)}", {"x-ms-copy-source": readable(source), "x-ms-source-if-tags": "\"a\" = 'b'"},
                     sign=False)
    assert r.status_code == 403 and r.headers.get("x-ms-error-code") == "AuthorizationPermissionMismatch", r.text
    # Nor by copying them (the attacker's finding: tag option COPY handed a SAS holder without t
    # the source's whole tag set).
    r = emulator.raw("PUT", f"{url}?{register_secret(write)}", {"x-ms-copy-source": readable(source), "x-ms-requires-sync": "true",
                                                               "x-ms-copy-source-tag-option": "COPY"}, sign=False)
    assert r.status_code == 403 and r.headers.get("x-ms-error-code") == "AuthorizationPermissionMismatch", r.text
    # Source conditions are implemented: one not met is 412 SourceConditionNotMet, nothing copied.
    r = emulator.raw("PUT", url, {"x-ms-copy-source": source.url, "x-ms-source-if-none-match": source.get_blob_properties().etag})
    assert r.status_code == 412 and r.headers.get("x-ms-error-code") == "SourceConditionNotMet", r.text
    assert destination.download_blob().readall() == b"d" * 1003


def test_a_copy_reads_its_source_only_on_the_source_etag_asked_for(copy_setup, emulator):
    """x-ms-source-if-match (what azseed copy sends so every block is of the version it listed):
    the official SDK's source_etag on Put Blob From URL and Copy Blob, and Put Block From URL."""
    container, source, destination = copy_setup
    etag = source.get_blob_properties().etag
    # Copy Blob checks the condition itself (412 SourceConditionNotMet); an operation that reads
    # its source by URL reports the source's answer, as Azure does (the SDK's own tests expect
    # CannotVerifyCopySource there), with the source's status in x-ms-copy-source-status-code.
    for call, code in ((lambda **kw: destination.upload_blob_from_url(readable(source), overwrite=True, **kw), "CannotVerifyCopySource"),
                       (lambda **kw: destination.start_copy_from_url(source.url, **kw), "SourceConditionNotMet")):
        with pytest.raises(HttpResponseError) as changed:
            call(source_etag='"0x8DEADBEEF"', source_match_condition=MatchConditions.IfNotModified)
        assert changed.value.status_code == 412 and changed.value.error_code == code
        assert destination.download_blob().readall() == b"d" * 1003
    destination.upload_blob_from_url(readable(source), overwrite=True, source_etag=etag, source_match_condition=MatchConditions.IfNotModified)
    assert destination.download_blob().readall() == b"0123456789" * 100 + b"end"
    url = f"{emulator.blob}/{container.container_name}/staged.txt?comp=block&blockid=YmxvY2sx"
    stale = emulator.raw("PUT", url, {"x-ms-copy-source": readable(source), "x-ms-source-range": "bytes=0-9", "x-ms-source-if-match": '"0x8DEADBEEF"'})
    assert stale.status_code == 412 and stale.headers.get("x-ms-error-code") == "CannotVerifyCopySource", stale.text
    assert stale.headers.get("x-ms-copy-source-status-code") == "412"
    fresh = emulator.raw("PUT", url, {"x-ms-copy-source": readable(source), "x-ms-source-range": "bytes=0-9", "x-ms-source-if-match": etag})
    assert fresh.status_code == 201, fresh.text


# --- What Azure refuses is refused (issue 14, items 5, 7, 8) -----------------------------

from datetime import datetime, timezone

from azure.core import MatchConditions
from azure.data.tables import UpdateMode


def test_metadata_names_and_blob_names_azure_refuses_are_refused(emulator, name):
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    url = f"{emulator.blob}/{name}/b.txt"
    for bad in ("x-ms-meta-1abc", "x-ms-meta-a!b", "x-ms-meta-"):
        r = emulator.raw("PUT", url, {"x-ms-blob-type": "BlockBlob", bad: "v"}, b"body")
        assert r.status_code == 400 and r.headers.get("x-ms-error-code") == "InvalidMetadata", (bad, r.status_code, r.text)
    # A name XML cannot carry is Azure's to store (the SDK's own test_list_encoded_blobs): the
    # listing writes it percent-encoded in <Name Encoded="true">, which the SDK decodes.
    r = emulator.raw("PUT", f"{emulator.blob}/{name}/odd%EF%BF%BEname", {"x-ms-blob-type": "BlockBlob"}, b"body")
    assert r.status_code == 201, r.text
    listing = emulator.raw("GET", f"{emulator.blob}/{name}?restype=container&comp=list")
    assert '<Name Encoded="true">odd%EF%BF%BEname</Name>' in listing.text, listing.text
    container.upload_blob("ok.txt", b"x", metadata={"good_name1": "v"})
    assert [b.name for b in container.list_blobs(include=["metadata"])] == ["odd\ufffename", "ok.txt"]


def test_merge_and_dates_cannot_pass_azure_limits(emulator, name):
    table = TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
    table.create_entity({"PartitionKey": "p", "RowKey": "r", **{f"A{i}": i for i in range(200)}})
    with pytest.raises(HttpResponseError) as refused:
        table.update_entity({"PartitionKey": "p", "RowKey": "r", **{f"B{i}": i for i in range(60)}}, mode=UpdateMode.MERGE)
    assert refused.value.error_code == "TooManyProperties"
    assert len(table.get_entity("p", "r")) == 202  # 200 properties and the two keys
    with pytest.raises(HttpResponseError) as early:
        table.create_entity({"PartitionKey": "p", "RowKey": "old", "When": datetime(1600, 12, 31, tzinfo=timezone.utc)})
    assert early.value.status_code == 400
    assert [e["RowKey"] for e in table.list_entities()] == ["r"]


def test_a_304_carries_its_code_and_a_sas_is_not_taken_for_anonymous(emulator, name):
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    blob = container.upload_blob("b.txt", b"x")
    etag = blob.get_blob_properties().etag
    r = emulator.raw("GET", f"{emulator.blob}/{name}/b.txt", {"If-None-Match": etag})
    assert r.status_code == 304 and r.headers.get("x-ms-error-code") == "ConditionNotMet"
    r = send("GET", f"{emulator.blob}/{name}/b.txt?sv=2022-11-02&sp=r&sr=b&se=2030-01-01T00%3A00%3A00Z&sig=c2lnbmF0dXJl", {"x-ms-version": "2026-10-06"})
    assert r.status_code == 403 and r.headers.get("x-ms-error-code") == "AuthenticationFailed" and "Signature did not match" in r.text


# --- $batch framing (issue 14, item 6) ---------------------------------------------------

import json


def batch_body(table_url, changesets):
    """A $batch body with one changeset per list of (RowKey, properties)."""
    lines = []
    for n, entities in enumerate(changesets):
        cs = f"changeset_{n}"
        lines += ["--batch_b", f"Content-Type: multipart/mixed; boundary={cs}", ""]
        for rk, props in entities:
            body = json.dumps({"PartitionKey": "p", "RowKey": rk, **props})
            lines += [f"--{cs}", "Content-Type: application/http", "Content-Transfer-Encoding: binary", "",
                      f"POST {table_url} HTTP/1.1", "Content-Type: application/json", "Accept: application/json;odata=nometadata",
                      "Prefer: return-no-content", "", body]
        lines += [f"--{cs}--"]
    lines += ["--batch_b--", ""]
    return "\r\n".join(lines).encode()


def post_batch(emulator, body):
    return emulator.raw("POST", f"{emulator.table}/$batch", service="table", body=body,
                        headers={"Content-Type": "multipart/mixed; boundary=batch_b", "Accept": "application/json",
                                 "x-ms-version": "2019-02-02", "DataServiceVersion": "3.0"})


def test_batch_framing_two_changesets_and_boundaries_in_values(emulator, name):
    table = TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
    url = f"{emulator.table}/{name}"
    two = post_batch(emulator, batch_body(url, [[("a", {})], [("b", {})]]))
    assert two.status_code == 400, (two.status_code, two.text[:300])
    assert list(table.list_entities()) == []
    # A value holding the boundary string (not at a line start) ends nothing.
    tricky = "text\r\n--changeset_0 inside a value"
    one = post_batch(emulator, batch_body(url, [[("c", {"V": tricky}), ("d", {"V": "--changeset_0"})]]))
    assert one.status_code == 202, one.text[:300]
    assert {e["RowKey"]: e["V"] for e in table.list_entities()} == {"c": tricky, "d": "--changeset_0"}


def test_table_access_policies_are_stored_and_served(emulator, name):
    """Issue 14 item 4: GET ?comp=acl once returned the table's entities and PUT was a 405."""
    from azure.data.tables import TableAccessPolicy
    table = TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    assert table.get_table_access_policy() == {}
    start, expiry = datetime(2026, 1, 1, tzinfo=timezone.utc), datetime(2027, 1, 1, tzinfo=timezone.utc)
    table.set_table_access_policy({"readers": TableAccessPolicy(permission="r", start=start, expiry=expiry)})
    policies = table.get_table_access_policy()
    assert list(policies) == ["readers"] and policies["readers"].permission == "r"
    r = emulator.raw("GET", f"{emulator.table}/{name}?comp=stats", service="table")
    assert r.status_code == 400


# --- The SDKs' less common paths (issue 14) ----------------------------------------------

def test_sdk_less_common_paths(emulator, name):
    blobs = BlobServiceClient.from_connection_string(emulator.connection_string, max_single_put_size=1024,
                                                     max_block_size=4096, max_single_get_size=8192, max_chunk_get_size=4096)
    container = blobs.create_container(name)
    body = os.urandom(100_000)
    container.upload_blob("dir/forced-blocks.bin", body, max_concurrency=4)  # over max_single_put_size: blocks
    assert len(container.get_blob_client("dir/forced-blocks.bin").get_block_list()[0]) == 25
    assert container.download_blob("dir/forced-blocks.bin", max_concurrency=4).readall() == body  # parallel ranges
    for n in ("dir/sub/a.txt", "dir/sub/b.txt", "top.txt"):
        container.upload_blob(n, b"x")
    walked = [item.name for item in container.walk_blobs(delimiter="/")]
    assert sorted(walked) == ["dir/", "top.txt"]
    inner = [item.name for item in container.walk_blobs(name_starts_with="dir/", delimiter="/")]
    assert sorted(inner) == ["dir/forced-blocks.bin", "dir/sub/"]
    tables = TableServiceClient.from_connection_string(emulator.connection_string)
    table = tables.create_table(name)
    when = datetime(2026, 11, 21, 9, 30, 15, 123456, tzinfo=timezone.utc)
    for i in range(105):
        table.create_entity({"PartitionKey": "p", "RowKey": f"{i:03d}", "When": when, "N": i})
    pages = table.list_entities(results_per_page=7).by_page()
    sizes = [len(list(page)) for page in pages]
    assert sum(sizes) == 105 and max(sizes) == 7
    table.upsert_entity({"PartitionKey": "p", "RowKey": "000", "Extra": "merged"}, mode=UpdateMode.MERGE)
    got = table.get_entity("p", "000")
    assert got["Extra"] == "merged" and got["N"] == 0 and got["When"] == when


def test_account_information_and_service_stats(emulator):
    blobs = BlobServiceClient.from_connection_string(emulator.connection_string)
    info = blobs.get_account_information()
    assert info["sku_name"] == "Standard_LRS" and info["account_kind"] == "StorageV2"
    # The SDKs ask the secondary host for stats, which a path-style endpoint has no name
    # for; the request itself, on the primary, is what Azure answers there.
    for service, base in (("blob", emulator.blob), ("table", emulator.table)):
        r = emulator.raw("GET", f"{base}/?restype=service&comp=stats", service=service)
        assert r.status_code == 200 and "<Status>live</Status>" in r.text, (service, r.text)


def test_set_blob_tier(emulator, name):
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    blob = container.upload_blob("b.txt", b"x")
    assert blob.get_blob_properties().blob_tier == "Hot"
    blob.set_standard_blob_tier("Cool")
    props = blob.get_blob_properties()
    assert props.blob_tier == "Cool" and props.blob_tier_inferred is False
    assert next(iter(container.list_blobs())).blob_tier == "Cool"
    # Archive is implemented (test_page_append_blobs.py has the rest): the bytes become unreadable.
    blob.set_standard_blob_tier("Archive")
    assert blob.get_blob_properties().blob_tier == "Archive"
    with pytest.raises(HttpResponseError) as archived:
        blob.download_blob()
    assert archived.value.error_code == "BlobArchived"


def test_service_properties_and_cors(emulator, name):
    from azure.data.tables import TableCorsRule
    from azure.storage.blob import CorsRule
    blobs = BlobServiceClient.from_connection_string(emulator.connection_string)
    assert blobs.get_service_properties()["cors"] == []
    blobs.set_service_properties(cors=[CorsRule(["http://app.example"], ["GET", "HEAD"], allowed_headers=["x-ms-meta-*", "x-ms-version"],
                                                exposed_headers=["x-ms-request-id"], max_age_in_seconds=600)])
    rules = blobs.get_service_properties()["cors"]
    assert len(rules) == 1 and rules[0].allowed_origins == "http://app.example" and rules[0].max_age_in_seconds == 600
    assert blobs.get_service_properties()["analytics_logging"].version == "1.0"  # kept: the Set named only Cors
    container = blobs.create_container(name, public_access="container")
    container.upload_blob("photo.jpg", b"jpeg")
    url = f"{emulator.blob}/{name}/photo.jpg"
    ok = send("OPTIONS", url, {"Origin": "http://app.example", "Access-Control-Request-Method": "GET",
                               "Access-Control-Request-Headers": "x-ms-version,x-ms-meta-a"})
    assert ok.status_code == 200 and ok.headers["Access-Control-Allow-Origin"] == "http://app.example"
    assert ok.headers["Access-Control-Max-Age"] == "600"
    for origin, method, headers in (("http://evil.example", "GET", ""), ("http://app.example", "DELETE", ""),
                                    ("http://app.example", "GET", "x-custom")):
        refused = send("OPTIONS", url, {"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers})
        assert refused.status_code == 403 and refused.headers.get("x-ms-error-code") == "CorsPreflightFailure", (origin, method, headers)
    assert send("OPTIONS", url, {"Origin": "http://app.example"}).status_code == 400
    actual = send("GET", url, {"Origin": "http://app.example", "x-ms-version": "2026-10-06"})
    assert actual.status_code == 200 and actual.headers["Access-Control-Allow-Origin"] == "http://app.example"
    assert actual.headers["Access-Control-Expose-Headers"] == "x-ms-request-id" and actual.headers["Vary"] == "Origin"
    assert "Access-Control-Allow-Origin" not in send("GET", url, {"Origin": "http://evil.example"}).headers
    tables = TableServiceClient.from_connection_string(emulator.connection_string)
    tables.set_service_properties(cors=[TableCorsRule(["*"], ["GET"])])
    assert tables.get_service_properties()["cors"][0].allowed_origins == ["*"]
    # Azure allows five rules.
    with pytest.raises(HttpResponseError):
        blobs.set_service_properties(cors=[CorsRule(["http://a.example"], ["GET"])] * 6)
    blobs.set_service_properties(cors=[])


def test_blob_batch_delete_and_set_tier(emulator, name):
    blobs = BlobServiceClient.from_connection_string(emulator.connection_string)
    container = blobs.create_container(name)
    for n in ("a b.txt", "two.txt", "three.txt", "keep.txt"):
        container.upload_blob(n, b"x")
    results = list(container.set_standard_blob_tier_blobs("Cool", "two.txt", "three.txt"))
    assert [r.status_code for r in results] == [200, 200]
    assert container.get_blob_client("two.txt").get_blob_properties().blob_tier == "Cool"
    results = list(container.delete_blobs("a b.txt", "two.txt", "missing.txt", raise_on_any_failure=False))
    assert [r.status_code for r in results] == [202, 202, 404]
    assert sorted(b.name for b in container.list_blobs()) == ["keep.txt", "three.txt"]
    # The account-level batch, from the service client.
    assert [r.status_code for r in blobs.get_container_client(name).delete_blobs("three.txt")] == [202]


def test_unimplemented_meaning_changing_headers_and_settings_are_refused(emulator, name):
    from azure.storage.blob import RetentionPolicy
    blobs = BlobServiceClient.from_connection_string(emulator.connection_string)
    container = blobs.create_container(name)
    blob = container.upload_blob("b.txt", b"original")
    for header, value in (("x-ms-access-tier", "P10"), ("x-ms-immutability-policy-mode", "Unlocked")):
        r = emulator.raw("PUT", f"{emulator.blob}/{name}/b.txt", {"x-ms-blob-type": "BlockBlob", header: value}, b"changed")
        assert r.status_code == 400 and r.headers.get("x-ms-error-code") == "UnsupportedHeader", (header, r.text)
        assert header.split(":")[0] in r.text
    # Encryption scopes are the account's: this emulator was given none, so any is unknown.
    r = emulator.raw("PUT", f"{emulator.blob}/{name}/b.txt", {"x-ms-blob-type": "BlockBlob", "x-ms-encryption-scope": "scope1"}, b"changed")
    assert r.status_code == 409 and r.headers.get("x-ms-error-code") == "EncryptionScopeNotFound", r.text
    # Time conditions are implemented on writes: one not met is Azure's 412, nothing written.
    r = emulator.raw("PUT", f"{emulator.blob}/{name}/b.txt",
                     {"x-ms-blob-type": "BlockBlob", "If-Unmodified-Since": "Mon, 01 Jan 2001 00:00:00 GMT"}, b"changed")
    assert r.status_code == 412 and r.headers.get("x-ms-error-code") == "ConditionNotMet", r.text
    # Blob leases are implemented: a lease id on a blob without a lease is Azure's 412.
    r = emulator.raw("PUT", f"{emulator.blob}/{name}/b.txt", {"x-ms-blob-type": "BlockBlob", "x-ms-lease-id": "00000000-0000-0000-0000-000000000000"}, b"changed")
    assert r.status_code == 412 and r.headers.get("x-ms-error-code") == "LeaseNotPresentWithBlobOperation", r.text
    assert blob.download_blob().readall() == b"original"
    # Analytics logging is implemented (test_storage_analytics.py); a retention Azure refuses
    # (0 days) is refused, the setting unchanged.
    from azure.storage.blob import BlobAnalyticsLogging
    with pytest.raises(HttpResponseError):
        blobs.set_service_properties(analytics_logging=BlobAnalyticsLogging(read=True, retention_policy=RetentionPolicy(enabled=True, days=0)))
    assert blobs.get_service_properties()["analytics_logging"].read is False


def test_review_findings_on_batches_copies_and_conditions(emulator, name):
    """A browser's If-Modified-Since revalidation is honoured (304), not refused; a batch
    cannot delete a container; a copy keeps the source's block list; a snapshot source that
    does not exist is a missing source; a table ACL must be XML."""
    blobs = BlobServiceClient.from_connection_string(emulator.connection_string)
    container = blobs.create_container(name, public_access="container")
    blob = container.upload_blob("photo.jpg", b"jpeg")
    modified = blob.get_blob_properties().last_modified
    from email.utils import format_datetime
    later = format_datetime(modified.replace(year=modified.year + 1), usegmt=True)
    earlier = format_datetime(modified.replace(year=modified.year - 1), usegmt=True)
    url = f"{emulator.blob}/{name}/photo.jpg"
    assert send("GET", url, {"If-Modified-Since": later}).status_code == 304
    assert send("GET", url, {"If-Modified-Since": earlier}).status_code == 200
    assert send("GET", url, {"If-Unmodified-Since": earlier}).status_code == 412
    # A batch subrequest deleting the container is refused; the container stays.
    body = ("--b\r\nContent-Type: application/http\r\nContent-ID: 0\r\n\r\n"
            f"DELETE /devstoreaccount1/{name}?restype=container HTTP/1.1\r\nContent-Length: 0\r\n\r\n\r\n--b--\r\n").encode()
    r = emulator.raw("POST", f"{emulator.blob}/?comp=batch", {"Content-Type": "multipart/mixed; boundary=b"}, body)
    assert r.status_code == 400, r.text
    assert blobs.get_container_client(name).exists()
    # Copy keeps the committed blocks.
    built = container.get_blob_client("built.bin")
    built.stage_block("YQ==", b"first")
    built.stage_block("Yg==", b"second")
    built.commit_block_list([BlobBlock("YQ=="), BlobBlock("Yg==")])
    copy = container.get_blob_client("copy.bin")
    copy.start_copy_from_url(built.url)
    assert [b.id for b in copy.get_block_list()[0]] == ["YQ==", "Yg=="]
    with pytest.raises(HttpResponseError) as snap:
        copy.start_copy_from_url(built.url + "?snapshot=2026-01-01T00:00:00.0000000Z")
    # Snapshots are implemented: a snapshot that does not exist is a missing source, nothing copied.
    assert snap.value.status_code == 404 and snap.value.error_code == "CannotVerifyCopySource"
    assert [b.id for b in copy.get_block_list()[0]] == ["YQ==", "Yg=="]
    table = TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
    r = emulator.raw("PUT", f"{emulator.table}/{name}?comp=acl", {"Content-Type": "application/xml"}, b"SignedIdentifiers", service="table")
    assert r.status_code == 400
    assert table.get_table_access_policy() == {}
