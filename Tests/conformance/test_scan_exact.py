"""Issue 50, "exact when asked": an account the official SDKs build — a column of Int32 with
Int64s among them, entities that differ only by RowKey, text that begins with a byte-order
mark, NaN and infinities, a blob with content headers and metadata, an empty blob, a .jpg that
is no JPEG — scanned with --copy-values and generated again gives what `azseed export` gives of
the account, byte for byte: every entity, types included, and every blob's bytes, content
headers, metadata and access tier, and the container's own metadata. A plan of the scanned
dataset against the account finds nothing to do."""
import json

from azure.data.tables import EdmType, EntityProperty, TableServiceClient
from azure.storage.blob import BlobServiceClient, ContentSettings, StandardBlobTier

from conftest import run, start_emulator, stop_emulator

NOW = ["--now", "2026-11-29"]


def build(account):
    tables = TableServiceClient.from_connection_string(account.connection_string)
    table = tables.create_table("mixed")
    for i in range(30):
        entity = {"PartitionKey": "NO", "RowKey": f"r{i:03}", "Seq": i + 1,
                  "Value": EntityProperty(2**40 + i, EdmType.INT64) if i % 7 == 0 else i,
                  "Ratio": float("nan") if i == 3 else float("inf") if i == 4 else i / 3,
                  "Note": "\ufeffbegins with a mark" if i == 5 else f"note {i}"}
        table.create_entity(entity)
    for key in ("a", "b", "c"):  # the same values, told apart by RowKey alone
        table.create_entity({"PartitionKey": "twins", "RowKey": key, "Same": "x"})
    table.create_entity({"PartitionKey": "alone", "RowKey": "only", "When": EntityProperty("2026-01-02T03:04:05.1234567Z", EdmType.DATETIME)})
    blobs = BlobServiceClient.from_connection_string(account.connection_string).create_container("files", metadata={"team": "ops"})
    blobs.upload_blob("report.json", b'{"a": 1}', metadata={"source": "sdk", "owner": "ops"},
                      content_settings=ContentSettings(content_type="application/vnd.custom+json", cache_control="max-age=60",
                                                       content_language="nb", content_disposition="attachment"))
    blobs.upload_blob("empty.bin", b"")
    blobs.upload_blob("photo.jpg", b"not a jpeg at all", content_settings=ContentSettings(content_type="image/jpeg"))
    blobs.upload_blob("cold.txt", b"rarely read", standard_blob_tier=StandardBlobTier.COOL)


def comparable(manifest):
    """The manifest's containers — access, metadata and every blob's entry (its own file aside)."""
    return {c["name"]: (c.get("access"), c.get("metadata"), [{k: v for k, v in b.items() if k != "file"} for b in c["blobs"]])
            for c in manifest["containers"]}


def test_copied_values_come_back_byte_for_byte(azseed, tmp_path):
    account = start_emulator(azseed, "--in-memory")
    try:
        build(account)
        exported = run(azseed, "export", "--connection-string", account.connection_string, "--out", str(tmp_path / "export"),
                       "--container", "files", "--table", "mixed")
        assert exported.returncode == 0, exported.stderr
        scanned = run(azseed, "scan", "--connection-string", account.connection_string, "--out", str(tmp_path / "scanned"), "--copy-values")
        assert scanned.returncode == 0, scanned.stderr
        generated = run(azseed, "generate", "--dataset", str(tmp_path / "scanned"), "--out", str(tmp_path / "again"), *NOW)
        assert generated.returncode == 0, generated.stderr
        assert (tmp_path / "again" / "tables" / "mixed.jsonl").read_bytes() == (tmp_path / "export" / "tables" / "mixed.jsonl").read_bytes()
        ours = json.loads((tmp_path / "again" / "manifest.json").read_text())
        theirs = json.loads((tmp_path / "export" / "manifest.json").read_text())
        assert comparable(ours) == comparable(theirs)
        assert comparable(theirs)["files"][1] == {"team": "ops"}
        assert any(b.get("accessTier") == "Cool" for b in comparable(theirs)["files"][2])
        for name in ("report.json", "empty.bin", "photo.jpg", "cold.txt"):
            assert (tmp_path / "again" / "blobs" / "files" / name).read_bytes() == (tmp_path / "export" / "blobs" / "files" / name).read_bytes()
        # The dataset says what it copied (the mark written as any YAML reader reads it), and a
        # plan of it against the account it came from has nothing to do, metadata included.
        text = (tmp_path / "scanned" / "dataset.yaml").read_text()
        assert 'entities: "entities/mixed/' in text and 'properties: "blobs/files.json"' in text and "!bom" not in text
        plan = run(azseed, "plan", "--dataset", str(tmp_path / "scanned"), "--connection-string", account.connection_string, *NOW)
        assert plan.returncode == 0, plan.stderr
        assert "already matches the dataset (40 unchanged)" in plan.stdout, plan.stdout
    finally:
        stop_emulator(account)


def test_a_copied_entities_file_that_was_changed_is_refused_naming_its_line(azseed, tmp_path):
    account = start_emulator(azseed, "--in-memory")
    try:
        build(account)
        scanned = run(azseed, "scan", "--connection-string", account.connection_string, "--out", str(tmp_path / "s"), "--copy-values",
                      "--table", "mixed", "--container", "files")
        assert scanned.returncode == 0, scanned.stderr
        files = sorted((tmp_path / "s" / "entities" / "mixed").glob("*.jsonl"))
        lines = files[0].read_text().splitlines()
        lines.append(lines[0])  # a RowKey twice
        files[0].write_text("\n".join(lines) + "\n")
        done = run(azseed, "generate", "--dataset", str(tmp_path / "s"), "--out", str(tmp_path / "g"), *NOW)
        errors = [l for l in done.stderr.splitlines() if l.startswith("azseed: error:")]
        assert done.returncode == 1 and len(errors) == 1 and f":{len(lines)}: RowKey" in errors[0] and "copied twice" in errors[0], done.stderr
        assert not (tmp_path / "g").exists()
    finally:
        stop_emulator(account)


def test_names_an_attacker_chose_scan_cleanly(azseed, tmp_path):
    """Found by an attacker: a 255-character property name of free text made a template file
    name too long (scan failed and left half a dataset), and blobs `a` and `a/b` made a copy
    fail blaming --out. Now the template's name is shortened, `a` is left out and said so, and
    every dataset generates; the summary's text cannot move the terminal's cursor."""
    account = start_emulator(azseed, "--in-memory")
    try:
        table = TableServiceClient.from_connection_string(account.connection_string).create_table("odd")
        long_name = "P" * 255
        for i in range(6):
            table.create_entity({"PartitionKey": "k" * 300, "RowKey": f"r{i}", long_name: f"some free text {i}",
                                 "Esc\u202eName": "x"})
        blobs = BlobServiceClient.from_connection_string(account.connection_string).create_container("nest")
        blobs.upload_blob("a", b"1")
        blobs.upload_blob("a/b", b"2")
        for args in ([], ["--copy-values"], ["--copy-blobs"]):
            out = tmp_path / ("s" + "".join(args))
            done = run(azseed, "scan", "--connection-string", account.connection_string, "--out", str(out), *args)
            assert done.returncode == 0, (args, done.stderr)
            assert "Left out 1 blob(s)" in done.stdout and "\u202e" not in done.stdout, done.stdout
            generated = run(azseed, "generate", "--dataset", str(out), "--out", str(tmp_path / ("g" + "".join(args))), *NOW)
            assert generated.returncode == 0, (args, generated.stderr)
    finally:
        stop_emulator(account)
