"""Snapshots end to end: `azseed export` and `azseed import` between two emulators, with
entities of every EDM type written and read back by the official Python SDK."""
import json
import os
import subprocess
import uuid
from datetime import datetime, timezone

import pytest
from azure.data.tables import EdmType, EntityProperty, TableServiceClient
from azure.storage.blob import BlobServiceClient, ContentSettings

from conftest import KEY, ROOT, start_emulator, stop_emulator
from test_seeding import NOW, one_error, run


@pytest.fixture
def two(azseed):
    source, target = start_emulator(azseed, "--in-memory"), start_emulator(azseed, "--in-memory")
    yield source, target
    stop_emulator(source)
    stop_emulator(target)


EVERY_TYPE = {
    "PartitionKey": "types", "RowKey": "all",
    "Text": "naïve ☃ 'quoted'",
    "Int32": EntityProperty(-2147483648, EdmType.INT32),
    "Int64": EntityProperty(9223372036854775807, EdmType.INT64),
    "Double": EntityProperty(2.0, EdmType.DOUBLE),
    "Fraction": 0.1,
    "Flag": True,
    "When": datetime(2026, 11, 21, 9, 30, 15, 123456, tzinfo=timezone.utc),
    "Id": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "Bytes": b"\x00\x01\xfe\xff",
}


def seed_source(account):
    tables = TableServiceClient.from_connection_string(account.connection_string)
    table = tables.create_table("events")
    table.create_entity(EVERY_TYPE)
    for i in range(250):
        table.create_entity({"PartitionKey": f"p{i % 3}", "RowKey": f"r{i:04d}", "N": i})
    blobs = BlobServiceClient.from_connection_string(account.connection_string)
    container = blobs.create_container("speakers", public_access="container")
    container.upload_blob("a.jpg", b"\xff\xd8\xff jpeg-ish", content_settings=ContentSettings(content_type="image/jpeg"))
    container.upload_blob("nested/notes.txt", b"hello", content_settings=ContentSettings(content_type="text/plain"))


def files(folder):
    out = {}
    for base, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(base, name)
            out[os.path.relpath(path, folder)] = open(path, "rb").read()
    return out


def test_round_trip_is_exact_between_two_accounts(azseed, two, tmp_path):
    source, target = two
    seed_source(source)
    first, second = tmp_path / "first", tmp_path / "second"
    exported = run(azseed, "export", "--connection-string", source.connection_string, "--out", str(first))
    assert exported.returncode == 0, exported.stderr
    assert "2 blobs" in exported.stdout and "251 entities of events" in exported.stdout
    manifest = json.loads((first / "manifest.json").read_text())
    assert KEY not in (first / "manifest.json").read_text()
    assert manifest["source"]["exporter"] == "azseed export" and manifest["source"]["blobEndpoint"] == source.blob
    assert manifest["containers"][0]["access"] == "container"
    assert {b["name"]: b["contentType"] for b in manifest["containers"][0]["blobs"]} == {"a.jpg": "image/jpeg", "nested/notes.txt": "text/plain"}

    imported = run(azseed, "import", str(first), "--connection-string", target.connection_string)
    assert imported.returncode == 0, imported.stderr
    assert "Apply complete: 255 created" in imported.stdout  # container, 2 blobs, table, 251 entities

    # Read back through the SDK: every type exactly as written.
    got = TableServiceClient.from_connection_string(target.connection_string).get_table_client("events").get_entity("types", "all")
    assert got["Text"] == EVERY_TYPE["Text"]
    assert got["Int32"] == -2147483648
    assert got["Int64"].value == 9223372036854775807 and got["Int64"].edm_type == EdmType.INT64
    assert got["Double"] == 2.0 and isinstance(got["Double"], float)
    assert got["Fraction"] == 0.1 and got["Flag"] is True
    assert got["When"] == EVERY_TYPE["When"]
    assert got["Id"] == EVERY_TYPE["Id"]
    assert got["Bytes"] == EVERY_TYPE["Bytes"]
    anonymous = BlobServiceClient(account_url=target.blob).get_blob_client("speakers", "nested/notes.txt")
    assert anonymous.download_blob().readall() == b"hello"
    assert anonymous.get_blob_properties().content_settings.content_type == "text/plain"

    again = run(azseed, "export", "--connection-string", target.connection_string, "--out", str(second))
    assert again.returncode == 0, again.stderr
    first_files, second_files = files(first), files(second)
    first_files.pop("manifest.json"), second_files.pop("manifest.json")
    assert first_files == second_files  # tables/ and blobs/ byte for byte

    replan = run(azseed, "import", str(first), "--connection-string", target.connection_string, "--dry-run", "--detailed-exitcode")
    assert replan.returncode == 0 and "No changes" in replan.stdout


def test_a_generated_fixture_imports_like_any_snapshot(azseed, two, tmp_path):
    _, target = two
    fixture = tmp_path / "fixture"
    assert run(azseed, "generate", "--out", str(fixture), *NOW, "--blob-endpoint", target.blob).returncode == 0
    assert run(azseed, "import", str(fixture), "--connection-string", target.connection_string).returncode == 0
    # The same data applied from the dataset: nothing to do.
    assert run(azseed, "verify", "--connection-string", target.connection_string, *NOW).returncode == 0
    exported = tmp_path / "exported"
    assert run(azseed, "export", "--connection-string", target.connection_string, "--out", str(exported)).returncode == 0
    assert files(exported / "tables") == files(fixture / "tables") and files(exported / "blobs") == files(fixture / "blobs")


def test_import_prunes_only_inside_the_snapshots_partitions(azseed, two, tmp_path):
    source, target = two
    seed_source(source)
    snap = tmp_path / "snap"
    assert run(azseed, "export", "--connection-string", source.connection_string, "--out", str(snap)).returncode == 0
    assert run(azseed, "import", str(snap), "--connection-string", target.connection_string).returncode == 0
    table = TableServiceClient.from_connection_string(target.connection_string).get_table_client("events")
    table.create_entity({"PartitionKey": "p1", "RowKey": "stray"})
    table.create_entity({"PartitionKey": "elsewhere", "RowKey": "kept"})
    plan = run(azseed, "import", str(snap), "--connection-string", target.connection_string, "--dry-run", "--prune", "--output", "json")
    actions = [a for a in json.loads(plan.stdout)["actions"] if a["action"] == "delete"]
    assert [(a["partitionKey"], a["rowKey"]) for a in actions] == [("p1", "stray")]
    assert run(azseed, "import", str(snap), "--connection-string", target.connection_string, "--prune").returncode == 0
    assert table.get_entity("elsewhere", "kept")["RowKey"] == "kept"


@pytest.mark.parametrize("damage, words", [
    (lambda s: (s / "blobs" / "speakers" / "a.jpg").write_bytes(b"changed"), "a.jpg: 7 bytes where the manifest records"),
    (lambda s: (s / "blobs" / "speakers" / "a.jpg").write_bytes(b"\xff\xd8\xff jpeg-iSH"), "a.jpg: its MD5 differs"),
    (lambda s: (s / "blobs" / "speakers" / "extra.bin").write_bytes(b"x"), "extra.bin: not in the manifest"),
    (lambda s: (s / "blobs" / "speakers" / "nested" / "notes.txt").unlink(), "notes.txt: missing from the snapshot"),
    (lambda s: (s / "tables" / "events.jsonl").write_text((s / "tables" / "events.jsonl").read_text().replace('"N":5', '"N":6')), "events.jsonl: its SHA-256 differs"),
    (lambda s: truncate(s / "tables" / "events.jsonl"), "events.jsonl"),
    (lambda s: (s / "manifest.json").write_text("{"), "manifest.json"),
    (lambda s: (s / "manifest.json").unlink(), "no manifest.json"),
])
def test_a_tampered_snapshot_is_refused_naming_the_file(azseed, two, tmp_path, damage, words):
    source, target = two
    seed_source(source)
    snap = tmp_path / "snap"
    assert run(azseed, "export", "--connection-string", source.connection_string, "--out", str(snap)).returncode == 0
    damage(snap)
    done = run(azseed, "import", str(snap), "--connection-string", target.connection_string)
    assert done.returncode == 1
    assert words in one_error(done.stderr)
    assert [t.name for t in TableServiceClient.from_connection_string(target.connection_string).list_tables()] == []
    assert list(BlobServiceClient.from_connection_string(target.connection_string).list_containers()) == []


def truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def test_export_errors_are_one_line(azseed, two, tmp_path):
    source, _ = two
    missing = run(azseed, "export", "--connection-string", source.connection_string, "--out", str(tmp_path / "x"))
    assert missing.returncode == 1 and "container 'speakers' does not exist" in one_error(missing.stderr)
    assert not (tmp_path / "x").exists()
    seed_source(source)
    wrong = run(azseed, "export", "--connection-string", source.connection_string, "--out", str(tmp_path / "y"), "--table", "nosuchtable")
    assert wrong.returncode == 1 and "table 'nosuchtable' does not exist" in one_error(wrong.stderr)
    assert not (tmp_path / "y").exists()
    bad = run(azseed, "export", "--out", str(tmp_path / "z"), "--container", "Bad_Name")
    assert bad.returncode == 64 and "--container" in one_error(bad.stderr)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    taken = run(azseed, "export", "--connection-string", source.connection_string, "--out", str(tmp_path / "full"))
    assert taken.returncode == 64 and "--force" in one_error(taken.stderr)


def test_blob_names_that_cannot_be_paths_export_and_import_exactly(azseed, two, tmp_path):
    """`fd` and `fd/child` are both valid blob names, and a name segment may be longer than a
    file name: export once failed with a raw NSCocoaErrorDomain error. Such blobs are kept
    under encoded file names, the manifest records the real names, and they round-trip."""
    source, target = two
    long_segment = "s" * 300 + ".txt"
    names = {"fd": b"the file", "fd/child": b"the child", "fd/child/grandchild": b"deeper",
             f"dir/{long_segment}": b"long", "plain.txt": b"plain"}
    container = BlobServiceClient.from_connection_string(source.connection_string).create_container("speakers")
    for name, body in names.items():
        container.upload_blob(name, body, content_settings=ContentSettings(content_type="text/plain"))
    TableServiceClient.from_connection_string(source.connection_string).create_table("events")
    snap = tmp_path / "snap"
    done = run(azseed, "export", "--connection-string", source.connection_string, "--out", str(snap),
               "--container", "speakers", "--table", "events")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((snap / "manifest.json").read_text())
    recorded = {b["name"]: b.get("file") for b in manifest["containers"][0]["blobs"]}
    assert set(recorded) == set(names)
    assert recorded["plain.txt"] is None and recorded["fd"] is None
    assert recorded["fd/child"].startswith("encoded/speakers/") and recorded[f"dir/{long_segment}"].startswith("encoded/speakers/")
    done = run(azseed, "import", str(snap), "--connection-string", target.connection_string)
    assert done.returncode == 0, done.stderr
    copied = BlobServiceClient.from_connection_string(target.connection_string).get_container_client("speakers")
    assert {b.name: copied.download_blob(b.name).readall() for b in copied.list_blobs()} == names
    again = run(azseed, "import", str(snap), "--connection-string", target.connection_string, "--dry-run", "--detailed-exitcode")
    assert again.returncode == 0, again.stdout
    second = tmp_path / "second"
    assert run(azseed, "export", "--connection-string", target.connection_string, "--out", str(second),
               "--container", "speakers", "--table", "events").returncode == 0
    first_files = {k: v for k, v in files(snap).items() if k != "manifest.json"}
    assert first_files == {k: v for k, v in files(second).items() if k != "manifest.json"}
    # A file the manifest does not list, under encoded/, is refused like any stray file.
    (snap / "encoded" / "speakers" / "stray").write_bytes(b"x")
    refused = run(azseed, "import", str(snap), "--connection-string", target.connection_string)
    assert refused.returncode == 1 and "not in the manifest" in refused.stderr


# --- Issue 29, item 3: snapshots carry what a blob has besides its bytes -------------------

def test_export_and_import_keep_blob_metadata_and_content_headers(azseed, two, tmp_path):
    source, target = two
    blobs = BlobServiceClient.from_connection_string(source.connection_string)
    container = blobs.create_container("docs", metadata={"team": "data", "tier": "gold"})
    settings = ContentSettings(content_type="text/csv", content_encoding="x-raw", content_language="de-CH",
                               content_disposition='attachment; filename="a.csv"', cache_control="max-age=60")
    container.upload_blob("a.csv", b"x,y\n1,2\n", content_settings=settings, metadata={"author": "ops", "run": "3"})
    container.upload_blob("plain.txt", b"plain", content_settings=ContentSettings(content_type="text/plain"))
    source_cs, target_cs = ["--connection-string", source.connection_string], ["--connection-string", target.connection_string]
    done = run(azseed, "export", *source_cs, "--container", "docs", "--table", "none1", "--out", str(tmp_path / "snap"))
    assert done.returncode == 1  # no table 'none1': export names what is missing
    TableServiceClient.from_connection_string(source.connection_string).create_table("none1")
    done = run(azseed, "export", *source_cs, "--container", "docs", "--table", "none1", "--out", str(tmp_path / "snap"))
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "snap" / "manifest.json").read_text())
    entry = next(b for b in manifest["containers"][0]["blobs"] if b["name"] == "a.csv")
    assert entry["metadata"] == {"author": "ops", "run": "3"} and entry["cacheControl"] == "max-age=60", entry
    done = run(azseed, "import", str(tmp_path / "snap"), *target_cs)
    assert done.returncode == 0, done.stderr
    copied = BlobServiceClient.from_connection_string(target.connection_string).get_blob_client("docs", "a.csv").get_blob_properties()
    assert copied.metadata == {"author": "ops", "run": "3"}
    cs = copied.content_settings
    assert (cs.content_type, cs.content_encoding, cs.content_language, cs.content_disposition, cs.cache_control) == \
        ("text/csv", "x-raw", "de-CH", 'attachment; filename="a.csv"', "max-age=60")
    again = run(azseed, "import", str(tmp_path / "snap"), *target_cs)
    assert "No changes" in again.stdout, again.stdout
    # The target's metadata changed: the plan says so and import restores it.
    BlobServiceClient.from_connection_string(target.connection_string).get_blob_client("docs", "a.csv").set_blob_metadata({"author": "someone-else"})
    drifted = run(azseed, "import", str(tmp_path / "snap"), *target_cs, "--dry-run")
    assert "metadata differs" in drifted.stdout, drifted.stdout
    assert run(azseed, "import", str(tmp_path / "snap"), *target_cs).returncode == 0
    restored = BlobServiceClient.from_connection_string(target.connection_string).get_blob_client("docs", "a.csv").get_blob_properties()
    assert restored.metadata == {"author": "ops", "run": "3"}
    # The container's metadata too.
    theirs = BlobServiceClient.from_connection_string(target.connection_string).get_container_client("docs")
    assert theirs.get_container_properties().metadata == {"team": "data", "tier": "gold"}
    theirs.set_container_metadata({"team": "other"})
    drifted = run(azseed, "import", str(tmp_path / "snap"), *target_cs, "--dry-run")
    assert "~ container docs: metadata differs" in drifted.stdout, drifted.stdout
    assert run(azseed, "import", str(tmp_path / "snap"), *target_cs).returncode == 0
    assert theirs.get_container_properties().metadata == {"team": "data", "tier": "gold"}


def test_export_import_and_copy_keep_the_access_tier(azseed, two, tmp_path):
    """Issue 29, item 3: a blob's access tier is part of what a snapshot or copy keeps; before,
    a Cool blob came back Hot and the plan said nothing."""
    source, target = two
    blobs = BlobServiceClient.from_connection_string(source.connection_string)
    container = blobs.create_container("archive")
    container.upload_blob("cold.bin", b"rarely read", content_settings=ContentSettings(content_type="application/octet-stream"))
    container.upload_blob("hot.bin", b"read often", content_settings=ContentSettings(content_type="application/octet-stream"))
    container.get_blob_client("cold.bin").set_standard_blob_tier("Cool")
    TableServiceClient.from_connection_string(source.connection_string).create_table("tiers")
    source_cs, target_cs = ["--connection-string", source.connection_string], ["--connection-string", target.connection_string]

    done = run(azseed, "export", *source_cs, "--container", "archive", "--table", "tiers", "--out", str(tmp_path / "snap"))
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "snap" / "manifest.json").read_text())
    tiers = {b["name"]: b.get("accessTier") for b in manifest["containers"][0]["blobs"]}
    assert tiers == {"cold.bin": "Cool", "hot.bin": "Hot"}, tiers

    assert run(azseed, "import", str(tmp_path / "snap"), *target_cs).returncode == 0
    theirs = BlobServiceClient.from_connection_string(target.connection_string).get_container_client("archive")
    assert theirs.get_blob_client("cold.bin").get_blob_properties().blob_tier == "Cool"
    assert "No changes" in run(azseed, "import", str(tmp_path / "snap"), *target_cs).stdout

    # Someone warms the blob: the plan names the tier, and import sets it back without re-uploading.
    theirs.get_blob_client("cold.bin").set_standard_blob_tier("Hot")
    drifted = run(azseed, "import", str(tmp_path / "snap"), *target_cs, "--dry-run")
    assert "~ blob archive/cold.bin (access tier Hot -> Cool)" in drifted.stdout, drifted.stdout
    etag = theirs.get_blob_client("cold.bin").get_blob_properties().etag
    assert run(azseed, "import", str(tmp_path / "snap"), *target_cs).returncode == 0
    after = theirs.get_blob_client("cold.bin").get_blob_properties()
    assert after.blob_tier == "Cool" and after.etag == etag

    # A copy carries it too, and a second copy finds nothing to do.
    theirs.delete_blob("cold.bin")
    copied = run(azseed, "copy", "--from", source.connection_string, *target_cs, "--container", "archive", "--table", "tiers")
    assert copied.returncode == 0, copied.stderr
    assert theirs.get_blob_client("cold.bin").get_blob_properties().blob_tier == "Cool"
    again = run(azseed, "copy", "--from", source.connection_string, *target_cs, "--container", "archive", "--table", "tiers", "--dry-run")
    assert "No changes" in again.stdout, again.stdout
