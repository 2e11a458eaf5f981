"""Issue 29, item 5: accounts addressed the way clients address them. The official SDKs (and
their own tests against Azurite) put the account in the host name —
`http://devstoreaccount1.blob.localhost:PORT/container/blob` — and `az storage blob copy start
--source-container` names the source by the public-cloud host of the account. Name resolution of
`*.localhost` is done here in the test process (no DNS on this machine answers it)."""
import socket
import urllib.parse
from datetime import datetime, timedelta, timezone

import pytest
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableServiceClient, TableSasPermissions, generate_table_sas
from azure.core.credentials import AzureNamedKeyCredential
from azure.storage.blob import BlobSasPermissions, BlobServiceClient, generate_blob_sas

from conftest import ACCOUNT, KEY, register_secret

_real_getaddrinfo = socket.getaddrinfo


@pytest.fixture
def localhost_names(monkeypatch):
    def resolve(host, *args, **kwargs):
        if isinstance(host, str) and host.endswith(".localhost"):
            host = "127.0.0.1"
        return _real_getaddrinfo(host, *args, **kwargs)
    monkeypatch.setattr(socket, "getaddrinfo", resolve)


def host_style(endpoint, service):
    parts = urllib.parse.urlsplit(endpoint)
    return f"http://{ACCOUNT}.{service}.localhost:{parts.port}"


def test_the_sdks_work_with_the_account_in_the_host_name(emulator, name, localhost_names):
    credential = AzureNamedKeyCredential(ACCOUNT, KEY)
    blobs = BlobServiceClient(host_style(emulator.blob, "blob"), credential={"account_name": ACCOUNT, "account_key": KEY}, retry_total=0)
    container = blobs.create_container(name)
    container.upload_blob("a b/ü.txt", b"hello", metadata={"k": "v"})
    assert container.download_blob("a b/ü.txt").readall() == b"hello"
    assert [b.name for b in container.list_blobs()] == ["a b/ü.txt"]
    # The same data path style, and a SAS made for the host-style URL works.
    path_style = BlobServiceClient.from_connection_string(emulator.connection_string)
    assert path_style.get_blob_client(name, "a b/ü.txt").download_blob().readall() == b"hello"
    sas = register_secret(generate_blob_sas(ACCOUNT, name, "a b/ü.txt", account_key=KEY, permission=BlobSasPermissions(read=True),
                                            expiry=datetime.now(timezone.utc) + timedelta(hours=1)))
    from azure.storage.blob import BlobClient
    assert BlobClient(host_style(emulator.blob, "blob"), name, "a b/ü.txt", credential=sas).download_blob().readall() == b"hello"
    # Table service too.
    tables = TableServiceClient(host_style(emulator.table, "table"), credential=credential)
    table = tables.create_table(name)
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "N": 1})
    assert [e["N"] for e in table.list_entities()] == [1]
    # A wrong key is refused in either form.
    wrong = BlobServiceClient(host_style(emulator.blob, "blob"), credential={"account_name": ACCOUNT, "account_key": KEY[:-4] + "AAA="}, retry_total=0)
    with pytest.raises(HttpResponseError) as refused:
        wrong.get_container_client(name).get_container_properties()
    assert refused.value.status_code == 403


def test_a_copy_source_named_by_the_public_cloud_host_is_this_account(emulator, name):
    # What `az storage blob copy start --source-container c --source-blob b` sends.
    blobs = BlobServiceClient.from_connection_string(emulator.connection_string)
    container = blobs.create_container(name)
    container.upload_blob("src.txt", b"source bytes")
    public_cloud = f"https://{ACCOUNT}.blob.core.windows.net/{name}/src.txt"
    copied = container.get_blob_client("dst.txt")
    copied.start_copy_from_url(public_cloud)  # Copy Blob with the account key: the implicit case
    assert copied.download_blob().readall() == b"source bytes"
    # Under the source authorisation rules: Put Blob From URL needs the source's own SAS.
    with pytest.raises(HttpResponseError) as refused:
        container.get_blob_client("dst2.txt").upload_blob_from_url(public_cloud)
    assert refused.value.status_code == 401 and refused.value.error_code == "CannotVerifyCopySource"
    sas = register_secret(generate_blob_sas(ACCOUNT, name, "src.txt", account_key=KEY, permission=BlobSasPermissions(read=True),
                                            expiry=datetime.now(timezone.utc) + timedelta(hours=1)))
    container.get_blob_client("dst2.txt").upload_blob_from_url(f"{public_cloud}?{sas}")
    assert container.get_blob_client("dst2.txt").download_blob().readall() == b"source bytes"


def test_az_copy_start_with_source_container_works(azseed, emulator, name):
    import os
    import subprocess
    from conftest import ROOT
    blobs = BlobServiceClient.from_connection_string(emulator.connection_string)
    container = blobs.create_container(name)
    container.upload_blob("src.txt", b"az copies this")
    az = str(ROOT / ".venv-az" / "bin" / "az")
    env = {**os.environ, "AZURE_STORAGE_CONNECTION_STRING": emulator.connection_string, "AZURE_CORE_COLLECT_TELEMETRY": "no"}
    done = subprocess.run([az, "storage", "blob", "copy", "start", "--destination-container", name, "--destination-blob", "dst.txt",
                           "--source-container", name, "--source-blob", "src.txt", "--output", "json"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert container.get_blob_client("dst.txt").download_blob().readall() == b"az copies this"
