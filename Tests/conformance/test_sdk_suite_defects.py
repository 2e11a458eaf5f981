"""Issue 32: defects the official SDKs' own test suites found in the emulator (Tests/sdk-suites),
each pinned here by a test of its own, written as the SDK's test exercises it."""
import json

import pytest
from azure.core.credentials import AzureNamedKeyCredential
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.data.tables import TableClient, TableServiceClient

from conftest import ACCOUNT, KEY
from test_virtual_host import host_style, localhost_names  # noqa: F401  (a fixture)

CREDENTIAL = AzureNamedKeyCredential(ACCOUNT, KEY)


def test_a_batch_addressed_by_the_account_in_the_host_name_commits(emulator, name, localhost_names):
    """test_table_batch: a TableClient on `https://<account>.table.<host>` sends each changeset
    request with the host-style absolute URL; the emulator took only path-style ones (400 InvalidUri)."""
    table = TableServiceClient(host_style(emulator.table, "table"), credential=CREDENTIAL).create_table(name)
    table.submit_transaction([("create", {"PartitionKey": "p", "RowKey": str(i), "N": i}) for i in range(3)]
                             + [("upsert", {"PartitionKey": "p", "RowKey": "9", "N": 10})])
    assert sorted(e["N"] for e in table.list_entities()) == [0, 1, 2, 10]


def test_the_secondary_host_reads_the_same_data(emulator, name, localhost_names):
    """test_retry: the SDK reads from `<account>-secondary` (retries, geo statistics); the emulator
    has one copy of the data, which serves both host names."""
    TableServiceClient(host_style(emulator.table, "table"), credential=CREDENTIAL).create_table(name).create_entity(
        {"PartitionKey": "p", "RowKey": "r", "N": 1})
    secondary = host_style(emulator.table, "table").replace(f"//{ACCOUNT}.", f"//{ACCOUNT}-secondary.")
    assert [e["N"] for e in TableClient(secondary, name, credential=CREDENTIAL).list_entities()] == [1]
    # Read-only, as Azure's secondary is: a write there is refused, nothing written.
    with pytest.raises(HttpResponseError) as refused:
        TableClient(secondary, name, credential=CREDENTIAL, retry_total=0).create_entity({"PartitionKey": "p", "RowKey": "s"})
    assert refused.value.status_code == 403
    assert [e["RowKey"] for e in TableClient(host_style(emulator.table, "table"), name, credential=CREDENTIAL).list_entities()] == ["r"]


def test_an_account_url_ending_with_a_table_name_is_answered_as_azure_does(emulator, name):
    """test_table_client / test_table_batch `test_client_with_url_ends_with_table_name`: POST
    /t/Tables is 404 TableNotFound while t is missing (the SDK adds "check your account URL"), 400
    PropertiesNeedValue once it exists; DELETE /t/Tables('x') is 400; POST /t/$batch is 415."""
    wrong = TableClient(f"{emulator.table}/{name}", name, credential=CREDENTIAL)
    with pytest.raises(ResourceNotFoundError) as missing:
        wrong.create_table()
    assert "table specified does not exist" in str(missing.value) and "Please check your account URL." in str(missing.value)
    TableClient(emulator.table, name, credential=CREDENTIAL).create_table()
    with pytest.raises(HttpResponseError) as exists:
        wrong.create_table()
    assert exists.value.status_code == 400 and "values are not specified" in str(exists.value)
    with pytest.raises(HttpResponseError) as deleted:
        wrong.delete_table()
    assert deleted.value.status_code == 400 and "does not match number of key properties" in str(deleted.value)
    with pytest.raises(HttpResponseError) as batch:
        wrong.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "r"})])
    assert batch.value.status_code == 415 and batch.value.error_code == "MediaTypeNotSupported"
    assert list(TableClient(emulator.table, name, credential=CREDENTIAL).list_entities()) == []


def test_keys_of_another_type_are_refused_and_a_boolean_as_text_is_taken(emulator, name):
    """test_encoder: Azure refuses a PartitionKey or RowKey annotated as another type than
    Edm.String, and takes `"False"` annotated Edm.Boolean (the emulator did the opposite of both)."""
    table = TableClient(emulator.table, name, credential=CREDENTIAL)
    table.create_table()
    url = f"{emulator.table}/{name}"
    headers = {"Content-Type": "application/json", "Accept": "application/json;odata=nometadata", "DataServiceVersion": "3.0"}
    for body in [{"PartitionKey": "2022-04-01T09:30:45Z", "PartitionKey@odata.type": "Edm.DateTime", "RowKey": "r"},
                 {"PartitionKey": "p", "RowKey": "9b8fbe91-a1d8-46bb-99b6-09e1a6afd9cf", "RowKey@odata.type": "Edm.Guid"},
                 {"PartitionKey": "p", "RowKey": 1234}]:
        refused = emulator.raw("POST", url, headers, json.dumps(body).encode(), service="table")
        assert refused.status_code == 400, (body, refused.text)
    assert list(table.list_entities()) == []
    taken = emulator.raw("POST", url, headers, json.dumps(
        {"PartitionKey": "p", "RowKey": "r", "Data2": "False", "Data2@odata.type": "Edm.Boolean",
         "Data3": "TRUE", "Data3@odata.type": "Edm.Boolean"}).encode(), service="table")
    assert taken.status_code == 201, taken.text
    entity = table.get_entity("p", "r")
    assert entity["Data2"] is False and entity["Data3"] is True


def test_account_information_is_served_on_every_resource_uri(emulator, name):
    """test_blob_storage_account / test_container: Get Account Information on a container or
    blob URI (400 before), and with a SAS of the container (403 before), as Azure documents it."""
    from datetime import datetime, timedelta, timezone
    from azure.storage.blob import BlobServiceClient, ContainerSasPermissions, generate_container_sas
    from conftest import register_secret
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    container = service.create_container(name)
    blob = container.upload_blob("b.txt", b"x")
    for client in [service, container, blob]:
        info = client.get_account_information()
        assert info["sku_name"] == "Standard_LRS" and info["account_kind"] == "StorageV2"
    sas = register_secret(generate_container_sas(ACCOUNT, name, account_key=KEY, permission=ContainerSasPermissions(read=True),
                                                 expiry=datetime.now(timezone.utc) + timedelta(hours=1)))
    from azure.storage.blob import ContainerClient
    assert ContainerClient(f"{emulator.blob}/{name}", name, credential=sas).get_account_information()["sku_name"] == "Standard_LRS"
    anonymous = emulator.raw("GET", f"{emulator.blob}/{name}?restype=account&comp=properties", sign=False)
    assert anonymous.status_code in (401, 403, 404), anonymous.status_code


def test_blob_names_ending_with_a_dot_or_a_slash_are_stored(emulator, name):
    """test_common_blob: Azure advises against such names and stores them; the emulator refused them."""
    from azure.storage.blob import BlobServiceClient
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    for blob_name in [".a.a.", "/a/a/", "b."]:
        container.upload_blob(blob_name, blob_name.encode())
        assert container.download_blob(blob_name).readall() == blob_name.encode()
    assert sorted(b.name for b in container.list_blobs()) == sorted([".a.a.", "/a/a/", "b."])


def test_an_empty_table_access_policy_is_left_out_as_azure_does(emulator, name):
    """test_table: Get Table ACL of an identifier with no policy omits <AccessPolicy> (the SDK then
    reads None); the emulator served an empty <AccessPolicy />."""
    table = TableClient(emulator.table, name, credential=CREDENTIAL)
    table.create_table()
    table.set_table_access_policy(signed_identifiers={"empty": None})
    assert table.get_table_access_policy() == {"empty": None}
    body = emulator.raw("GET", f"{emulator.table}/{name}?comp=acl", service="table").text
    assert "<SignedIdentifier><Id>empty</Id></SignedIdentifier>" in body and "AccessPolicy" not in body


def test_put_blob_checks_the_blob_md5_it_is_given(emulator, name):
    """test_common_blob: Put Blob with x-ms-blob-content-md5 that does not match the bytes is
    400 Md5Mismatch, nothing stored (the emulator stored the wrong MD5)."""
    import base64
    import hashlib
    from azure.storage.blob import BlobServiceClient, ContentSettings
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    wrong = base64.b64encode(hashlib.md5(b"other").digest())
    with pytest.raises(HttpResponseError) as refused:
        container.upload_blob("b.txt", b"data", content_settings=ContentSettings(content_md5=bytearray(wrong)))
    assert refused.value.status_code == 400 and refused.value.error_code == "Md5Mismatch"
    assert [b.name for b in container.list_blobs()] == []
    right = bytearray(hashlib.md5(b"data").digest())
    container.upload_blob("b.txt", b"data", content_settings=ContentSettings(content_md5=right))
    assert bytes(container.get_blob_client("b.txt").get_blob_properties().content_settings.content_md5) == bytes(right)


def batch_body(operation_url, entity):
    """A $batch body of one changeset holding one insert at `operation_url` (as written)."""
    changeset = "changeset_1"
    inner = (f"--{changeset}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
             f"POST {operation_url} HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json;odata=nometadata\r\n"
             f"DataServiceVersion: 3.0;\r\n\r\n{json.dumps(entity)}\r\n--{changeset}--\r\n")
    body = (f"--batch_1\r\nContent-Type: multipart/mixed; boundary={changeset}\r\n\r\n{inner}--batch_1--\r\n").encode()
    return body, {"Content-Type": "multipart/mixed; boundary=batch_1", "Accept": "application/json", "DataServiceVersion": "3.0"}


def test_the_secondary_writes_nothing_by_any_host_spelling_or_changeset_url(emulator, name):
    """From an attacker's review: a port written into the host's first label
    (`devstoreaccount1-secondary:1.blob.x`) was taken for the secondary yet not refused as a write;
    a changeset URL naming the secondary host wrote through a batch sent to the primary."""
    from azure.storage.blob import BlobServiceClient
    blobs = BlobServiceClient.from_connection_string(emulator.connection_string)
    blobs.create_container(name)
    port = emulator.blob.split(":")[2].split("/")[0]
    for host in [f"{ACCOUNT}-secondary:{port}.blob.localhost", f"{ACCOUNT}-secondary:1.blob.x", f"{ACCOUNT.upper()}-SECONDARY.blob.x"]:
        put = emulator.raw("PUT", f"http://127.0.0.1:{port}/{name}/b", {"Host": host, "x-ms-blob-type": "BlockBlob"}, b"zz")
        assert put.status_code == 403, (host, put.status_code, put.text)
    assert list(blobs.get_container_client(name).list_blobs()) == []
    tables = TableClient(emulator.table, name, credential=CREDENTIAL)
    tables.create_table()
    table_port = emulator.table.split(":")[2].split("/")[0]
    for url in [f"https://{ACCOUNT}-secondary.table.localhost:{table_port}/{name}", f"http://{ACCOUNT.upper()}-SECONDARY.TABLE.x/{name}"]:
        body, headers = batch_body(url, {"PartitionKey": "p", "RowKey": "r"})
        emulator.raw("POST", f"{emulator.table}/$batch", headers, body, service="table")
    assert list(tables.list_entities()) == []


def test_a_changeset_url_is_read_from_its_start(emulator, name):
    """From an attacker's review: a `://` in a changeset URL's query was taken for the URL itself,
    so `/acct/one?x=http://acct.table.x/two` wrote into table two; and `acct.table.x@evil` was taken
    for this account."""
    one, two = TableClient(emulator.table, name + "one", credential=CREDENTIAL), TableClient(emulator.table, name + "two", credential=CREDENTIAL)
    one.create_table()
    two.create_table()
    for url in [f"/{ACCOUNT}/{name}one?x=http://{ACCOUNT}.table.x/{name}two", f"http://{ACCOUNT}.table.x@evil/{name}two"]:
        body, headers = batch_body(url, {"PartitionKey": "p", "RowKey": "r"})
        emulator.raw("POST", f"{emulator.table}/$batch", headers, body, service="table")
    assert list(two.list_entities()) == []


def test_entity_operations_on_an_invalid_table_name_are_400(emulator):
    """Defect 5: an entity operation on a name no table can have answered 404 TableNotFound;
    Azure answers 400 InvalidResourceName, from which the SDK tells the user the naming rule."""
    for bad in ("1table", "my_table", "ab"):
        r = emulator.raw("POST", f"{emulator.table}/{bad}", {"Content-Type": "application/json", "Accept": "application/json"},
                         json.dumps({"PartitionKey": "p", "RowKey": "r"}).encode(), service="table")
        assert r.status_code == 400 and r.headers.get("x-ms-error-code") == "InvalidResourceName", (bad, r.text)
    with pytest.raises(ValueError) as named:
        TableClient(emulator.table, "my_table", credential=CREDENTIAL).create_entity({"PartitionKey": "p", "RowKey": "r"})
    assert "Storage table names must be alphanumeric" in str(named.value)


def test_put_block_answers_and_checks_crc64(emulator, name):
    """Defect 11: `x-ms-content-crc64` was missing from Put Block (and Put Block From URL). It
    is Azure's CRC64 (CRC-64/NVME) of the body; a request's own that does not match is 400,
    nothing staged."""
    import base64
    import struct
    from azure.storage.blob import BlobServiceClient
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    blob = container.get_blob_client("b")
    answer = blob.stage_block("MDA=", b"123456789")
    assert answer["content_crc64"] == struct.pack("<Q", 0xAE8B14860A799888)
    url = f"{emulator.blob}/{name}/b?comp=block&blockid=MDE%3D"
    wrong = base64.b64encode(struct.pack("<Q", 1)).decode()
    r = emulator.raw("PUT", url, {"x-ms-content-crc64": wrong}, b"123456789")
    assert r.status_code == 400 and r.headers.get("x-ms-error-code") == "Crc64Mismatch", r.text
    assert [b.id for b in blob.get_block_list("uncommitted")[1]] == ["MDA="]


def test_uncommitted_blobs_are_listed_when_asked(emulator, name):
    """Defect 10: `include=uncommittedblobs` was ignored; a blob with only staged blocks is listed."""
    from azure.storage.blob import BlobServiceClient
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    container.get_blob_client("a").stage_block("MDA=", b"x")
    container.upload_blob("b", b"y")
    assert [b.name for b in container.list_blobs()] == ["b"]
    assert [b.name for b in container.list_blobs(include=["uncommittedblobs"])] == ["a", "b"]
