"""Blob leases in the emulator, driven through azure-storage-blob's own BlobLeaseClient and judged
by Azure's documented lease states and error codes (docs/PROTOCOL.md, "Leases"): acquire, renew,
change, release and break, on blobs and on containers; writes to a leased blob need its lease id,
deleting a leased container needs its."""
import time
import uuid

import pytest
from azure.core.exceptions import HttpResponseError
from azure.storage.blob import BlobLeaseClient, BlobServiceClient


@pytest.fixture
def blob(emulator, name):
    service = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0)
    container = service.create_container(name)
    container.upload_blob("lock", b"x")
    return container.get_blob_client("lock")


def code(error):
    return error.value.response.headers.get("x-ms-error-code")


def test_acquire_renew_change_release(blob):
    lease = BlobLeaseClient(blob)
    lease.acquire(lease_duration=15)
    props = blob.get_blob_properties()
    assert (props.lease.state, props.lease.status, props.lease.duration) == ("leased", "locked", "fixed")
    lease.acquire(lease_duration=-1)  # the holder may acquire again: now infinite
    assert blob.get_blob_properties().lease.duration == "infinite"
    lease.renew()
    proposed = str(uuid.uuid4())
    lease.change(proposed)
    assert lease.id == proposed
    with pytest.raises(HttpResponseError) as e:
        BlobLeaseClient(blob, lease_id=str(uuid.uuid4())).release()
    assert e.value.status_code == 409 and code(e) == "LeaseIdMismatchWithLeaseOperation"
    lease.release()
    assert blob.get_blob_properties().lease.state == "available"
    with pytest.raises(HttpResponseError) as e:
        BlobLeaseClient(blob, lease_id=proposed).renew()
    assert e.value.status_code == 409 and code(e) == "LeaseNotPresentWithLeaseOperation"


def test_a_second_acquirer_is_refused_until_the_lease_is_released(blob):
    first = BlobLeaseClient(blob)
    first.acquire(lease_duration=15)
    with pytest.raises(HttpResponseError) as e:
        BlobLeaseClient(blob).acquire(lease_duration=15)
    assert e.value.status_code == 409 and code(e) == "LeaseAlreadyPresent"
    first.release()
    BlobLeaseClient(blob).acquire(lease_duration=15)


def test_writes_and_deletes_need_the_lease_id(blob):
    lease = BlobLeaseClient(blob)
    lease.acquire(lease_duration=-1)
    for attempt in (lambda: blob.upload_blob(b"y", overwrite=True), lambda: blob.set_blob_metadata({"a": "b"}), lambda: blob.delete_blob()):
        with pytest.raises(HttpResponseError) as e:
            attempt()
        assert e.value.status_code == 412 and code(e) == "LeaseIdMissing"
    with pytest.raises(HttpResponseError) as e:
        blob.set_blob_metadata({"a": "b"}, lease=str(uuid.uuid4()))
    assert e.value.status_code == 412 and code(e) == "LeaseIdMismatchWithBlobOperation"
    blob.upload_blob(b"y", overwrite=True, lease=lease)
    assert blob.get_blob_properties().lease.state == "leased", "a Put Blob keeps the lease"
    assert blob.download_blob(lease=lease).readall() == b"y"
    blob.delete_blob(lease=lease)
    with pytest.raises(HttpResponseError) as e:
        blob.container_name and BlobLeaseClient(blob).acquire(lease_duration=15)
    assert e.value.status_code == 404


def test_a_lease_id_on_a_blob_without_a_lease_is_refused(blob):
    with pytest.raises(HttpResponseError) as e:
        blob.set_blob_metadata({"a": "b"}, lease=str(uuid.uuid4()))
    assert e.value.status_code == 412 and code(e) == "LeaseNotPresentWithBlobOperation"


def test_break_ends_the_lease_and_blocks_renewal(blob):
    lease = BlobLeaseClient(blob)
    lease.acquire(lease_duration=-1)
    assert lease.break_lease(lease_break_period=0) == 0
    assert blob.get_blob_properties().lease.state == "broken"
    with pytest.raises(HttpResponseError) as e:
        lease.renew()
    assert e.value.status_code == 409 and code(e) == "LeaseIsBrokenAndCannotBeRenewed"
    blob.set_blob_metadata({"a": "b"})  # broken: writes need no lease id
    BlobLeaseClient(blob).acquire(lease_duration=15)  # and anyone may acquire


def test_a_breaking_lease_still_locks_until_its_period_ends(blob):
    lease = BlobLeaseClient(blob)
    lease.acquire(lease_duration=-1)
    remaining = lease.break_lease(lease_break_period=2)
    assert remaining in (1, 2)
    assert blob.get_blob_properties().lease.state == "breaking"
    with pytest.raises(HttpResponseError) as e:
        BlobLeaseClient(blob).acquire(lease_duration=15)
    assert e.value.status_code == 409 and code(e) == "LeaseAlreadyPresent"
    with pytest.raises(HttpResponseError) as e:
        blob.set_blob_metadata({"a": "b"})
    assert code(e) == "LeaseIdMissing"
    time.sleep(2.2)
    assert blob.get_blob_properties().lease.state == "broken"


def test_list_blobs_reports_the_lease(blob, emulator):
    container = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0).get_container_client(blob.container_name)
    BlobLeaseClient(blob).acquire(lease_duration=-1)
    listed = list(container.list_blobs())
    assert [(b.name, b.lease.state, b.lease.status, b.lease.duration) for b in listed] == [("lock", "leased", "locked", "infinite")]


def test_invalid_durations_are_refused(blob):
    for duration in (14, 61, 0):
        with pytest.raises(HttpResponseError) as e:
            BlobLeaseClient(blob).acquire(lease_duration=duration)
        assert e.value.status_code == 400 and code(e) == "InvalidHeaderValue"


def test_a_leased_container_is_deleted_only_with_its_lease(blob, emulator, name):
    container = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0).get_container_client(name)
    lease = BlobLeaseClient(container)
    lease.acquire(lease_duration=-1)
    props = container.get_container_properties()
    assert (props.lease.state, props.lease.status, props.lease.duration) == ("leased", "locked", "infinite")
    listed = [c for c in BlobServiceClient.from_connection_string(emulator.connection_string).list_containers() if c.name == name]
    assert listed[0].lease.state == "leased"
    with pytest.raises(HttpResponseError) as e:
        container.delete_container()
    assert e.value.status_code == 412 and code(e) == "LeaseIdMissing"
    with pytest.raises(HttpResponseError) as e:
        container.delete_container(lease=str(uuid.uuid4()))
    assert e.value.status_code == 412 and code(e) == "LeaseIdMismatchWithContainerOperation"
    with pytest.raises(HttpResponseError) as e:
        container.set_container_metadata({"a": "b"}, lease=str(uuid.uuid4()))
    assert e.value.status_code == 412 and code(e) == "LeaseIdMismatchWithContainerOperation"
    container.set_container_metadata({"a": "b"})  # optional on metadata: no id is fine
    assert container.exists()
    with pytest.raises(HttpResponseError) as e:
        BlobLeaseClient(container).acquire(lease_duration=15)
    assert e.value.status_code == 409 and code(e) == "LeaseAlreadyPresent"
    container.delete_container(lease=lease)
    assert not container.exists()


def test_a_lease_id_on_a_container_without_a_lease_is_refused(blob, emulator, name):
    container = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0).get_container_client(name)
    with pytest.raises(HttpResponseError) as e:
        container.delete_container(lease=str(uuid.uuid4()))
    assert e.value.status_code == 412 and code(e) == "LeaseNotPresentWithContainerOperation"
    assert container.exists()


def test_a_reader_cannot_lock_anyone_out(blob, emulator, name):
    """Written as an attacker holding a read-only SAS, or nothing, would try: a lease locks every
    writer out, so taking one needs write permission ('w'); anonymous callers get nothing even on
    a public container."""
    from datetime import datetime, timedelta, timezone
    from azure.storage.blob import BlobClient, BlobSasPermissions, generate_blob_sas
    from conftest import ACCOUNT, KEY
    expiry = datetime.now(timezone.utc) + timedelta(hours=1)
    read_only = generate_blob_sas(ACCOUNT, name, "lock", account_key=KEY, permission=BlobSasPermissions(read=True), expiry=expiry)
    reader = BlobClient.from_blob_url(f"{emulator.blob}/{name}/lock?{read_only}", retry_total=0)
    with pytest.raises(HttpResponseError) as e:
        BlobLeaseClient(reader).acquire(lease_duration=-1)
    assert e.value.status_code == 403
    BlobServiceClient.from_connection_string(emulator.connection_string).get_container_client(name).set_container_access_policy({}, public_access="container")
    anonymous = BlobClient.from_blob_url(f"{emulator.blob}/{name}/lock", retry_total=0)
    with pytest.raises(HttpResponseError) as e:
        BlobLeaseClient(anonymous).acquire(lease_duration=-1)
    assert e.value.status_code in (403, 404)
    assert blob.get_blob_properties().lease.state == "available"
    writer_sas = generate_blob_sas(ACCOUNT, name, "lock", account_key=KEY, permission=BlobSasPermissions(write=True), expiry=expiry)
    BlobLeaseClient(BlobClient.from_blob_url(f"{emulator.blob}/{name}/lock?{writer_sas}", retry_total=0)).acquire(lease_duration=15)


def test_a_block_from_url_needs_the_lease_too(blob, emulator, name):
    """From an attacker's review: Put Block From URL staged into a leased blob without its id (a
    holder would then commit someone else's bytes). Now it is 412 LeaseIdMissing, as Put Block."""
    from datetime import datetime, timedelta, timezone
    from azure.storage.blob import BlobSasPermissions, generate_blob_sas
    from conftest import ACCOUNT, KEY
    container = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0).get_container_client(name)
    source = container.upload_blob("source", b"someone else's bytes")
    sas = generate_blob_sas(ACCOUNT, name, "source", account_key=KEY, permission=BlobSasPermissions(read=True),
                            expiry=datetime.now(timezone.utc) + timedelta(hours=1))
    target = container.upload_blob("y", b"mine")
    lease = BlobLeaseClient(target)
    lease.acquire(lease_duration=-1)
    with pytest.raises(HttpResponseError) as e:
        target.stage_block_from_url("YmxvY2sx", f"{source.url}?{sas}")
    assert e.value.status_code == 412 and code(e) == "LeaseIdMissing"
    target.stage_block_from_url("YmxvY2sx", f"{source.url}?{sas}", lease=lease)


def test_lease_blob_honours_its_conditions(emulator, name):
    """Lease Blob takes If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since and
    x-ms-if-tags (they were refused as unimplemented); not met is 412 and no lease is taken."""
    from datetime import datetime, timedelta, timezone
    from azure.core import MatchConditions
    from azure.core.exceptions import ResourceModifiedError
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    blob = container.upload_blob("b", b"x", tags={"owner": "ops"})
    future = datetime.now(timezone.utc) + timedelta(hours=1)
    with pytest.raises(ResourceModifiedError):
        blob.acquire_lease(if_modified_since=future)
    with pytest.raises(ResourceModifiedError):
        blob.acquire_lease(etag='"0x1"', match_condition=MatchConditions.IfNotModified)
    with pytest.raises(ResourceModifiedError):
        blob.acquire_lease(if_tags_match_condition="owner = 'dev'")
    assert blob.get_blob_properties().lease.state == "available"
    lease = blob.acquire_lease(etag=blob.get_blob_properties().etag, match_condition=MatchConditions.IfNotModified,
                               if_tags_match_condition="owner = 'ops'")
    assert blob.get_blob_properties().lease.state == "leased"
    lease.release()
