"""Container soft delete (`azseed emulator --container-soft-delete DAYS`, Azure's account setting):
Delete Container keeps the container and its blobs, List Containers `include=deleted` shows it
with a version, Restore Container brings it back as it was — through the official SDK, as the
SDK's own (playback-only) tests drive it. And what must not happen: a deleted container reached
by any request but Restore, restored over a live one, restored under another name, or by a SAS
that cannot write; a kill -9 losing it; anything kept when the setting is off."""
import os
import signal
import subprocess
import tempfile
from datetime import datetime, timedelta

import pytest
import requests
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.storage.blob import (AccountSasPermissions, BlobServiceClient, ResourceTypes, generate_account_sas)

from conftest import start_emulator, stop_emulator


def _deleted(service, name):
    return [c for c in service.list_containers(include_deleted=True) if c.deleted and c.name == name]


def test_delete_list_restore_and_nothing_else(azseed, name):
    folder = tempfile.mkdtemp()
    emulator = start_emulator(azseed, "--data-dir", folder, "--container-soft-delete", "7")
    try:
        service = BlobServiceClient.from_connection_string(emulator.connection_string)
        container = service.create_container(name, metadata={"team": "a"})
        container.upload_blob("kept.txt", b"kept", metadata={"m": "1"})
        container.delete_container()
        with pytest.raises(ResourceNotFoundError):
            container.get_container_properties()
        assert name not in [c.name for c in service.list_containers()]
        [deleted] = _deleted(service, name)
        assert len(deleted.version) == 16
        raw = [c for c in service._client.service.list_containers_segment(include=["deleted"]).container_items if c.name == name]
        assert raw[0].properties.deleted_time is not None and raw[0].properties.remaining_retention_days == 7
        # Nothing reaches it: not its blob, not a listing, not by its internal name.
        with pytest.raises(ResourceNotFoundError):
            container.get_blob_client("kept.txt").download_blob()
        for spelled in (f"%01{name}%2F{deleted.version}", f"%01{name}/{deleted.version}"):
            r = requests.get(f"{emulator.blob}/{spelled}?restype=container&comp=list", timeout=10)
            assert r.status_code in (400, 403, 404) and b"kept.txt" not in r.content
        # A new container of the name may be made; restoring over it is 409.
        service.create_container(name)
        with pytest.raises(ResourceExistsError):
            service.undelete_container(name, deleted.version)
        service.delete_container(name)
        # Only under the name it had; only with the version it has.
        with pytest.raises(HttpResponseError):
            service.undelete_container(name, deleted.version, new_name=name + "x")
        with pytest.raises(ResourceNotFoundError):
            service.undelete_container(name, "01D685BC91A88F22")
        # Two deleted containers of one name: each restorable by its version.
        assert len(_deleted(service, name)) == 2
        # A SAS that cannot write cannot restore; an account SAS with w can (the SDK's test_restore_with_sas).
        key = emulator.connection_string.split("AccountKey=")[1].split(";")[0]
        read_only = generate_account_sas("devstoreaccount1", key, ResourceTypes(service=True, container=True),
                                          AccountSasPermissions(read=True, list=True), datetime.utcnow() + timedelta(hours=1))
        with pytest.raises(HttpResponseError) as refused:
            BlobServiceClient(service.url, credential=read_only).undelete_container(name, deleted.version)
        assert refused.value.status_code == 403
        writer = generate_account_sas("devstoreaccount1", key, ResourceTypes(service=True, container=True),
                                      AccountSasPermissions(read=True, write=True, list=True, delete=True),
                                      datetime.utcnow() + timedelta(hours=1))
        restored = BlobServiceClient(service.url, credential=writer).undelete_container(name, deleted.version)
        assert restored.get_container_properties().metadata == {"team": "a"}
        # As it was, and it survives kill -9.
        emulator.process.send_signal(signal.SIGKILL)
        emulator.process.wait()
        emulator = start_emulator(azseed, "--data-dir", folder, "--container-soft-delete", "7")
        service = BlobServiceClient.from_connection_string(emulator.connection_string)
        blob = service.get_blob_client(name, "kept.txt")
        assert blob.download_blob().readall() == b"kept" and blob.get_blob_properties().metadata == {"m": "1"}
        assert len(_deleted(service, name)) == 1  # the other deletion is still kept
        # Find Blobs by Tags never finds a deleted container's blob.
        service.get_container_client(name).get_blob_client("tagged.txt").upload_blob(b"t", tags={"k": "v"})
        other = service.create_container(name + "b")
        other.upload_blob("tagged.txt", b"t", tags={"k": "v"})
        other.delete_container()
        found = [(b.container_name, b.name) for b in service.find_blobs_by_tags("\"k\"='v'")]
        assert found == [(name, "tagged.txt")]
        # Switched off later, what was soft-deleted is still kept for its days (as on Azure).
        stop_emulator(emulator)
        emulator = start_emulator(azseed, "--data-dir", folder)
        service = BlobServiceClient.from_connection_string(emulator.connection_string)
        assert len(_deleted(service, name)) == 1 and len(_deleted(service, name + "b")) == 1
        service.delete_container(name)  # now off: deleted for good
        assert len(_deleted(service, name)) == 1
    finally:
        stop_emulator(emulator)


def test_off_by_default(emulator, name):
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    service.create_container(name).upload_blob("a", b"a")
    service.delete_container(name)
    assert _deleted(service, name) == []
    with pytest.raises(ResourceNotFoundError):
        service.undelete_container(name, "01D685BC91A88F22")


@pytest.mark.parametrize("days", ["0", "366", "x"])
def test_a_bad_retention_is_a_usage_error(azseed, days):
    run = subprocess.run([azseed, "emulator", "--in-memory", "--container-soft-delete", days], capture_output=True, text=True, timeout=30)
    assert run.returncode == 64 and run.stdout == "" and len(run.stderr.strip().splitlines()) <= 2, run.stderr
