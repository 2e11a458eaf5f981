"""The emulator's Blob service, driven through azure-storage-blob and judged by Azure's
documented results (docs/PROTOCOL.md), error codes included."""
import base64
import os
import time
import hashlib

import pytest
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.storage.blob import BlobBlock, BlobServiceClient, ContainerClient, ContentSettings

from azure.core.pipeline import PipelineContext, PipelineRequest
from azure.core.pipeline.transport import HttpRequest
from azure.storage.blob._shared.authentication import SharedKeyCredentialPolicy as BlobPolicy
from email.utils import formatdate
import hmac

from conftest import ACCOUNT, KEY, send


@pytest.fixture
def service(emulator):
    return BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0)


def test_container_lifecycle_and_errors(service, name):
    container = service.create_container(name, metadata={"owner": "azseed"})
    with pytest.raises(ResourceExistsError) as e:
        service.create_container(name)
    assert e.value.error_code == "ContainerAlreadyExists"
    props = container.get_container_properties()
    assert props.metadata == {"owner": "azseed"} and props.public_access is None
    assert name in [c.name for c in service.list_containers(name_starts_with=name)]
    container.delete_container()
    with pytest.raises(ResourceNotFoundError) as e:
        container.get_container_properties()
    assert e.value.error_code == "ContainerNotFound"
    with pytest.raises(ResourceNotFoundError) as e:
        container.delete_container()
    assert e.value.error_code == "ContainerNotFound"


def test_invalid_container_name_is_400(service):
    with pytest.raises(HttpResponseError) as e:
        service.create_container("Bad--Name")
    assert e.value.status_code == 400 and e.value.error_code == "InvalidResourceName"


def test_public_access_and_acl(service, name):
    container = service.create_container(name, public_access="blob")
    assert container.get_container_access_policy()["public_access"] == "blob"
    container.set_container_access_policy(signed_identifiers={}, public_access="container")
    assert container.get_container_properties().public_access == "container"
    container.set_container_access_policy(signed_identifiers={})
    assert container.get_container_access_policy()["public_access"] is None


def test_put_get_head_with_properties_and_md5(service, name):
    container = service.create_container(name)
    data = b"\xff\xd8" + bytes(range(256)) * 40
    container.upload_blob("photos/BTubalinal.jpg", data, metadata={"speaker": "Bret"},
                                 content_settings=ContentSettings(content_type="image/jpeg", cache_control="max-age=60"))
    client = container.get_blob_client("photos/BTubalinal.jpg")
    props = client.get_blob_properties()
    assert props.size == len(data) and props.blob_type == "BlockBlob"
    assert props.content_settings.content_type == "image/jpeg"
    assert props.content_settings.cache_control == "max-age=60"
    assert props.content_settings.content_md5 == hashlib.md5(data).digest()
    assert props.metadata == {"speaker": "Bret"}
    assert client.download_blob().readall() == data


def test_overwrite_false_is_409_blob_already_exists(service, name):
    container = service.create_container(name)
    container.upload_blob("b", b"one")
    with pytest.raises(ResourceExistsError) as e:
        container.upload_blob("b", b"two", overwrite=False)
    assert e.value.error_code == "BlobAlreadyExists"
    assert container.download_blob("b").readall() == b"one"


def test_ranges_and_empty_blob(service, name):
    container = service.create_container(name)
    container.upload_blob("b", b"0123456789")
    assert container.download_blob("b", offset=2, length=3).readall() == b"234"
    assert container.download_blob("b", offset=7).readall() == b"789"
    container.upload_blob("empty", b"")
    # The SDK asks for a range first; the emulator answers 416 and the SDK retries without one.
    assert container.download_blob("empty").readall() == b""


def test_range_status_codes(emulator, service, name):
    container = service.create_container(name)
    container.upload_blob("b", b"0123456789")
    url = f"{emulator.blob}/{name}/b"
    r = emulator.raw("GET", url, {"x-ms-range": "bytes=3-5"})
    assert r.status_code == 206 and r.content == b"345" and r.headers["Content-Range"] == "bytes 3-5/10"
    r = emulator.raw("GET", url, {"x-ms-range": "bytes=10-"})
    assert r.status_code == 416 and r.headers["x-ms-error-code"] == "InvalidRange"
    container.upload_blob("empty", b"")
    r = emulator.raw("GET", f"{emulator.blob}/{name}/empty", {"x-ms-range": "bytes=0-"})
    assert r.status_code == 416


def test_blocks_and_block_list(service, name):
    container = service.create_container(name)
    client = container.get_blob_client("big.bin")
    ids = [base64.b64encode(b"block-%03d" % i).decode() for i in range(3)]
    parts = [b"a" * 1000, b"b" * 10, b"c" * 7]
    for block_id, part in zip(ids, parts):
        client.stage_block(block_id, part)
    committed, uncommitted = client.get_block_list("all")
    assert committed == [] and sorted(b.id for b in uncommitted) == sorted(ids)
    client.commit_block_list([BlobBlock(block_id=i) for i in ids], content_settings=ContentSettings(content_type="application/x-test"))
    assert client.download_blob().readall() == b"".join(parts)
    committed, uncommitted = client.get_block_list("all")
    assert [b.id for b in committed] == ids and [b.size for b in committed] == [1000, 10, 7] and uncommitted == []
    # Re-commit a subset from the committed list.
    client.commit_block_list([BlobBlock(block_id=ids[2]), BlobBlock(block_id=ids[0])])
    assert client.download_blob().readall() == parts[2] + parts[0]
    with pytest.raises(HttpResponseError) as e:
        client.commit_block_list([BlobBlock(block_id=base64.b64encode(b"missing!!").decode())])
    assert e.value.error_code == "InvalidBlockList"


def test_chunked_upload_through_the_sdk(emulator, name):
    service = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0,
                                                       max_single_put_size=4096, max_block_size=1024,
                                                       max_single_get_size=1500, max_chunk_get_size=1500)
    container = service.create_container(name)
    data = bytes(i % 251 for i in range(10_000))
    container.upload_blob("chunked", data)
    assert container.download_blob("chunked").readall() == data
    assert container.get_blob_client("chunked").get_blob_properties().content_settings.content_md5 is None  # Put Block List computes none


def test_listing_prefix_paging_metadata_and_delimiter(service, name):
    container = service.create_container(name)
    names = ["a/1", "a/2", "a/b/3", "b", "c d", "ü"]
    for n in names:
        container.upload_blob(n, n.encode(), metadata={"n": "x"})
    assert [b.name for b in container.list_blobs()] == sorted(names, key=lambda s: s.encode())
    assert [b.name for b in container.list_blobs(name_starts_with="a/")] == ["a/1", "a/2", "a/b/3"]
    pages = list(container.list_blobs(results_per_page=2).by_page())
    assert [len(list(p)) for p in pages] == [2, 2, 2]
    listed = list(container.list_blobs(include=["metadata"]))
    assert all(b.metadata == {"n": "x"} for b in listed)
    assert all(b.content_settings.content_md5 for b in listed)
    top = [b.name for b in container.walk_blobs(delimiter="/")]
    assert top == ["a/", "b", "c d", "ü"]


def test_delete_blob(service, name):
    container = service.create_container(name)
    container.upload_blob("b", b"x")
    container.delete_blob("b")
    with pytest.raises(ResourceNotFoundError) as e:
        container.download_blob("b").readall()
    assert e.value.error_code == "BlobNotFound"
    with pytest.raises(ResourceNotFoundError) as e:
        container.get_blob_client("b").get_blob_properties()
    assert e.value.error_code == "BlobNotFound"  # a HEAD: the code travels in x-ms-error-code only


def test_anonymous_reads_follow_the_access_level(emulator, service, name):
    for level in ["container", "blob", None]:
        cname = f"{name}{level or 'private'}"
        container = service.create_container(cname, public_access=level)
        container.upload_blob("photo.jpg", b"jpeg", content_settings=ContentSettings(content_type="image/jpeg"))
        anonymous = ContainerClient(emulator.blob, cname, retry_total=0)
        if level is None:
            with pytest.raises(ResourceNotFoundError) as e:
                anonymous.download_blob("photo.jpg").readall()
            assert e.value.error_code == "ResourceNotFound"
        else:
            blob = anonymous.download_blob("photo.jpg")
            assert blob.readall() == b"jpeg" and blob.properties.content_settings.content_type == "image/jpeg"
        if level == "container":
            assert [b.name for b in anonymous.list_blobs()] == ["photo.jpg"]
        else:
            with pytest.raises(ResourceNotFoundError):
                list(anonymous.list_blobs())
        # Anonymous callers never write, whatever the level.
        with pytest.raises(ResourceNotFoundError):
            anonymous.upload_blob("new", b"x")
        with pytest.raises(ResourceNotFoundError):
            anonymous.delete_blob("photo.jpg")
    assert service.get_container_client(f"{name}container").download_blob("photo.jpg").readall() == b"jpeg"


def test_wrong_key_is_403_authentication_failed(emulator):
    wrong = base64.b64encode(b"not the key" * 4).decode()
    service = BlobServiceClient(emulator.blob, credential={"account_name": ACCOUNT, "account_key": wrong}, retry_total=0)
    with pytest.raises(ClientAuthenticationError) as e:
        list(service.list_containers())
    assert e.value.status_code == 403 and e.value.error_code == "AuthenticationFailed"


def test_signed_request_with_tampered_resource_fails(emulator, service, name):
    service.create_container(name)
    request = HttpRequest("GET", f"{emulator.blob}/{name}?restype=container",
                          headers={"x-ms-date": formatdate(usegmt=True), "x-ms-version": "2026-10-06"})
    BlobPolicy(ACCOUNT, KEY).on_request(PipelineRequest(request, PipelineContext(None)))
    headers = dict(request.headers)
    assert send("GET", f"{emulator.blob}/{name}?restype=container", headers).status_code == 200
    tampered = send("GET", f"{emulator.blob}/{name}x?restype=container", headers)
    assert tampered.status_code == 403 and tampered.headers["x-ms-error-code"] == "AuthenticationFailed"
    # Shared Key Lite, signed by hand from the layout in docs/PROTOCOL.md, is accepted too.
    lite = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": "2026-10-06"}
    string = f"GET\n\n\n\nx-ms-date:{lite['x-ms-date']}\nx-ms-version:2026-10-06\n/{ACCOUNT}/{ACCOUNT}/{name}"
    lite["Authorization"] = f"SharedKeyLite {ACCOUNT}:" + base64.b64encode(hmac.new(base64.b64decode(KEY), string.encode(), hashlib.sha256).digest()).decode()
    assert send("GET", f"{emulator.blob}/{name}?restype=container", lite).status_code == 200


def test_a_version_that_is_no_service_version_is_refused(emulator, name):
    """Any real service version is served (the answer echoes it); one that cannot be — a date to
    come, not a date — is Azure's 400 naming the header, which the SDK turns into "The provided
    service version is not enabled on this storage account", and nothing is created."""
    r = emulator.raw("PUT", f"{emulator.blob}/{name}?restype=container", {"x-ms-version": "2021-08-06"})
    assert r.status_code == 201 and r.headers["x-ms-version"] == "2021-08-06"
    for bad in ("2099-01-01", "latest", "2021-13-01", "2008-01-01"):
        r = emulator.raw("PUT", f"{emulator.blob}/{name}x?restype=container", {"x-ms-version": bad})
        assert r.status_code == 400 and r.headers.get("x-ms-error-code") == "InvalidHeaderValue", (bad, r.text)
        assert "<HeaderName>x-ms-version</HeaderName>" in r.text
    r = emulator.raw("GET", f"{emulator.blob}/{name}x?restype=container")
    assert r.status_code == 404


def test_content_md5_mismatch_is_400(emulator, service, name):
    service.create_container(name)
    r = emulator.raw("PUT", f"{emulator.blob}/{name}/b", {"x-ms-blob-type": "BlockBlob", "Content-MD5": base64.b64encode(b"0" * 16).decode()}, b"hello")
    assert r.status_code == 400 and r.headers["x-ms-error-code"] == "Md5Mismatch"
    assert b"<Code>Md5Mismatch</Code>" in r.content


def test_malformed_requests_are_400_and_the_server_lives_on(emulator, service, name):
    service.create_container(name)
    for path, headers in [(f"/{ACCOUNT}/{name}/b?comp=block&blockid=%%%", {}),
                          (f"/{ACCOUNT}/{name}/b?comp=blocklist", {"Content-Type": "application/xml"}),
                          (f"/otheraccount/{name}", {})]:
        r = emulator.raw("PUT", emulator.blob.rsplit("/", 1)[0] + path, headers, b"<not xml")
        assert 400 <= r.status_code < 500 and r.headers.get("x-ms-error-code"), (path, r.status_code, r.text)
    assert service.get_container_client(name).exists()
    assert emulator.alive()


def test_blob_names_cannot_escape_the_data_directory(emulator, service, name):
    container = service.create_container(name)
    for path in ["../../../../tmp/azseed-escape", "..%2F..%2F..%2F..%2Ftmp%2Fazseed-escape", "%2e%2e/%2e%2e/tmp/azseed-escape"]:
        r = emulator.raw("PUT", f"{emulator.blob}/{name}/{path}", {"x-ms-blob-type": "BlockBlob"}, b"inside")
        assert r.status_code in (201, 400), (path, r.status_code, r.text)
    import os
    assert not os.path.exists("/tmp/azseed-escape")
    # What was stored is just a name in the container, readable back through it.
    names = [b.name for b in container.list_blobs()]
    assert "../../../../tmp/azseed-escape" in names
    from urllib.parse import quote
    for blob in names:
        r = emulator.raw("GET", f"{emulator.blob}/{name}/" + quote(blob, safe=""))
        assert r.status_code == 200 and r.content == b"inside"


def test_set_properties_and_metadata(service, name):
    container = service.create_container(name)
    container.set_container_metadata({"purpose": "fixtures"})
    assert container.get_container_properties().metadata == {"purpose": "fixtures"}
    blob = container.upload_blob("b.txt", b"text", metadata={"a": "1"})
    etag = blob.get_blob_properties().etag
    blob.set_http_headers(ContentSettings(content_type="text/plain", cache_control="no-cache"))
    props = blob.get_blob_properties()
    assert props.content_settings.content_type == "text/plain" and props.content_settings.cache_control == "no-cache"
    assert props.etag != etag and props.metadata == {"a": "1"}
    blob.set_blob_metadata({"b": "2"})
    assert blob.get_blob_properties().metadata == {"b": "2"}
    assert blob.download_blob().readall() == b"text"


def test_large_bodies_stream_through_the_emulator_not_into_its_memory(azseed, tmp_path):
    """Issue 13, item 10: a 50 MiB Put Blob once raised the emulator's RSS by ~103 MB (the
    body held twice) and a Get read the whole blob into memory. Bodies now stream to and
    from disk: the peak grows by a small fraction of the body, however large it is."""
    from conftest import start_emulator, stop_emulator
    emulator = start_emulator(azseed, "--data-dir", str(tmp_path / "data"))
    try:
        pid = emulator.process.pid

        def kib(field):
            return next(int(line.split()[1]) for line in open(f"/proc/{pid}/status") if line.startswith(field + ":"))

        body = os.urandom(1 << 20) * 64
        container = BlobServiceClient.from_connection_string(emulator.connection_string, max_single_put_size=128 << 20).create_container("big")
        container.upload_blob("warm-up", b"x")
        idle = kib("VmRSS")
        with open(f"/proc/{pid}/clear_refs", "w") as refs:
            refs.write("5")  # resets VmHWM to the current RSS
        container.upload_blob("one", body)
        r = emulator.raw("GET", f"{emulator.blob}/big/one")
        assert r.status_code == 200 and r.content == body
        growth = kib("VmHWM") - idle
        assert growth < 16 * 1024, f"the emulator grew by {growth // 1024} MB for a 64 MiB upload and download"
    finally:
        stop_emulator(emulator)


def test_refused_uploads_leave_no_bytes_behind(azseed, tmp_path):
    """An upload refused for a bad Content-MD5 — streamed or not — or for want of a signature
    leaves no file in the data folder; an anonymous one is refused before its body is read."""
    from conftest import start_emulator, stop_emulator
    emulator = start_emulator(azseed, "--data-dir", str(tmp_path / "data"))
    try:
        BlobServiceClient.from_connection_string(emulator.connection_string).create_container("ccc", public_access="container")
        files = lambda: sorted(p.name for p in (tmp_path / "data" / "blobs").rglob("*") if p.is_file())
        before = files()
        body = os.urandom(1 << 20)
        wrong = base64.b64encode(hashlib.md5(b"something else").digest()).decode()
        for query in ("", "?restype=x"):  # streamed to disk, and read whole
            r = emulator.raw("PUT", f"{emulator.blob}/ccc/b{query}", {"x-ms-blob-type": "BlockBlob", "Content-MD5": wrong}, body)
            assert r.status_code == 400 and "Md5Mismatch" in r.text, r.text
        r = emulator.raw("PUT", f"{emulator.blob}/ccc/anon", {"x-ms-blob-type": "BlockBlob"}, body, sign=False)
        assert r.status_code == 404
        assert files() == before
    finally:
        stop_emulator(emulator)


def test_a_listing_runs_from_start_from_to_before_end_before(emulator, name):
    """`startFrom` / `endBefore` (the SDK's start_from, end_before) were ignored: every name came back."""
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    for blob in ("a", "bar", "foo", "foo/bar", "foo/foo", "zed"):
        container.upload_blob(blob, b"x")
    # (The SDK sends endBefore only with response_format="arrow", which needs nanoarrow; raw here.)
    r = emulator.raw("GET", f"{container.url}?restype=container&comp=list&startFrom=foo&endBefore=foo/foo")
    assert r.text.count("<Name>") == 2 and "<Name>foo</Name>" in r.text and "<Name>foo/bar</Name>" in r.text, r.text
    assert [b.name for b in container.list_blobs(start_from="b")] == ["bar", "foo", "foo/bar", "foo/foo", "zed"]
    r = emulator.raw("GET", f"{container.url}?restype=container&comp=list&endBefore=foo&maxresults=1")
    assert "<Name>a</Name>" in r.text and "<NextMarker>bar</NextMarker>" in r.text, r.text
    r = emulator.raw("GET", f"{container.url}?restype=container&comp=list&endBefore=foo&marker=bar")
    assert "<Name>bar</Name>" in r.text and "<Name>foo</Name>" not in r.text and "<NextMarker />" in r.text, r.text


def test_a_block_list_refers_to_its_blocks_instead_of_copying_them(azseed, tmp_path):
    """Issue 34: Put Block List wrote every block again into one new file (1 GiB written twice).
    The committed blob now refers to the staged blocks' files: the data folder holds the bytes
    once, they read back whole after a restart, and deleting the blob frees them."""
    from conftest import start_emulator, stop_emulator
    data = tmp_path / "data"

    def stored_bytes():  # each file once, however many names (links) it has
        seen = {}
        for p in (data / "blobs").rglob("*"):
            if p.is_file():
                st = p.stat()
                seen[(st.st_dev, st.st_ino)] = st.st_size
        return sum(seen.values())

    emulator = start_emulator(azseed, "--data-dir", str(data))
    try:
        client = BlobServiceClient.from_connection_string(emulator.connection_string).create_container("composed").get_blob_client("b")
        blocks = [os.urandom(1 << 20) for _ in range(4)]
        ids = [base64.b64encode(b"%04d" % i).decode() for i in range(4)]
        for block_id, block in zip(ids, blocks):
            client.stage_block(block_id, block)
        client.commit_block_list([BlobBlock(block_id=i) for i in ids])
        assert client.download_blob().readall() == b"".join(blocks)
        assert 4 << 20 <= stored_bytes() < (4 << 20) + 4096, stored_bytes()
        # Committed blocks reused in another order: still no copy, and the first list's
        # unused block goes with it.
        client.commit_block_list([BlobBlock(block_id=ids[3]), BlobBlock(block_id=ids[0])])
        assert client.download_blob().readall() == blocks[3] + blocks[0]
    finally:
        stop_emulator(emulator)
    emulator = start_emulator(azseed, "--data-dir", str(data))
    try:
        client = BlobServiceClient.from_connection_string(emulator.connection_string).get_blob_client("composed", "b")
        assert client.download_blob().readall() == blocks[3] + blocks[0]
        assert 2 << 20 <= stored_bytes() < (2 << 20) + 4096  # and a manifest
        client.delete_blob()
        for _ in range(50):  # files go once the delete has committed
            if stored_bytes() == 0:
                break
            time.sleep(0.1)
        assert stored_bytes() == 0
    finally:
        stop_emulator(emulator)


def test_a_composed_blob_costs_a_reader_a_few_descriptors_and_outlives_a_delete(azseed, tmp_path):
    """From an attacker's review: reading a blob committed from 256 blocks opened 256 files for
    every read, even of one byte, for as long as the response lasted — eight parallel range
    reads under a 1,024-descriptor limit failed, and clients that never read their response
    stopped the whole emulator. A reader now opens a few pieces at a time; the blob is pinned
    while it is read, so a delete or overwrite meanwhile still waits for the reader."""
    from conftest import start_emulator, stop_emulator
    import http.client
    import urllib.parse
    emulator = start_emulator(azseed, "--data-dir", str(tmp_path / "data"))
    try:
        container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container("wide", public_access="blob")
        client = container.get_blob_client("b")
        blocks = [os.urandom(4096) for _ in range(256)]
        ids = [base64.b64encode(b"%05d" % i).decode() for i in range(256)]
        for block_id, block in zip(ids, blocks):
            client.stage_block(block_id, block)
        client.commit_block_list([BlobBlock(block_id=i) for i in ids])
        whole = b"".join(blocks)
        pid = emulator.process.pid
        descriptors = lambda: len(os.listdir(f"/proc/{pid}/fd"))
        before = descriptors()
        # Ten anonymous readers that take the headers and stop reading.
        parts = urllib.parse.urlsplit(f"{emulator.blob}/wide/b")
        held = []
        for _ in range(10):
            connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
            connection.request("GET", parts.path)
            response = connection.getresponse()
            assert response.status == 200
            assert response.read(4096) == blocks[0]
            held.append((connection, response))
        assert descriptors() - before < 10 * 8, f"{descriptors() - before} descriptors for 10 readers"
        # Deleted while they read: each still reads the whole blob.
        client.delete_blob()
        for connection, response in held:
            assert blocks[0] + response.read() == whole
            connection.close()
    finally:
        stop_emulator(emulator)
