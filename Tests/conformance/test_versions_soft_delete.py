"""Blob versions (`azseed emulator --blob-versioning`), soft delete (the delete retention
policy in the service properties) with Undelete, and the user delegation keys and SAS a
Microsoft Entra principal signs with — through the official SDK, and as an attacker holding a
SAS or a forged key would try them."""
from datetime import datetime, timedelta, timezone
from urllib.parse import quote

import pytest
import requests
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.identity import ClientSecretCredential
from azure.storage.blob import (BlobSasPermissions, BlobServiceClient, RetentionPolicy, generate_blob_sas,
                                generate_container_sas, ContainerSasPermissions)

import identity_provider as idp
from conftest import ACCOUNT, KEY, register_secret, send, start_emulator, start_entra_emulator, stop_emulator, stop_entra_emulator


@pytest.fixture
def versioned(azseed):
    running = start_emulator(azseed, "--in-memory", "--blob-versioning")
    yield running
    stop_emulator(running)


def sas(container, blob, **kw):
    return register_secret(generate_blob_sas(ACCOUNT, container, blob, account_key=KEY,
                                             expiry=datetime.now(timezone.utc) + timedelta(hours=1), **kw))


def test_versioning_keeps_every_state_a_write_replaces(versioned, name):
    service = BlobServiceClient.from_connection_string(versioned.connection_string)
    container = service.create_container(name)
    blob = container.get_blob_client("doc.txt")
    first = blob.upload_blob(b"one")["version_id"]
    second = blob.upload_blob(b"two", overwrite=True)["version_id"]
    third = blob.set_blob_metadata({"k": "v"})["version_id"]
    assert len({first, second, third}) == 3
    assert blob.download_blob(version_id=first).readall() == b"one"
    assert blob.download_blob(version_id=second).readall() == b"two"
    current = blob.get_blob_properties()
    assert current.version_id == third and current.is_current_version and current.metadata == {"k": "v"}
    assert blob.get_blob_properties(version_id=second).metadata == {}
    listed = [(b.version_id, b.is_current_version) for b in container.list_blobs(include=["versions"])]
    assert listed == [(first, None), (second, None), (third, True)]
    # Delete: the blob is gone, its versions stay; a copy from a version brings it back.
    blob.delete_blob()
    assert not blob.exists()
    assert [b.name for b in container.list_blobs()] == []
    assert [b.has_versions_only for b in container.list_blobs(include=["deletedwithversions"])] == [True]
    blob.start_copy_from_url(f"{blob.url}?versionid={quote(first)}")
    assert blob.download_blob().readall() == b"one"
    # A version that does not exist is 404; a version id that is no time is 400.
    with pytest.raises(ResourceNotFoundError):
        blob.download_blob(version_id="2001-01-01T00:00:00.0000000Z").readall()
    r = versioned.raw("GET", f"{blob.url}?versionid=not-a-time")
    assert r.status_code == 400 and r.headers.get("x-ms-error-code") == "InvalidQueryParameterValue", r.text
    # A previous version is deleted by its id; the others stay.
    blob.delete_blob(version_id=first)
    with pytest.raises(ResourceNotFoundError):
        blob.download_blob(version_id=first).readall()
    assert blob.download_blob(version_id=second).readall() == b"two"


def test_a_delete_grant_is_no_grant_to_delete_versions(versioned, name):
    """A SAS with d deletes the blob (which keeps its versions); deleting a version takes x,
    a version SAS (sr=bv) opens that version only."""
    service = BlobServiceClient.from_connection_string(versioned.connection_string)
    container = service.create_container(name)
    blob = container.get_blob_client("kept.txt")
    old = blob.upload_blob(b"old")["version_id"]
    blob.upload_blob(b"new", overwrite=True)
    token = sas(name, "kept.txt", permission=BlobSasPermissions(read=True, delete=True))
    r = send("DELETE", f"{blob.url}?versionid={quote(old)}&{token}", {"x-ms-version": "2026-10-06"})
    assert r.status_code == 403, r.text
    assert blob.download_blob(version_id=old).readall() == b"old"
    # sr=bv signs one version: it reads that one, not the current blob nor another version.
    version_token = sas(name, "kept.txt", permission=BlobSasPermissions(read=True), version_id=old)
    assert send("GET", f"{blob.url}?versionid={quote(old)}&{version_token}", {"x-ms-version": "2026-10-06"}).content == b"old"
    assert send("GET", f"{blob.url}?{version_token}", {"x-ms-version": "2026-10-06"}).status_code == 403
    with_x = sas(name, "kept.txt", permission=BlobSasPermissions(delete_previous_version=True))
    r = send("DELETE", f"{blob.url}?versionid={quote(old)}&{with_x}", {"x-ms-version": "2026-10-06"})
    assert r.status_code == 202, r.text


def test_soft_delete_keeps_and_undelete_restores(emulator, name):
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    for days in (0, 366):
        with pytest.raises(HttpResponseError):
            service.set_service_properties(delete_retention_policy=RetentionPolicy(enabled=True, days=days))
    service.set_service_properties(delete_retention_policy=RetentionPolicy(enabled=True, days=3))
    container = service.create_container(name)
    blob = container.get_blob_client("photo.jpg")
    blob.upload_blob(b"first")
    blob.upload_blob(b"second", overwrite=True)  # the first is kept as a soft-deleted snapshot
    blob.create_snapshot()
    blob.delete_blob(delete_snapshots="include")
    assert not blob.exists()
    assert [b.name for b in container.list_blobs()] == []
    deleted = list(container.list_blobs(include=["deleted", "snapshots"]))
    assert len(deleted) == 3 and all(b.deleted and b.remaining_retention_days == 3 for b in deleted)
    assert deleted[-1].snapshot is None  # the blob itself, after its snapshots
    blob.undelete_blob()
    assert blob.download_blob().readall() == b"second"
    states = list(container.list_blobs(include=["snapshots"]))
    assert len(states) == 3 and not any(b.deleted for b in states)
    first = next(b for b in states if b.snapshot and container.get_blob_client("photo.jpg", snapshot=b.snapshot).download_blob().readall() == b"first")
    assert first is not None
    # Deleting a soft-deleted snapshot for good needs AllowPermanentDelete: refused, kept.
    container.get_blob_client("photo.jpg", snapshot=first.snapshot).delete_blob()
    r = emulator.raw("DELETE", f"{blob.url}?snapshot={quote(first.snapshot)}&deletetype=permanent")
    assert r.status_code == 409, r.text
    blob.undelete_blob()
    assert container.get_blob_client("photo.jpg", snapshot=first.snapshot).download_blob().readall() == b"first"
    # A policy switched off keeps nothing more: a delete is a delete.
    service.set_service_properties(delete_retention_policy=RetentionPolicy(enabled=False))
    other = container.upload_blob("other.txt", b"x")
    other.delete_blob()
    assert [b.name for b in container.list_blobs(include=["deleted"]) if b.name == "other.txt"] == []


def test_a_soft_deleted_blob_reads_as_missing_through_every_door(emulator, name):
    """Soft-deleted is deleted: not readable, not copyable, not listed without include=deleted,
    its tags not searchable — for a SAS holder as for the key holder."""
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    service.set_service_properties(delete_retention_policy=RetentionPolicy(enabled=True, days=1))
    container = service.create_container(name)
    blob = container.upload_blob("secret.txt", b"gone", tags={"k": name})
    assert [b.name for b in service.find_blobs_by_tags(f"\"k\"='{name}'")] == ["secret.txt"]
    blob.delete_blob()
    token = sas(name, "secret.txt", permission=BlobSasPermissions(read=True, tag=True))
    assert send("GET", f"{blob.url}?{token}", {"x-ms-version": "2026-10-06"}).status_code == 404
    assert send("GET", f"{blob.url}?comp=tags&{token}", {"x-ms-version": "2026-10-06"}).status_code == 404
    assert list(service.find_blobs_by_tags(f"\"k\"='{name}'")) == []
    copy = container.get_blob_client("copy.txt")
    with pytest.raises(HttpResponseError):
        copy.start_copy_from_url(blob.url)
    assert not copy.exists()
    # Listing the deleted takes the list permission like any listing; a blob SAS cannot.
    r = send("GET", f"{versioned_url(emulator, name)}?restype=container&comp=list&include=deleted&{token}", {"x-ms-version": "2026-10-06"})
    assert r.status_code == 403, r.text


def versioned_url(emulator, name):
    return f"{emulator.blob}/{name}"


@pytest.fixture(scope="module")
def entra(azseed, tmp_path_factory):
    provider = start_entra_emulator(azseed, tmp_path_factory.mktemp("udk"))
    yield provider
    stop_entra_emulator(provider)


def principal(entra):
    """The SDK signed in as the identity provider's client: its credential and a service client."""
    register_secret(idp.CLIENT_SECRET)
    credential = ClientSecretCredential(idp.TENANT, idp.CLIENT_ID, idp.CLIENT_SECRET, authority=entra.authority,
                                        disable_instance_discovery=True, connection_verify=entra.ca)
    return credential, BlobServiceClient(entra.emulator.blob, credential=credential, connection_verify=entra.ca, retry_total=0)


def test_user_delegation_sas_signed_by_a_principal_and_not_by_a_forger(entra, name):
    _, service = principal(entra)
    container = service.create_container(name)
    container.upload_blob("shared.txt", b"delegated")
    now = datetime.now(timezone.utc)
    key = service.get_user_delegation_key(now - timedelta(minutes=5), now + timedelta(hours=1))
    register_secret(key.value)
    assert key.signed_tid == idp.TENANT and key.signed_oid
    token = register_secret(generate_blob_sas(ACCOUNT, name, "shared.txt", user_delegation_key=key,
                                              permission=BlobSasPermissions(read=True), expiry=now + timedelta(minutes=30)))
    url = f"{entra.emulator.blob}/{name}/shared.txt"
    assert requests.get(f"{url}?{token}", verify=entra.ca, timeout=10).content == b"delegated"
    # Stretching the key's expiry (or any of its fields) changes the key: refused.
    stretched = token.replace(quote(key.signed_expiry, safe=""), quote((now + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ"), safe=""))
    assert stretched != token
    assert requests.get(f"{url}?{stretched}", verify=entra.ca, timeout=10).status_code == 403
    # A key made up by someone without the account key (its value is an HMAC under that key).
    key.value = "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE="
    forged = generate_blob_sas(ACCOUNT, name, "shared.txt", user_delegation_key=key, permission=BlobSasPermissions(read=True),
                               expiry=now + timedelta(minutes=30))
    assert requests.get(f"{url}?{forged}", verify=entra.ca, timeout=10).status_code == 403
    # Only a principal gets a key: the account key holder has no identity to issue one to.
    keyed = BlobServiceClient(entra.emulator.blob, credential={"account_name": ACCOUNT, "account_key": KEY},
                              connection_verify=entra.ca, retry_total=0)
    with pytest.raises(HttpResponseError) as refused:
        keyed.get_user_delegation_key(now, now + timedelta(hours=1))
    assert refused.value.status_code == 403
    # A key lasts at most seven days.
    with pytest.raises(HttpResponseError):
        service.get_user_delegation_key(now, now + timedelta(days=8))


def test_a_user_delegation_sas_bound_to_request_headers_needs_them(entra, name):
    _, service = principal(entra)
    container = service.create_container(name)
    container.upload_blob("bound.txt", b"bound")
    now = datetime.now(timezone.utc)
    key = service.get_user_delegation_key(now - timedelta(minutes=5), now + timedelta(hours=1))
    register_secret(key.value)
    token = register_secret(generate_blob_sas(ACCOUNT, name, "bound.txt", user_delegation_key=key, permission=BlobSasPermissions(read=True),
                                              expiry=now + timedelta(minutes=30), request_headers={"x-ms-client-request-id": "agreed"}))
    url = f"{entra.emulator.blob}/{name}/bound.txt?{token}"
    assert requests.get(url, verify=entra.ca, timeout=10, headers={"x-ms-client-request-id": "agreed"}).content == b"bound"
    assert requests.get(url, verify=entra.ca, timeout=10, headers={"x-ms-client-request-id": "other"}).status_code == 403
    assert requests.get(url, verify=entra.ca, timeout=10).status_code == 403


def test_copy_source_authorization_is_a_token_for_the_source(entra, name):
    """x-ms-copy-source-authorization: a token for the source reads it; a forged one is
    CannotVerifyCopySource, nothing copied."""
    credential, service = principal(entra)
    container = service.create_container(name)
    source = container.upload_blob("private.txt", b"private")
    target = container.get_blob_client("copy.txt")
    token = credential.get_token("https://storage.azure.com/.default").token
    register_secret(token)
    target.upload_blob_from_url(source.url, source_authorization=f"Bearer {token}")
    assert target.download_blob().readall() == b"private"
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    with pytest.raises(HttpResponseError) as refused:
        container.get_blob_client("forged.txt").upload_blob_from_url(source.url, source_authorization=f"Bearer {forged}")
    assert refused.value.error_code == "CannotVerifyCopySource"
    assert not container.get_blob_client("forged.txt").exists()


def test_a_request_naming_a_snapshot_and_a_version_is_refused(versioned, name):
    """The attacker's finding: a version SAS (or an x-only SAS) with a snapshot added was
    authorised for the version and acted on the snapshot. Now one state per request."""
    service = BlobServiceClient.from_connection_string(versioned.connection_string)
    container = service.create_container(name)
    blob = container.get_blob_client("doc.txt")
    v1 = blob.upload_blob(b"v1")["version_id"]
    snapshot = blob.create_snapshot()["snapshot"]
    blob.upload_blob(b"v2", overwrite=True)
    version_sas = sas(name, "doc.txt", permission=BlobSasPermissions(read=True), version_id=v1)
    r = send("GET", f"{blob.url}?versionid={quote(v1)}&snapshot={quote(snapshot)}&{version_sas}", {"x-ms-version": "2026-10-06"})
    assert r.status_code == 400 and b"v1" not in r.content, r.text
    x_only = sas(name, "doc.txt", permission=BlobSasPermissions(delete_previous_version=True))
    r = send("DELETE", f"{blob.url}?snapshot={quote(snapshot)}&versionid=&{x_only}", {"x-ms-version": "2026-10-06"})
    assert r.status_code in (400, 403), r.text
    assert container.get_blob_client("doc.txt", snapshot=snapshot).download_blob().readall() == b"v1"
    # x deletes previous versions, never the blob: the current version's id is refused.
    current = blob.get_blob_properties().version_id
    r = send("DELETE", f"{blob.url}?versionid={quote(current)}&{x_only}", {"x-ms-version": "2026-10-06"})
    assert r.status_code == 400, r.text
    assert blob.download_blob().readall() == b"v2"


def test_a_listing_page_ending_at_a_name_xml_cannot_carry_stays_valid(emulator, name):
    """The attacker's finding: a blob named with U+FFFF at a page boundary put the raw name in
    NextMarker, and every paged listing of the container was invalid XML. The marker is now an
    opaque token read back on the next page; echoed input is encoded too."""
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    container = service.create_container(name)
    for n in ("a0", "a1", "a2"):
        container.upload_blob(n, b"x")
    assert emulator.raw("PUT", f"{emulator.blob}/{name}/b%EF%BF%BF", {"x-ms-blob-type": "BlockBlob"}, b"x").status_code == 201
    container.upload_blob("c0", b"x")
    names = [b.name for b in container.list_blobs(results_per_page=3)]
    assert names == ["a0", "a1", "a2", "b\uffff", "c0"]
    assert [b.name for b in container.walk_blobs(results_per_page=1)] == names
    r = emulator.raw("GET", f"{emulator.blob}/{name}?restype=container&comp=list&prefix=%EF%BF%BF&marker=%01")
    assert r.status_code == 200 and '<Prefix Encoded="true">%EF%BF%BF</Prefix>' in r.text, r.text
    import xml.dom.minidom
    xml.dom.minidom.parseString(r.content)  # well-formed


def test_a_directory_sas_reaches_its_directory_and_nothing_beside_it(emulator, name):
    """sr=d with sdd: the blobs below the directory it was made for — not a sibling that shares
    its first letters, not another directory, not one level up."""
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    container = service.create_container(name)
    for blob in ("docs/a.txt", "docs/deep/b.txt", "docsx/c.txt", "other/d.txt", "docs"):
        container.upload_blob(blob, b"secret " + blob.encode())
    token = register_secret(generate_blob_sas(ACCOUNT, name, "docs", account_key=KEY, permission=BlobSasPermissions(read=True),
                                              expiry=datetime.now(timezone.utc) + timedelta(hours=1), is_directory=True))
    def read(blob):
        return send("GET", f"{emulator.blob}/{name}/{blob}?{token}", {"x-ms-version": "2026-10-06"})
    assert read("docs/a.txt").content == b"secret docs/a.txt"
    assert read("docs/deep/b.txt").content == b"secret docs/deep/b.txt"
    assert read("docs").content == b"secret docs"
    for outside in ("docsx/c.txt", "other/d.txt"):
        assert read(outside).status_code == 403, outside
    # A depth that does not match the path signed is refused, as is a container operation.
    tampered = token.replace("sdd=1", "sdd=2")
    assert send("GET", f"{emulator.blob}/{name}/docs/deep/b.txt?{tampered}", {"x-ms-version": "2026-10-06"}).status_code == 403
    assert send("GET", f"{emulator.blob}/{name}?restype=container&comp=list&{token}", {"x-ms-version": "2026-10-06"}).status_code == 403
