"""Incremental Copy Blob through the official SDK (`start_copy_from_url(..., incremental_copy=True)`):
a page blob snapshot copied into an incremental copy blob — pending at the answer, then a
destination snapshot and success; a later snapshot copies again; read through the destination's
snapshots. And what must not happen: the source read without its own grant (the caller's key
is no grant), a base blob or an earlier snapshot taken, another blob copied into the same
destination, the destination itself read or written by anything but an incremental copy. (A copy a stop left pending is finished at the next start:
IncrementalCopyTests.)"""
import signal
import time
from datetime import datetime, timedelta, timezone

import pytest
from azure.core.exceptions import HttpResponseError
from azure.storage.blob import BlobClient, BlobSasPermissions, BlobServiceClient, generate_blob_sas

from conftest import KEY, start_emulator, stop_emulator


def _snapshot_url(source, snapshot):
    sas = generate_blob_sas("devstoreaccount1", source.container_name, source.blob_name, snapshot=snapshot, account_key=KEY,
                            permission=BlobSasPermissions(read=True), expiry=datetime.now(timezone.utc) + timedelta(hours=1))
    return f"{source.url}?snapshot={snapshot}&{sas}"


def _wait(blob):
    for _ in range(100):
        props = blob.get_blob_properties()
        if props.copy.status != "pending":
            return props
        time.sleep(0.05)
    raise AssertionError("the copy stayed pending")


def test_incremental_copies_and_what_is_refused(azseed, tmp_path, name):
    emulator = start_emulator(azseed, "--data-dir", str(tmp_path))
    try:
        service = BlobServiceClient.from_connection_string(emulator.connection_string)
        container = service.create_container(name)
        source = container.get_blob_client("disk.vhd")
        source.create_page_blob(4096)
        source.upload_page(b"a" * 512, offset=0, length=512)
        first = source.create_snapshot()["snapshot"]
        dest = container.get_blob_client("backup.vhd")
        copy = dest.start_copy_from_url(_snapshot_url(source, first), incremental_copy=True)
        assert copy["copy_status"] == "pending" and copy["copy_id"]
        props = _wait(dest)
        assert props.copy.status == "success" and props.copy.incremental_copy and props.copy.destination_snapshot
        taken = BlobClient.from_connection_string(emulator.connection_string, name, "backup.vhd", snapshot=props.copy.destination_snapshot)
        assert taken.download_blob().readall()[:512] == b"a" * 512
        # The destination itself is read through its snapshots only.
        with pytest.raises(HttpResponseError) as refused:
            dest.download_blob().readall()
        assert refused.value.error_code == "OperationNotAllowedOnIncrementalCopyBlob"
        # A later snapshot copies again; an earlier one, the base blob or another blob do not.
        source.upload_page(b"b" * 512, offset=512, length=512)
        second = source.create_snapshot()["snapshot"]
        dest.start_copy_from_url(_snapshot_url(source, second), incremental_copy=True)
        latest = _wait(dest).copy.destination_snapshot
        assert latest > props.copy.destination_snapshot
        again = BlobClient.from_connection_string(emulator.connection_string, name, "backup.vhd", snapshot=latest)
        assert again.download_blob().readall()[:1024] == b"a" * 512 + b"b" * 512
        with pytest.raises(HttpResponseError) as refused:
            dest.start_copy_from_url(_snapshot_url(source, first), incremental_copy=True)
        assert refused.value.error_code == "IncrementalCopyOfEralierVersionSnapshotNotAllowed"
        sas = _snapshot_url(source, second).split("&", 1)[1]
        with pytest.raises(HttpResponseError) as refused:
            container.get_blob_client("other.vhd").start_copy_from_url(f"{source.url}?{sas}", incremental_copy=True)
        assert refused.value.status_code in (403, 409)
        other = container.get_blob_client("other-disk.vhd")
        other.create_page_blob(512)
        other_snapshot = other.create_snapshot()["snapshot"]
        with pytest.raises(HttpResponseError) as refused:
            dest.start_copy_from_url(_snapshot_url(other, other_snapshot), incremental_copy=True)
        assert refused.value.error_code == "IncrementalCopyBlobMismatch"
        # The caller's key is no grant on the source: without a SAS of its own (private container), refused.
        with pytest.raises(HttpResponseError) as refused:
            container.get_blob_client("nosas.vhd").start_copy_from_url(f"{source.url}?snapshot={second}", incremental_copy=True)
        assert refused.value.status_code == 401 and refused.value.error_code == "CannotVerifyCopySource"
        # Written only by incremental copies: every other write is 409, nothing changes; delete works.
        for write in (lambda: dest.upload_page(b"x" * 512, offset=0, length=512), lambda: dest.set_blob_metadata({"a": "b"}),
                      lambda: dest.resize_blob(8192), lambda: dest.create_snapshot(), lambda: dest.clear_page(0, 512),
                      lambda: dest.upload_blob(b"over", overwrite=True), lambda: dest.get_page_ranges()):
            with pytest.raises(HttpResponseError) as refused:
                write()
            assert refused.value.error_code == "OperationNotAllowedOnIncrementalCopyBlob"
        assert dest.get_blob_properties().size == 4096 and dest.get_blob_properties().metadata == {}
        # Nor read by a query or as a copy source.
        with pytest.raises(HttpResponseError) as refused:
            dest.query_blob("SELECT * FROM BlobStorage").readall()
        assert refused.value.error_code == "OperationNotAllowedOnIncrementalCopyBlob"
        with pytest.raises(HttpResponseError) as refused:
            container.get_blob_client("stolen.vhd").start_copy_from_url(dest.url)
        assert refused.value.error_code == "OperationNotAllowedOnIncrementalCopyBlob"
        # A lease on the destination does not leave the next copy pending forever.
        lease = dest.acquire_lease()
        source.upload_page(b"c" * 512, offset=1024, length=512)
        third = source.create_snapshot()["snapshot"]
        dest.start_copy_from_url(_snapshot_url(source, third), incremental_copy=True, headers={"x-ms-lease-id": lease.id})
        assert _wait(dest).copy.status == "success"
        lease.release()
        # The SAS never reaches a reader of the destination.
        assert "sig=" not in dest.get_blob_properties().copy.source or "redacted" in dest.get_blob_properties().copy.source
        dest.delete_blob(delete_snapshots="include")
    finally:
        stop_emulator(emulator)
