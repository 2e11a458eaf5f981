"""Issue 32: page blobs, append blobs and time conditions on every write, checked with the
official Python SDK (a client this project did not write), on disk where it matters: sparse
storage, `kill -9`, and conditions that leave the data unchanged when not met."""
import os
import signal
import threading
from datetime import datetime, timedelta, timezone

import pytest
from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError, ResourceModifiedError
from azure.storage.blob import BlobServiceClient, PremiumPageBlobTier, StandardBlobTier

from conftest import start_emulator, stop_emulator


def folder_bytes(path):
    """What the files under `path` take on disk (allocated blocks, so sparse files count as such)."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            total += os.stat(os.path.join(root, f)).st_blocks * 512
    return total


def test_a_page_blob_takes_the_space_of_what_was_written(azseed, tmp_path):
    """A 1 TiB page blob with two pages written takes kilobytes, reads zeros between them, and
    its ranges are the two pages."""
    data = tmp_path / "storage"
    emulator = start_emulator(azseed, "--data-dir", str(data))
    try:
        container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container("disks")
        blob = container.get_blob_client("disk.vhd")
        blob.create_page_blob(1 << 40)
        first, last = os.urandom(512), os.urandom(1024)
        blob.upload_page(first, offset=0, length=512)
        blob.upload_page(last, offset=(1 << 40) - 1024, length=1024)
        ranges, cleared = blob.get_page_ranges()
        assert [(r["start"], r["end"]) for r in ranges] == [(0, 511), ((1 << 40) - 1024, (1 << 40) - 1)] and cleared == []
        assert blob.download_blob(offset=0, length=2048).readall() == first + bytes(1536)
        assert blob.download_blob(offset=(1 << 40) - 2048, length=2048).readall() == bytes(1024) + last
        assert blob.get_blob_properties().size == 1 << 40
        assert folder_bytes(data) < 16 << 20, folder_bytes(data)
        # Clearing a page makes it read as zeros and leaves the ranges.
        blob.clear_page(offset=0, length=512)
        assert blob.download_blob(offset=0, length=512).readall() == bytes(512)
        assert [(r["start"], r["end"]) for r in blob.get_page_ranges()[0]] == [((1 << 40) - 1024, (1 << 40) - 1)]
    finally:
        stop_emulator(emulator)


def test_overlapping_page_writes_read_back_as_a_dense_copy_would(emulator, name):
    """Writes, clears and a resize over each other: the blob is byte for byte what the same
    operations on a plain bytearray give."""
    blob = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name).get_blob_client("p")
    size = 16 * 512
    blob.create_page_blob(size)
    model = bytearray(size)
    rng = __import__("random").Random(7)
    for _ in range(60):
        start = rng.randrange(0, 16) * 512
        length = rng.randrange(1, 16 - start // 512 + 1) * 512
        if rng.random() < 0.7:
            chunk = os.urandom(length)
            blob.upload_page(chunk, offset=start, length=length)
            model[start:start + length] = chunk
        else:
            blob.clear_page(offset=start, length=length)
            model[start:start + length] = bytes(length)
    assert blob.download_blob().readall() == bytes(model)
    blob.resize_blob(8 * 512)
    blob.resize_blob(12 * 512)
    model = model[:8 * 512] + bytes(4 * 512)
    assert blob.download_blob().readall() == bytes(model)


def test_page_and_append_conditions_refuse_and_write_nothing(emulator, name):
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    page = container.get_blob_client("p")
    page.create_page_blob(1024, sequence_number=5)
    with pytest.raises(HttpResponseError) as refused:
        page.upload_page(b"x" * 512, offset=0, length=512, if_sequence_number_lt=5)
    assert refused.value.status_code == 412 and refused.value.error_code == "SequenceNumberConditionNotMet"
    with pytest.raises(HttpResponseError) as beyond:
        page.upload_page(b"x" * 512, offset=1024, length=512)
    assert beyond.value.status_code == 416
    assert page.get_page_ranges() == ([], [])

    append = container.get_blob_client("a")
    append.create_append_blob()
    assert append.append_block(b"abc")["blob_append_offset"] == "0"
    with pytest.raises(HttpResponseError) as position:
        append.append_block(b"def", appendpos_condition=0)
    assert position.value.status_code == 412 and position.value.error_code == "AppendPositionConditionNotMet"
    with pytest.raises(HttpResponseError) as size:
        append.append_block(b"def", maxsize_condition=5)
    assert size.value.status_code == 412 and size.value.error_code == "MaxBlobSizeConditionNotMet"
    assert append.append_block(b"def", appendpos_condition=3)["blob_committed_block_count"] == 2
    append.seal_append_blob()
    with pytest.raises(HttpResponseError) as sealed:
        append.append_block(b"ghi")
    assert sealed.value.status_code == 409
    properties = append.get_blob_properties()
    assert append.download_blob().readall() == b"abcdef" and properties.is_append_blob_sealed and properties.blob_type == "AppendBlob"
    # A copy is sealed as its source is, unless x-ms-seal-blob says otherwise (false once sealed it).
    copied = container.get_blob_client("copied")
    copied.start_copy_from_url(append.url)
    assert copied.get_blob_properties().is_append_blob_sealed
    unsealed = container.get_blob_client("unsealed")
    unsealed.start_copy_from_url(append.url, seal_destination_blob=False)
    assert not unsealed.get_blob_properties().is_append_blob_sealed
    unsealed.append_block(b"ghi")
    assert unsealed.download_blob().readall() == b"abcdefghi"
    # A block blob's operations on another type are 409 InvalidBlobType, nothing written.
    with pytest.raises(HttpResponseError) as wrong:
        append.stage_block("MDA=", b"x")
    assert wrong.value.error_code == "InvalidBlobType"
    assert append.download_blob().readall() == b"abcdef"


def test_concurrent_appends_all_land_once(emulator, name):
    append = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name).get_blob_client("log")
    append.create_append_blob()
    pieces = [f"{i:04d};".encode() for i in range(80)]

    def write(part):
        for piece in part:
            append.append_block(piece)

    threads = [threading.Thread(target=write, args=(pieces[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    content = append.download_blob().readall()
    assert sorted(content.split(b";")[:-1]) == sorted(p[:-1] for p in pieces)
    assert append.get_blob_properties().append_blob_committed_block_count == 80


def test_time_conditions_on_writes_are_honoured(emulator, name):
    """Defect 7 and the write conditions the SDK's access-condition tests send: If-Unmodified-Since
    in the past is 412 on a blob write, a container's metadata, ACL and delete; nothing changes."""
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    container = service.create_container(name)
    blob = container.upload_blob("b", b"data", metadata={"k": "v"})
    past = datetime.now(timezone.utc) - timedelta(hours=1)
    future = datetime.now(timezone.utc) + timedelta(hours=1)
    with pytest.raises(ResourceModifiedError):
        blob.set_blob_metadata({"k": "changed"}, if_unmodified_since=past)
    with pytest.raises(ResourceModifiedError):
        blob.upload_blob(b"other", overwrite=True, if_modified_since=future)
    assert blob.get_blob_properties().metadata == {"k": "v"} and blob.download_blob().readall() == b"data"
    blob.set_blob_metadata({"k": "changed"}, if_modified_since=past)
    with pytest.raises(ResourceModifiedError):
        container.set_container_metadata({"a": "b"}, if_modified_since=future)
    with pytest.raises(ResourceModifiedError):
        container.set_container_access_policy({}, public_access="blob", if_unmodified_since=past)
    with pytest.raises(ResourceModifiedError):
        container.delete_container(if_unmodified_since=past)
    properties = container.get_container_properties()
    assert properties.metadata == {} and properties.public_access is None
    assert properties.immutable_storage_with_versioning_enabled is False
    container.delete_container(if_modified_since=past)


def test_appends_and_pages_survive_kill_9(azseed, tmp_path):
    data = tmp_path / "storage"
    emulator = start_emulator(azseed, "--data-dir", str(data))
    container = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0).create_container("crash")
    log = container.get_blob_client("log")
    log.create_append_blob()
    disk = container.get_blob_client("disk")
    disk.create_page_blob(1 << 20)
    acknowledged = []
    stop = threading.Event()

    def append():
        i = 0
        while not stop.is_set():
            try:
                log.append_block(b"%06d" % i)
                disk.upload_page(bytes([i % 251]) * 512, offset=(i % 2048) * 512, length=512)
            except Exception:
                return
            acknowledged.append(i)
            i += 1

    writer = threading.Thread(target=append)
    writer.start()
    while len(acknowledged) < 100:
        threading.Event().wait(0.05)
    os.kill(emulator.process.pid, signal.SIGKILL)
    emulator.process.wait()
    stop.set()
    writer.join()
    restarted = start_emulator(azseed, "--data-dir", str(data))
    try:
        container = BlobServiceClient.from_connection_string(restarted.connection_string).get_container_client("crash")
        content = container.get_blob_client("log").download_blob().readall()
        n = len(acknowledged)
        # Every acknowledged append is there, in order; at most the one in flight follows.
        assert content[:6 * n] == b"".join(b"%06d" % i for i in range(n)) and len(content) - 6 * n in (0, 6)
        pages = container.get_blob_client("disk").download_blob().readall()
        for i in range(min(n, 2048)):
            assert pages[i * 512:(i + 1) * 512] == bytes([i % 251]) * 512
    finally:
        stop_emulator(restarted)


def test_snapshots_keep_what_the_blob_was(azseed, tmp_path):
    """Defect 8 (`?snapshot=` was ignored: a snapshot that does not exist read the blob) and
    snapshots as Azure has them: read, listed before their blob, copied from, deleted with
    `x-ms-delete-snapshots`, and a page range diff against one; on disk, across a restart."""
    data = tmp_path / "storage"
    emulator = start_emulator(azseed, "--data-dir", str(data))
    try:
        container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container("snaps")
        blob = container.upload_blob("b", b"first", metadata={"v": "1"})
        taken = blob.create_snapshot()["snapshot"]
        blob.upload_blob(b"second", overwrite=True, metadata={"v": "2"})
        old = container.get_blob_client("b", snapshot=taken)
        assert old.download_blob().readall() == b"first" and old.get_blob_properties().metadata == {"v": "1"}
        missing = container.get_blob_client("b", snapshot="2001-01-01T00:00:00.0000000Z")
        with pytest.raises(HttpResponseError) as nothing:
            missing.download_blob()
        assert nothing.value.status_code == 404
        listed = [(b.name, b.snapshot) for b in container.list_blobs(include=["snapshots"])]
        assert listed == [("b", taken), ("b", None)]
        copy = container.get_blob_client("copy")
        copy.start_copy_from_url(old.url)
        assert copy.download_blob().readall() == b"first"
        with pytest.raises(HttpResponseError) as present:
            blob.delete_blob()
        assert present.value.error_code == "SnapshotsPresent"
        # A page blob's diff against a snapshot: what was written and cleared since.
        page = container.get_blob_client("p")
        page.create_page_blob(2048)
        page.upload_page(os.urandom(1536), offset=0, length=1536)
        before = page.create_snapshot()["snapshot"]
        page.upload_page(os.urandom(512), offset=1536, length=512)
        page.clear_page(offset=0, length=512)
        ranges, cleared = page.get_page_ranges(previous_snapshot_diff=before)
        assert [(r["start"], r["end"]) for r in ranges] == [(1536, 2047)] and [(r["start"], r["end"]) for r in cleared] == [(0, 511)]
    finally:
        stop_emulator(emulator)
    restarted = start_emulator(azseed, "--data-dir", str(data))
    try:
        container = BlobServiceClient.from_connection_string(restarted.connection_string).get_container_client("snaps")
        assert container.get_blob_client("b", snapshot=taken).download_blob().readall() == b"first"
        assert sum(len(files) for _, _, files in os.walk(data / "blobs")) > 0
        container.get_blob_client("b").delete_blob(delete_snapshots="only")
        assert [(b.name, b.snapshot) for b in container.list_blobs(include=["snapshots"]) if b.name == "b"] == [("b", None)]
        assert container.get_blob_client("b").download_blob().readall() == b"second"
        container.get_blob_client("p").delete_blob(delete_snapshots="include")
        container.delete_container()
        # Nothing is left on disk of what was deleted, snapshots' bytes included.
        assert sum(len(files) for _, _, files in os.walk(data / "blobs")) == 0
    finally:
        stop_emulator(restarted)


def test_archive_makes_a_blob_unreadable_until_rehydrated(azseed):
    """Tiers on write and the Archive tier as Azure states it: an archived blob's bytes are 409
    BlobArchived; Set Blob Tier out of Archive is 202 and pending (archive status, priority)
    until the rehydration time passes, then the blob reads again in its new tier."""
    emulator = start_emulator(azseed, "--in-memory", "--rehydrate-seconds", "3")
    try:
        container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container("tiers")
        cool = container.upload_blob("cool", b"c", standard_blob_tier=StandardBlobTier.Cool)
        assert cool.get_blob_properties().blob_tier == "Cool"
        blob = container.upload_blob("cold", b"frozen", standard_blob_tier=StandardBlobTier.Archive)
        with pytest.raises(HttpResponseError) as archived:
            blob.download_blob()
        assert archived.value.status_code == 409 and archived.value.error_code == "BlobArchived"
        with pytest.raises(HttpResponseError):
            blob.set_blob_metadata({"k": "v"})
        blob.set_standard_blob_tier(StandardBlobTier.Hot)
        properties = blob.get_blob_properties()
        assert properties.blob_tier == "Archive" and properties.archive_status == "rehydrate-pending-to-hot"
        assert properties.rehydrate_priority == "Standard"
        with pytest.raises(HttpResponseError) as pending:
            blob.set_standard_blob_tier(StandardBlobTier.Cool)
        assert pending.value.error_code == "BlobBeingRehydrated"
        listed = next(b for b in container.list_blobs() if b.name == "cold")
        assert listed.archive_status == "rehydrate-pending-to-hot"
        deadline = __import__("time").time() + 10
        while blob.get_blob_properties().blob_tier == "Archive" and __import__("time").time() < deadline:
            __import__("time").sleep(0.5)
        properties = blob.get_blob_properties()
        assert properties.blob_tier == "Hot" and properties.archive_status is None
        assert blob.download_blob().readall() == b"frozen"
        # Premium page blob tiers belong to premium accounts: refused, nothing written.
        with pytest.raises(HttpResponseError):
            container.get_blob_client("p").create_page_blob(1024, premium_page_blob_tier=PremiumPageBlobTier.P10)
        assert not container.get_blob_client("p").exists()
    finally:
        stop_emulator(emulator)
