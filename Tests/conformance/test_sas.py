"""Shared access signatures made by the official SDKs' own generate_*_sas functions, checked by
the emulator as Azure checks them (docs/PROTOCOL.md §11): what a SAS grants works, everything
else is refused with Azure's code, and azseed itself runs on a SAS-only connection string."""
import datetime as dt

import pytest
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableAccessPolicy, TableServiceClient, TableSasPermissions, generate_table_sas
from azure.data.tables import generate_account_sas as generate_table_account_sas
from azure.data.tables import AccountSasPermissions as TableAccountSasPermissions, ResourceTypes as TableResourceTypes
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.storage.blob import (AccessPolicy, AccountSasPermissions, BlobClient, BlobSasPermissions, BlobServiceClient, ContainerClient,
                                ContainerSasPermissions, ResourceTypes, Services, generate_account_sas, generate_blob_sas,
                                generate_container_sas)

from conftest import ACCOUNT, KEY, ROOT, register_secret, run, send, start_emulator, stop_emulator

NOW = ["--now", "2026-11-21", "--from", "2026-01-01", "--to", "2027-01-01"]


def later(hours=1):
    return dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=hours)


def refused(call, code):
    with pytest.raises(HttpResponseError) as e:
        call()
    got = getattr(e.value, "error_code", None) or e.value.response.headers.get("x-ms-error-code")
    assert e.value.status_code == 403 and got == code, (e.value.status_code, got, str(e.value)[:300])


@pytest.fixture
def seeded(emulator, name):
    service = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0)
    container = service.create_container(name)
    container.upload_blob("a.txt", b"alpha")
    container.upload_blob("dir/b c.txt", b"bravo")
    return name


def test_an_account_sas_grants_its_resource_types_and_permissions(emulator, seeded):
    sas = register_secret(generate_account_sas(ACCOUNT, KEY, ResourceTypes(container=True, object=True),
                                               AccountSasPermissions(read=True, write=True, list=True, create=True), later()))
    service = BlobServiceClient(emulator.blob, credential=sas, retry_total=0)
    container = service.get_container_client(seeded)
    assert sorted(b.name for b in container.list_blobs()) == ["a.txt", "dir/b c.txt"]
    assert container.download_blob("dir/b c.txt").readall() == b"bravo"
    container.upload_blob("new.txt", b"new")
    service.create_container(seeded + "x")
    refused(lambda: container.delete_blob("a.txt"), "AuthorizationPermissionMismatch")
    refused(lambda: list(service.list_containers()), "AuthorizationResourceTypeMismatch")  # srt lacks s
    refused(lambda: container.set_container_access_policy({}), "AuthorizationFailure")
    # A Tables-only account SAS does not open the Blob service.
    table_sas = generate_table_account_sas(AzureNamedKeyCredential(ACCOUNT, KEY), resource_types=TableResourceTypes(object=True),
                                           permission=TableAccountSasPermissions(read=True), expiry=later())
    refused(lambda: ContainerClient(emulator.blob, seeded, credential=register_secret(table_sas), retry_total=0).download_blob("a.txt").readall(),
            "AuthorizationServiceMismatch")


def test_a_container_sas_reaches_its_container_only(emulator, seeded):
    sas = register_secret(generate_container_sas(ACCOUNT, seeded, account_key=KEY, permission=ContainerSasPermissions(read=True, list=True, write=True),
                                                 expiry=later()))
    container = ContainerClient(emulator.blob, seeded, credential=sas, retry_total=0)
    assert len(list(container.list_blobs())) == 2
    container.upload_blob("a.txt", b"again", overwrite=True)
    assert container.download_blob("a.txt").readall() == b"again"
    refused(lambda: container.delete_blob("a.txt"), "AuthorizationPermissionMismatch")
    refused(lambda: container.delete_container(), "AuthorizationFailure")
    other = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(seeded + "o")
    refused(lambda: ContainerClient(emulator.blob, other.container_name, credential=sas, retry_total=0).get_blob_client("x").upload_blob(b"x"),
            "AuthenticationFailed")


def test_a_blob_sas_reads_its_blob_and_create_never_overwrites(emulator, seeded):
    sas = register_secret(generate_blob_sas(ACCOUNT, seeded, "dir/b c.txt", account_key=KEY, permission=BlobSasPermissions(read=True), expiry=later()))
    blob = BlobClient(emulator.blob, seeded, "dir/b c.txt", credential=sas, retry_total=0)
    assert blob.download_blob().readall() == b"bravo"
    refused(lambda: blob.upload_blob(b"x", overwrite=True), "AuthorizationPermissionMismatch")
    refused(lambda: BlobClient(emulator.blob, seeded, "a.txt", credential=sas, retry_total=0).download_blob().readall(), "AuthenticationFailed")
    create = register_secret(generate_blob_sas(ACCOUNT, seeded, "fresh.txt", account_key=KEY, permission=BlobSasPermissions(create=True), expiry=later()))
    fresh = BlobClient(emulator.blob, seeded, "fresh.txt", credential=create, retry_total=0)
    fresh.upload_blob(b"first")
    refused(lambda: fresh.upload_blob(b"second", overwrite=True), "AuthorizationPermissionMismatch")


def test_time_window_signature_protocol_and_unsupported_fields(emulator, seeded):
    expired = register_secret(generate_blob_sas(ACCOUNT, seeded, "a.txt", account_key=KEY, permission=BlobSasPermissions(read=True),
                                                start=later(-3), expiry=later(-2)))
    refused(lambda: BlobClient(emulator.blob, seeded, "a.txt", credential=expired, retry_total=0).download_blob().readall(), "AuthenticationFailed")
    future = register_secret(generate_blob_sas(ACCOUNT, seeded, "a.txt", account_key=KEY, permission=BlobSasPermissions(read=True),
                                               start=later(2), expiry=later(3)))
    refused(lambda: BlobClient(emulator.blob, seeded, "a.txt", credential=future, retry_total=0).download_blob().readall(), "AuthenticationFailed")
    good = generate_blob_sas(ACCOUNT, seeded, "a.txt", account_key=KEY, permission=BlobSasPermissions(read=True), expiry=later())
    tampered = register_secret(good.replace("sp=r", "sp=rw"))
    refused(lambda: BlobClient(emulator.blob, seeded, "a.txt", credential=tampered, retry_total=0).upload_blob(b"x", overwrite=True), "AuthenticationFailed")
    https_only = register_secret(generate_blob_sas(ACCOUNT, seeded, "a.txt", account_key=KEY, permission=BlobSasPermissions(read=True),
                                                   expiry=later(), protocol="https"))
    refused(lambda: BlobClient(emulator.blob, seeded, "a.txt", credential=https_only, retry_total=0).download_blob().readall(),
            "AuthorizationProtocolMismatch")
    # `sip`: the caller's address (127.0.0.1 here) must be the one or in the range the SAS names.
    for ip in ("127.0.0.1", "127.0.0.0-127.0.0.255"):
        allowed = register_secret(generate_blob_sas(ACCOUNT, seeded, "a.txt", account_key=KEY, permission=BlobSasPermissions(read=True),
                                                    expiry=later(), ip=ip))
        assert BlobClient(emulator.blob, seeded, "a.txt", credential=allowed, retry_total=0).download_blob().readall() == b"alpha"
    elsewhere = register_secret(generate_blob_sas(ACCOUNT, seeded, "a.txt", account_key=KEY, permission=BlobSasPermissions(read=True),
                                                  expiry=later(), ip="10.1.2.3"))
    refused(lambda: BlobClient(emulator.blob, seeded, "a.txt", credential=elsewhere, retry_total=0).download_blob().readall(),
            "AuthorizationSourceIPMismatch")
    # An encryption scope in a SAS (ses) is the scope of writes through it: reads are unaffected; a
    # write must be made with a scope of the account's, and this emulator was given none.
    scoped = register_secret(generate_blob_sas(ACCOUNT, seeded, "a.txt", account_key=KEY, permission=BlobSasPermissions(read=True, write=True),
                                               expiry=later(), encryption_scope="scope1"))
    assert send("GET", f"{emulator.blob}/{seeded}/a.txt?{scoped}", {"x-ms-version": "2026-10-06"}).content == b"alpha"
    r = send("PUT", f"{emulator.blob}/{seeded}/a.txt?{scoped}", {"x-ms-version": "2026-10-06", "x-ms-blob-type": "BlockBlob",
                                                                 "Content-Length": "1"}, b"x")
    assert r.status_code == 409 and r.headers.get("x-ms-error-code") == "EncryptionScopeNotFound", r.text
    assert send("GET", f"{emulator.blob}/{seeded}/a.txt?{scoped}", {"x-ms-version": "2026-10-06"}).content == b"alpha"
    # Still never accepted while not implemented: a SAS for a delegated user (sduoid) would need
    # that user's token beside it.
    r = send("GET", f"{emulator.blob}/{seeded}/a.txt?{scoped}&sduoid=00000000-0000-0000-0000-000000000000", {"x-ms-version": "2026-10-06"})
    assert r.status_code == 403 and r.headers.get("x-ms-error-code") == "AuthenticationFailed"
    assert "field 'sduoid' is not supported" in r.text.replace("&#39;", "'").replace("&apos;", "'")
    assert KEY not in r.text


def test_stored_access_policies_grant_and_revoke(emulator, seeded):
    owner = ContainerClient.from_connection_string(emulator.connection_string, seeded)
    owner.set_container_access_policy({"readers": AccessPolicy(permission=ContainerSasPermissions(read=True, list=True), expiry=later(), start=later(-1))})
    sas = register_secret(generate_blob_sas(ACCOUNT, seeded, "a.txt", account_key=KEY, policy_id="readers"))
    blob = BlobClient(emulator.blob, seeded, "a.txt", credential=sas, retry_total=0)
    assert blob.download_blob().readall() == b"alpha"
    refused(lambda: blob.upload_blob(b"x", overwrite=True), "AuthorizationPermissionMismatch")
    # The same field in the SAS and in the policy is refused (400).
    both = register_secret(generate_blob_sas(ACCOUNT, seeded, "a.txt", account_key=KEY, policy_id="readers", permission=BlobSasPermissions(read=True)))
    with pytest.raises(HttpResponseError) as e:
        BlobClient(emulator.blob, seeded, "a.txt", credential=both, retry_total=0).download_blob().readall()
    assert e.value.status_code == 400
    # Deleting the policy revokes every SAS that names it.
    owner.set_container_access_policy({})
    refused(lambda: blob.download_blob().readall(), "AuthenticationFailed")
    # A policy that has expired.
    owner.set_container_access_policy({"old": AccessPolicy(permission=ContainerSasPermissions(read=True), expiry=later(-1), start=later(-2))})
    old = register_secret(generate_blob_sas(ACCOUNT, seeded, "a.txt", account_key=KEY, policy_id="old"))
    refused(lambda: BlobClient(emulator.blob, seeded, "a.txt", credential=old, retry_total=0).download_blob().readall(), "AuthenticationFailed")


def test_table_sas_account_and_service(emulator, name):
    TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
    credential = AzureNamedKeyCredential(ACCOUNT, KEY)
    account_sas = register_secret(generate_table_account_sas(credential, resource_types=TableResourceTypes(container=True, object=True),
                                                             permission=TableAccountSasPermissions(read=True, write=True, add=True, update=True, list=True),
                                                             expiry=later()))
    service = TableServiceClient(emulator.table.rsplit("/", 1)[0] + f"/{ACCOUNT}", credential=AzureSasCredential(account_sas), retry_total=0)
    table = service.get_table_client(name)
    table.create_entity({"PartitionKey": "p", "RowKey": "1", "N": 1})
    table.upsert_entity({"PartitionKey": "p", "RowKey": "2", "N": 2})
    table.submit_transaction([("upsert", {"PartitionKey": "p", "RowKey": "3"}), ("create", {"PartitionKey": "p", "RowKey": "4"})])
    assert sorted(e["RowKey"] for e in table.list_entities()) == ["1", "2", "3", "4"]
    refused(lambda: table.delete_entity("p", "1"), "AuthorizationPermissionMismatch")
    refused(lambda: table.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "5"}), ("delete", {"PartitionKey": "p", "RowKey": "1"})]),
            "AuthorizationPermissionMismatch")
    assert sorted(e["RowKey"] for e in table.list_entities()) == ["1", "2", "3", "4"]

    read_only = register_secret(generate_table_sas(credential, name, permission=TableSasPermissions(read=True), expiry=later()))
    reader = TableServiceClient(emulator.table.rsplit("/", 1)[0] + f"/{ACCOUNT}", credential=AzureSasCredential(read_only), retry_total=0).get_table_client(name)
    assert len(list(reader.list_entities())) == 4
    refused(lambda: reader.create_entity({"PartitionKey": "p", "RowKey": "9"}), "AuthorizationPermissionMismatch")
    refused(lambda: TableServiceClient(emulator.table.rsplit("/", 1)[0] + f"/{ACCOUNT}", credential=AzureSasCredential(read_only),
                                       retry_total=0).create_table(name + "x"), "AuthorizationFailure")
    refused(lambda: table.set_table_access_policy({}), "AuthorizationFailure")  # an ACL is the key holder's
    owner = TableServiceClient.from_connection_string(emulator.connection_string).get_table_client(name)
    owner.set_table_access_policy({"adders": TableAccessPolicy(permission="a", expiry=later(), start=later(-1))})
    adders = register_secret(generate_table_sas(credential, name, policy_id="adders"))
    adder = TableServiceClient(emulator.table.rsplit("/", 1)[0] + f"/{ACCOUNT}", credential=AzureSasCredential(adders), retry_total=0).get_table_client(name)
    adder.create_entity({"PartitionKey": "p", "RowKey": "5"})
    refused(lambda: list(adder.list_entities()), "AuthorizationPermissionMismatch")


def test_a_table_sas_key_range_limits_what_it_reaches(emulator, name):
    owner = TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
    for pk, rk in [("a", "1"), ("b", "1"), ("b", "5"), ("b", "9"), ("c", "1"), ("d", "1")]:
        owner.create_entity({"PartitionKey": pk, "RowKey": rk})
    credential = AzureNamedKeyCredential(ACCOUNT, KEY)
    endpoint = emulator.table.rsplit("/", 1)[0] + f"/{ACCOUNT}"
    # From (b, 5) to (c, *), inclusive, with read, add and update.
    ranged = register_secret(generate_table_sas(credential, name, permission=TableSasPermissions(read=True, add=True, update=True),
                                                expiry=later(), start_pk="b", start_rk="5", end_pk="c"))
    table = TableServiceClient(endpoint, credential=AzureSasCredential(ranged), retry_total=0).get_table_client(name)
    assert [(e["PartitionKey"], e["RowKey"]) for e in table.list_entities()] == [("b", "5"), ("b", "9"), ("c", "1")]
    assert [e["RowKey"] for e in table.query_entities("PartitionKey eq 'b'")] == ["5", "9"]
    assert table.get_entity("b", "9")["RowKey"] == "9"
    table.create_entity({"PartitionKey": "c", "RowKey": "2"})
    table.upsert_entity({"PartitionKey": "b", "RowKey": "7", "N": 1})
    refused(lambda: table.get_entity("b", "1"), "AuthorizationFailure")
    refused(lambda: table.create_entity({"PartitionKey": "d", "RowKey": "2"}), "AuthorizationFailure")
    refused(lambda: table.upsert_entity({"PartitionKey": "a", "RowKey": "1", "N": 2}), "AuthorizationFailure")
    refused(lambda: table.submit_transaction([("upsert", {"PartitionKey": "b", "RowKey": "6"}), ("upsert", {"PartitionKey": "b", "RowKey": "2"})]),
            "AuthorizationFailure")
    everything = sorted((e["PartitionKey"], e["RowKey"]) for e in owner.list_entities())
    assert everything == [("a", "1"), ("b", "1"), ("b", "5"), ("b", "7"), ("b", "9"), ("c", "1"), ("c", "2"), ("d", "1")]
    # srk without spk is not a range: refused as not well formed, nothing granted.
    broken = ranged.replace("spk=b&", "")
    r = send("GET", f"{emulator.table}/{name}()?{broken}", {"x-ms-version": "2019-02-02", "Accept": "application/json"})
    assert r.status_code == 403 and r.headers.get("x-ms-error-code") == "AuthenticationFailed"


def test_azseed_runs_on_a_sas_only_connection_string(azseed, tmp_path):
    emulator = start_emulator(azseed, "--in-memory")
    try:
        sas_only_run(azseed, emulator, tmp_path)
    finally:
        stop_emulator(emulator)


def sas_only_run(azseed, emulator, tmp_path):
    sas = register_secret(generate_account_sas(ACCOUNT, KEY, ResourceTypes(container=True, object=True),
                                               AccountSasPermissions(read=True, write=True, list=True, create=True, add=True, update=True, delete=True),
                                               later(), services="bt"))
    cs = f"BlobEndpoint={emulator.blob};TableEndpoint={emulator.table};SharedAccessSignature={sas}"
    args = ["--connection-string", cs, *NOW, "--events", "30", "--dataset", str(ROOT / "Seeds" / "speakeasy")]
    applied = run(azseed, "apply", *args)
    assert applied.returncode == 0, applied.stderr
    assert run(azseed, "verify", *args).returncode == 0
    again = run(azseed, "plan", *args)
    assert again.returncode == 0 and "No changes" in again.stdout, again.stdout + again.stderr
    exported = run(azseed, "export", "--connection-string", cs, "--container", "speakers", "--table", "events", "--out", str(tmp_path / "snap"))
    assert exported.returncode == 0, exported.stderr
    imported = run(azseed, "import", str(tmp_path / "snap"), "--connection-string", cs)
    assert imported.returncode == 0 and "No changes" in imported.stdout, imported.stdout + imported.stderr
    # Without 'd' a reset is refused with the permission named, nothing else written.
    narrow = register_secret(generate_account_sas(ACCOUNT, KEY, ResourceTypes(container=True, object=True),
                                                  AccountSasPermissions(read=True, list=True), later(), services="bt"))
    refused_run = run(azseed, "reset", "--connection-string", f"BlobEndpoint={emulator.blob};TableEndpoint={emulator.table};SharedAccessSignature={narrow}",
                      *NOW, "--events", "30", "--dataset", str(ROOT / "Seeds" / "speakeasy"))
    assert refused_run.returncode == 1
    assert "AuthorizationPermissionMismatch" in refused_run.stderr and "'d' (delete)" in refused_run.stderr, refused_run.stderr
    assert sas.split("sig=")[1] not in refused_run.stderr + applied.stdout + applied.stderr


def test_az_style_options_carry_the_sas(azseed):
    emulator = start_emulator(azseed, "--in-memory")
    try:
        sas = register_secret(generate_account_sas(ACCOUNT, KEY, ResourceTypes(container=True, object=True),
                                                   AccountSasPermissions(read=True, write=True, list=True, create=True, add=True, update=True),
                                                   later(), services="bt"))
        dataset = ["--dataset", str(ROOT / "Seeds" / "speakeasy"), *NOW]
        applied = run(azseed, "apply", "--blob-endpoint", emulator.blob, "--table-endpoint", emulator.table, "--sas-token", "?" + sas, *dataset)
        assert applied.returncode == 0, applied.stderr
        # az also takes the SAS as the endpoints' query.
        planned = run(azseed, "plan", "--blob-endpoint", f"{emulator.blob}?{sas}", "--table-endpoint", f"{emulator.table}?{sas}", *dataset)
        assert planned.returncode == 0 and "No changes" in planned.stdout, planned.stderr
        other = register_secret(generate_account_sas(ACCOUNT, KEY, ResourceTypes(object=True), AccountSasPermissions(read=True), later(), services="bt"))
        bad = [
            (["--blob-endpoint", f"{emulator.blob}?{sas}", "--table-endpoint", emulator.table, "--sas-token", other], "different SAS tokens"),
            (["--blob-endpoint", emulator.blob, "--sas-token", sas], "--table-endpoint"),
            (["--account-name", "Not_An_Account", "--sas-token", sas], "--account-name"),
            (["--blob-endpoint", emulator.blob, "--table-endpoint", emulator.table], "neither AccountKey nor SharedAccessSignature"),
            (["--connection-string", emulator.connection_string, "--sas-token", sas], "--connection-string excludes"),
        ]
        for args, says in bad:
            done = run(azseed, "plan", *args, *dataset)
            assert done.returncode == 64 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1, (args, done.stderr)
            assert sas.split("sig=")[1] not in done.stderr and other.split("sig=")[1] not in done.stderr
        # --account-name means the public cloud's endpoints.
        cloud = run(azseed, "plan", "--account-name", "azseedexample", "--sas-token", sas, *dataset, timeout=60)
        assert cloud.returncode == 1 and "https://azseedexample.blob.core.windows.net" in cloud.stderr, cloud.stderr
    finally:
        stop_emulator(emulator)
