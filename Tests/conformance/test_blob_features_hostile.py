"""Issue 32, as an attacker tried the new blob features: ranges that overflowed, copies and
appends past the emulator's bounds, page blobs of many extents (descriptors, diff time),
concurrent appends, diffs across a shrink, and index tags read without the tag permission.
Each test failed before its fix."""
import os
import resource
import subprocess
import threading
import time
from datetime import datetime, timedelta, timezone

import pytest
from azure.core.exceptions import HttpResponseError
from azure.storage.blob import (BlobClient, BlobSasPermissions, BlobServiceClient, ContainerClient, ContainerSasPermissions,
                                generate_blob_sas, generate_container_sas)

from conftest import ACCOUNT, KEY, start_emulator, stop_emulator

EXPIRY = datetime.now(timezone.utc) + timedelta(hours=2)


def test_ranges_at_the_end_of_int64_are_refused_not_fatal(emulator, name):
    """`x-ms-range: bytes=0-9223372036854775807` made the emulator add 1 and die (a read SAS was enough)."""
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    page = container.get_blob_client("p")
    page.create_page_blob(1024)
    url = f"{emulator.blob}/{name}/p"
    huge = "bytes=0-9223372036854775807"
    assert emulator.raw("GET", url + "?comp=pagelist", {"x-ms-range": huge}).status_code in (400, 416)
    assert emulator.raw("PUT", url + "?comp=page", {"x-ms-range": huge, "x-ms-page-write": "clear"}).status_code in (400, 416)
    r = emulator.raw("PUT", url + "?comp=page", {"x-ms-range": huge, "x-ms-page-write": "update", "x-ms-copy-source": page.url,
                                                 "x-ms-source-range": huge})
    assert r.status_code in (400, 416)
    assert emulator.alive() and page.get_page_ranges() == ([], [])


def test_a_copy_of_a_local_source_stores_no_more_than_the_bound(azseed, tmp_path):
    """A 1 TiB page blob (one bodiless request) copied with Put Blob From URL wrote zeros to disk
    without end: a local source is bounded like a remote one (--max-blob-mib), before any byte."""
    data = tmp_path / "storage"
    emulator = start_emulator(azseed, "--data-dir", str(data), "--max-blob-mib", "1")
    try:
        container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container("cnt")
        source = container.get_blob_client("huge")
        source.create_page_blob(1 << 40)
        sas = generate_blob_sas(ACCOUNT, "cnt", "huge", account_key=KEY, permission=BlobSasPermissions(read=True), expiry=EXPIRY)
        started = time.time()
        with pytest.raises(HttpResponseError) as refused:
            container.get_blob_client("copy").upload_blob_from_url(f"{source.url}?{sas}")
        assert refused.value.status_code == 413 and time.time() - started < 5
        with pytest.raises(HttpResponseError):
            container.get_blob_client("a").create_append_blob()
            container.get_blob_client("a").append_block_from_url(f"{source.url}?{sas}", source_offset=0, source_length=4 << 20)
        assert sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(data / "blobs") for f in fs) < 1 << 20
    finally:
        stop_emulator(emulator)


def test_an_append_blob_stays_within_the_largest_committed_blob(azseed):
    """Appends compose the blob of its blocks (issue 46) as a block list does, so an append blob is
    bounded by --max-committed-blob-mib, not by the largest single upload (--max-blob-mib)."""
    emulator = start_emulator(azseed, "--in-memory", "--max-committed-blob-mib", "1")
    try:
        blob = BlobServiceClient.from_connection_string(emulator.connection_string).create_container("cnt").get_blob_client("a")
        blob.create_append_blob()
        blob.append_block(b"x" * (600 << 10))
        with pytest.raises(HttpResponseError) as refused:
            blob.append_block(b"y" * (600 << 10))
        assert refused.value.status_code == 413
        assert blob.get_blob_properties().size == 600 << 10
    finally:
        stop_emulator(emulator)


def test_concurrent_appends_all_succeed(emulator, name):
    """16 writers at once: some appends failed with 500 (the bytes they read were freed) or 503."""
    blob = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name).get_blob_client("log")
    blob.create_append_blob()
    failures = []

    def write(k):
        for i in range(12):
            try:
                blob.append_block(b"%02d%02d;" % (k, i))
            except Exception as error:  # noqa: BLE001 - any failure is the finding
                failures.append(error)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    pieces = blob.download_blob().readall().split(b";")[:-1]
    assert sorted(pieces) == sorted(b"%02d%02d" % (k, i) for k in range(16) for i in range(12))


def test_a_page_blob_of_many_extents_reads_with_few_descriptors(azseed, tmp_path):
    """A read opened one file per extent: with 1,100 extents and a limit of 256 descriptors a
    Get Blob failed with 500."""
    data = tmp_path / "storage"

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    process = subprocess.Popen([azseed, "emulator", "--data-dir", str(data), "--blob-port", "0", "--table-port", "0",
                                "--output", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=limit)
    try:
        import json
        started = json.loads(process.stdout.readline())
        connection = (f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
                      f"BlobEndpoint={started['blobEndpoint']};")
        blob = BlobServiceClient.from_connection_string(connection).create_container("cnt").get_blob_client("p")
        blob.create_page_blob(1100 * 1024)
        for i in range(1100):
            blob.upload_page(bytes([i % 251 + 1]) * 512, offset=i * 1024, length=512)
        content = blob.download_blob().readall()
        assert all(content[i * 1024] == i % 251 + 1 and content[i * 1024 + 512] == 0 for i in range(1100))
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_diff_after_a_shrink_reports_what_was_lost(emulator, name):
    blob = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name).get_blob_client("p")
    blob.create_page_blob(4096)
    blob.upload_page(b"B" * 512, offset=2048, length=512)
    snapshot = blob.create_snapshot()["snapshot"]
    blob.resize_blob(1024)
    blob.resize_blob(4096)
    assert blob.download_blob(offset=2048, length=512).readall() == bytes(512)
    ranges, cleared = blob.get_page_ranges(previous_snapshot_diff=snapshot)
    assert ranges == [] and [(c["start"], c["end"]) for c in cleared] == [(2048, 2559)]


def test_find_blobs_by_tags_answers_the_matching_tags_values_to_a_sas_with_only_f(emulator, name):
    """What docs/SECURITY.md now says: `f` alone is no `t`, yet Find Blobs by Tags answers each
    blob found with the tags its expression matched, values included — as Azure answers — so a
    SAS with `f` reads the values of the tags it names. (The sentence "tags are read only with
    `t`, whichever way" was wrong, not the emulator.)"""
    from azure.storage.blob import AccountSasPermissions, ResourceTypes, generate_account_sas
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    service.create_container(name).upload_blob("b", b"1", tags={"secret": "s3cr3t"})
    finding = generate_account_sas(
        ACCOUNT, KEY, ResourceTypes(service=True, container=True, object=True), AccountSasPermissions(filter_by_tags=True), EXPIRY)
    found = list(BlobServiceClient(emulator.blob, credential=finding).find_blobs_by_tags(f"@container='{name}' AND secret = 's3cr3t'"))
    assert [(b.name, b.tags) for b in found] == [("b", {"secret": "s3cr3t"})]
    # Without `t` the other doors stay shut to it.
    blob = BlobClient(emulator.blob, name, "b", credential=finding)
    with pytest.raises(HttpResponseError) as refused:
        blob.get_blob_tags()
    assert refused.value.status_code == 403


def test_tags_are_not_read_without_the_tag_permission(emulator, name):
    """Anonymous List Blobs `include=tags` on a public container, a `rl` SAS doing the same, and
    `x-ms-if-tags` as a yes/no oracle all read tags that Get Blob Tags refuses without `t`."""
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    container = service.create_container(name, public_access="container")
    container.upload_blob("b", b"1", tags={"secret": "s3cr3t"})
    anonymous = ContainerClient(emulator.blob, name)
    for attempt in (lambda: list(anonymous.list_blobs(include=["tags"])),
                    lambda: anonymous.get_blob_client("b").download_blob(if_tags_match_condition="secret = 's3cr3t'")):
        with pytest.raises(HttpResponseError) as refused:
            attempt()
        assert refused.value.status_code == 403
    assert anonymous.get_blob_client("b").get_blob_properties().tag_count is None
    assert [b.tag_count for b in anonymous.list_blobs()] == [None]
    sas = generate_container_sas(ACCOUNT, name, account_key=KEY, permission=ContainerSasPermissions(read=True, list=True), expiry=EXPIRY)
    scoped = ContainerClient(emulator.blob, name, credential=sas)
    with pytest.raises(HttpResponseError) as refused:
        list(scoped.list_blobs(include=["tags"]))
    assert refused.value.status_code == 403
    with pytest.raises(HttpResponseError):
        BlobClient.from_blob_url(f"{emulator.blob}/{name}/b?{sas}").download_blob(if_tags_match_condition="secret = 's3cr3t'")
    # With the account key, and with `t`, they are read.
    assert [b.tags for b in container.list_blobs(include=["tags"])] == [{"secret": "s3cr3t"}]


def test_max_committed_blob_mib_refuses_a_long_block_list_before_writing(azseed, tmp_path):
    """The README's `--max-committed-blob-mib` (issue 45, item 4): a short block list naming one
    staged 1 MiB block nine times, past a bound of 8 MiB, is 413 RequestBodyTooLarge and leaves no
    blob and no bytes on disk; eight times is committed. `--max-blob-mib 1` alone never bounded it."""
    from azure.storage.blob import BlobBlock
    data = tmp_path / "data"
    emulator = start_emulator(azseed, "--data-dir", str(data), "--max-blob-mib", "1", "--max-committed-blob-mib", "8")
    try:
        container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container("bound")
        blob = container.get_blob_client("big")
        blob.stage_block("YmxvY2s=", b"\x07" * (1 << 20))
        used = sum(f.stat().st_size for f in data.rglob("*") if f.is_file())
        with pytest.raises(HttpResponseError) as refused:
            blob.commit_block_list([BlobBlock(block_id="YmxvY2s=")] * 9)
        assert refused.value.status_code == 413 and refused.value.error_code == "RequestBodyTooLarge"
        assert "--max-committed-blob-mib" in str(refused.value)
        assert not blob.exists()
        assert sum(f.stat().st_size for f in data.rglob("*") if f.is_file()) < used + (1 << 20)
        blob.commit_block_list([BlobBlock(block_id="YmxvY2s=")] * 8)
        assert blob.get_blob_properties().size == 8 << 20
    finally:
        stop_emulator(emulator)
