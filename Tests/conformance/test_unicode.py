"""Names in every Unicode form (issue 13, item 3). Azure compares names, keys and values by
their code units: NFC "Café" (U+00E9) and NFD "Cafe\u0301" are different property names,
RowKeys, blob names and string values. Swift's String `==` and hashing treat them as equal,
so each path that matches a name is driven here with both forms, by the official SDKs and by
azseed's export, import and verify."""
import unicodedata

import pytest
from azure.data.tables import TableServiceClient
from azure.storage.blob import BlobServiceClient, ContentSettings

from conftest import run
from test_snapshots import two  # noqa: F401  (the fixture: two in-memory emulators)

NFC = unicodedata.normalize("NFC", "Café")
NFD = unicodedata.normalize("NFD", "Café")
assert NFC != NFD and unicodedata.normalize("NFC", NFD) == NFC
# Kelvin sign: canonically equivalent to "K", so a name with it is "PartitionKey" to Swift's ==.
KELVIN = "Partition\u212aey"


def tables(emulator):
    return TableServiceClient.from_connection_string(emulator.connection_string)


def blobs(emulator):
    return BlobServiceClient.from_connection_string(emulator.connection_string)


def test_two_property_names_that_differ_only_by_normalisation_are_two_properties(emulator, name):
    table = tables(emulator).create_table(name)
    table.create_entity({"PartitionKey": "p", "RowKey": "r", NFC: "composed", NFD: "decomposed", KELVIN: "kelvin"})
    got = table.get_entity("p", "r")
    assert got[NFC] == "composed" and got[NFD] == "decomposed" and got[KELVIN] == "kelvin"
    assert got["PartitionKey"] == "p"
    # Merge touches one of them only.
    table.update_entity({"PartitionKey": "p", "RowKey": "r", NFD: "merged"}, mode="merge")
    got = table.get_entity("p", "r")
    assert got[NFC] == "composed" and got[NFD] == "merged"


def test_filters_compare_keys_and_values_by_code_units(emulator, name):
    table = tables(emulator).create_table(name)
    table.create_entity({"PartitionKey": "p", "RowKey": NFC, "V": NFC, NFC: 1})
    table.create_entity({"PartitionKey": "p", "RowKey": NFD, "V": NFD, NFD: 2})
    rows = lambda f: sorted(e["RowKey"] for e in table.query_entities(f))
    assert rows(f"RowKey eq '{NFD}'") == [NFD]
    assert rows(f"RowKey ne '{NFD}'") == [NFC]
    assert rows(f"V eq '{NFC}'") == [NFC]
    assert rows(f"{NFD} eq 2") == [NFD]
    assert rows(f"{NFC} eq 2") == []
    assert rows(f"{KELVIN} eq 'p'") == []  # a property of that name, not PartitionKey
    assert sorted(e["RowKey"] for e in table.list_entities()) == sorted([NFC, NFD])
    # A batch may hold both: they are two entities, not one changed twice.
    table.submit_transaction([("upsert", {"PartitionKey": "p", "RowKey": NFC, "V": "b1"}),
                              ("upsert", {"PartitionKey": "p", "RowKey": NFD, "V": "b2"})])
    assert {e["RowKey"]: e["V"] for e in table.list_entities()} == {NFC: "b1", NFD: "b2"}


def test_blob_names_that_differ_only_by_normalisation_are_two_blobs(emulator, name):
    container = blobs(emulator).create_container(name)
    container.upload_blob(f"{NFC}.txt", b"composed")
    container.upload_blob(f"{NFD}.txt", b"decomposed")
    assert sorted(b.name for b in container.list_blobs()) == sorted([f"{NFC}.txt", f"{NFD}.txt"])
    assert container.download_blob(f"{NFC}.txt").readall() == b"composed"
    assert container.download_blob(f"{NFD}.txt").readall() == b"decomposed"


def seed_both_forms(account):
    table = tables(account).create_table("events")
    table.create_entity({"PartitionKey": "p", "RowKey": NFC, NFC: "composed", NFD: "decomposed"})
    table.create_entity({"PartitionKey": "p", "RowKey": NFD, "V": NFD})
    table.create_entity({"PartitionKey": NFD, "RowKey": "r", "V": NFC})
    container = blobs(account).create_container("speakers")
    settings = ContentSettings(content_type="text/plain")
    container.upload_blob(f"{NFC}.txt", b"composed", content_settings=settings)
    container.upload_blob(f"{NFD}.txt", b"decomposed", content_settings=settings)


def held(account):
    t = tables(account).get_table_client("events")
    c = blobs(account).get_container_client("speakers")
    return (sorted((e["PartitionKey"], e["RowKey"], sorted((k, v) for k, v in e.items())) for e in t.list_entities()),
            sorted((b.name, c.download_blob(b.name).readall()) for b in c.list_blobs()))


def test_export_import_verify_keep_both_forms(azseed, two, tmp_path):
    source, target = two
    seed_both_forms(source)
    snap = tmp_path / "snap"
    done = run(azseed, "export", "--connection-string", source.connection_string, "--out", str(snap),
               "--container", "speakers", "--table", "events")
    assert done.returncode == 0, done.stderr
    done = run(azseed, "import", str(snap), "--connection-string", target.connection_string)
    assert done.returncode == 0, done.stderr
    assert held(target) == held(source)
    assert len(held(target)[0]) == 3 and len(held(target)[1]) == 2
    # A second import finds nothing to do (not "1 updated" forever).
    again = run(azseed, "import", str(snap), "--connection-string", target.connection_string, "--dry-run", "--detailed-exitcode")
    assert again.returncode == 0, again.stdout + again.stderr
    # The NFC entity removed: the dry run must see it missing, not call the NFD one a match.
    tables(target).get_table_client("events").delete_entity("p", NFC)
    drift = run(azseed, "import", str(snap), "--connection-string", target.connection_string, "--dry-run", "--detailed-exitcode")
    assert drift.returncode == 2, drift.stdout + drift.stderr
    assert "1 to create" in drift.stdout
    # Likewise a blob.
    run(azseed, "import", str(snap), "--connection-string", target.connection_string)
    blobs(target).get_container_client("speakers").delete_blob(f"{NFD}.txt")
    drift = run(azseed, "import", str(snap), "--connection-string", target.connection_string, "--dry-run", "--detailed-exitcode")
    assert drift.returncode == 2 and "1 to create" in drift.stdout, drift.stdout + drift.stderr
    done = run(azseed, "import", str(snap), "--connection-string", target.connection_string)
    assert done.returncode == 0, done.stderr
    assert held(target) == held(source)
