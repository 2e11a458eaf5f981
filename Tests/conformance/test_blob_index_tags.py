"""Issue 32: blob index tags in the emulator — on writes, Set/Get Blob Tags, Find Blobs by
Tags and `x-ms-if-tags` — checked with the official Python SDK, as an attacker would try them
too: a SAS without `t` or `f`, malformed expressions and tags, conditions that must leave the
data unchanged."""
from datetime import datetime, timedelta, timezone

import pytest
from azure.core.exceptions import HttpResponseError, ResourceModifiedError
from azure.storage.blob import (AccountSasPermissions, BlobClient, BlobSasPermissions, BlobServiceClient, ResourceTypes,
                                generate_account_sas, generate_blob_sas)

from conftest import ACCOUNT, KEY


def test_tags_are_set_found_and_conditioned_on(emulator, name):
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    first = service.create_container(name)
    second = service.create_container(name + "b")
    first.upload_blob("a", b"1", tags={"project": "speakeasy", "stage": "dev"})
    first.upload_blob("b", b"2", tags={"project": "speakeasy", "stage": "prod"})
    second.upload_blob("c", b"3", tags={"project": "speakeasy", "stage": "prod"})
    first.upload_blob("d", b"4")
    blob = first.get_blob_client("a")
    assert blob.get_blob_tags() == {"project": "speakeasy", "stage": "dev"}
    assert blob.get_blob_properties().tag_count == 2
    etag = blob.get_blob_properties().etag
    blob.set_blob_tags({"project": "speakeasy", "stage": "prod", "owner": "ops"})
    assert blob.get_blob_properties().etag == etag  # tags change neither ETag nor time

    found = sorted((b.container_name, b.name) for b in service.find_blobs_by_tags("project = 'speakeasy' AND stage='prod'"))
    assert found == [(name, "a"), (name, "b"), (name + "b", "c")]
    scoped = [(b.container_name, b.name) for b in service.find_blobs_by_tags(f"@container='{name}b' and stage = 'prod'")]
    assert scoped == [(name + "b", "c")]
    pages = list(service.find_blobs_by_tags("project='speakeasy'", results_per_page=2).by_page())
    assert sum(len(list(p)) for p in pages) == 3
    listed = {b.name: b.tags for b in first.list_blobs(include=["tags"])}
    assert listed["b"] == {"project": "speakeasy", "stage": "prod"} and listed["d"] is None

    # x-ms-if-tags: not met is 412, nothing written; met writes.
    with pytest.raises(ResourceModifiedError):
        blob.upload_blob(b"changed", overwrite=True, if_tags_match_condition="\"stage\" = 'dev'")
    with pytest.raises(ResourceModifiedError):
        blob.delete_blob(if_tags_match_condition="stage = 'dev' or owner <> 'ops'")
    assert blob.download_blob().readall() == b"1"
    blob.set_blob_metadata({"k": "v"}, if_tags_match_condition="(stage = 'dev' or owner = 'ops') and project >= 's'")
    assert blob.get_blob_properties().metadata == {"k": "v"}


def test_bad_tags_and_expressions_are_refused(emulator, name):
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    blob = container.upload_blob("a", b"1")
    for tags in ({f"k{i}": "v" for i in range(11)}, {"bad\u0001key": "v"}, {"k" * 129: "v"}, {"k": "v" * 257}, {"k": "semi;colon"}):
        with pytest.raises(HttpResponseError) as refused:
            blob.set_blob_tags(tags)
        assert refused.value.status_code == 400, tags
    assert blob.get_blob_tags() == {}
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    for where in ("stage", "stage = dev", "stage = 'dev' or x = 'y'", "@owner = 'x'", "(a='b')", "a <> 'b'",
                  " and ".join(f"k{i} = 'v'" for i in range(11)), "a = 'b" + "'" * 0):
        with pytest.raises(HttpResponseError) as refused:
            list(service.find_blobs_by_tags(where))
        assert refused.value.status_code == 400, where
    with pytest.raises(HttpResponseError) as deep:
        blob.upload_blob(b"x", overwrite=True, if_tags_match_condition="(" * 50 + "a = 'b'" + ")" * 50)
    assert deep.value.status_code == 400
    assert blob.download_blob().readall() == b"1"


def test_tags_need_their_own_sas_permissions(emulator, name):
    """As on Azure: reading or writing tags needs `t`, finding blobs by tags `f`; `r`/`w` are not enough."""
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    container.upload_blob("a", b"1", tags={"k": "v"})
    expiry = datetime.now(timezone.utc) + timedelta(hours=1)
    read_write = generate_blob_sas(ACCOUNT, name, "a", account_key=KEY, permission=BlobSasPermissions(read=True, write=True), expiry=expiry)
    blob = BlobClient.from_blob_url(f"{emulator.blob}/{name}/a?{read_write}")
    for attempt in (blob.get_blob_tags, lambda: blob.set_blob_tags({"k": "changed"})):
        with pytest.raises(HttpResponseError) as refused:
            attempt()
        assert refused.value.status_code == 403
    tag = generate_blob_sas(ACCOUNT, name, "a", account_key=KEY, permission=BlobSasPermissions(tag=True), expiry=expiry)
    assert BlobClient.from_blob_url(f"{emulator.blob}/{name}/a?{tag}").get_blob_tags() == {"k": "v"}
    listing = generate_account_sas(ACCOUNT, KEY, ResourceTypes(service=True, container=True, object=True),
                                   AccountSasPermissions(read=True, list=True), expiry)
    with pytest.raises(HttpResponseError) as refused:
        list(BlobServiceClient(emulator.blob, credential=listing).find_blobs_by_tags("k='v'"))
    assert refused.value.status_code == 403
    finding = generate_account_sas(ACCOUNT, KEY, ResourceTypes(service=True), AccountSasPermissions(filter_by_tags=True), expiry)
    assert [b.name for b in BlobServiceClient(emulator.blob, credential=finding).find_blobs_by_tags("k='v'")] == ["a"]
