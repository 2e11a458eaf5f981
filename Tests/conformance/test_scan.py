"""`azseed scan`: an account seeded from a dataset, scanned, gives a dataset that generates the
same kinds, partitions, property names, EDM types, counts and reference structure; values
copied stay within --sample; blobs come back as same-size placeholders or, with --copy-blobs,
byte for byte. Driven through `azseed emulator` with a connection string, as against Azure."""
import json
import pathlib

import pytest

from conftest import ROOT, run, start_emulator, stop_emulator

NOW = ["--now", "2026-11-21"]


def shape(folder):
    """Per (table, partition): entity count, property names, each property's EDM type; the
    RowKeys and each entity's properties for reference checks; blobs by container."""
    manifest = json.loads((folder / "manifest.json").read_text())
    tables, entities = {}, {}
    for path in sorted((folder / "tables").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            e = json.loads(line)
            part = tables.setdefault((path.stem, e["PartitionKey"]), {"count": 0, "types": {}})
            part["count"] += 1
            for name, value in e.items():
                if name in ("PartitionKey", "RowKey") or "@odata.type" in name:
                    continue
                given = e.get(name + "@odata.type")
                edm = given or {str: "Edm.String", bool: "Edm.Boolean", int: "Edm.Int32", float: "Edm.Double"}[type(value)]
                part["types"].setdefault(name, set()).add(edm)
            entities.setdefault((path.stem, e["PartitionKey"]), []).append(e)
    blobs = {c["name"]: sorted((b["name"], b["contentType"], b["size"]) for b in c["blobs"]) for c in manifest["containers"]}
    return tables, entities, blobs


@pytest.fixture(scope="module")
def served(azseed, tmp_path_factory):
    """One emulator holding SpeakEasy (applied by azseed) and the chat dataset."""
    emulator = start_emulator(azseed, "--in-memory")
    for dataset in ("speakeasy", "chat"):
        done = run(azseed, "apply", "--connection-string", emulator.connection_string, "--dataset", str(ROOT / "Seeds" / dataset), *NOW)
        assert done.returncode == 0, done.stderr
    yield emulator
    stop_emulator(emulator)


def scan_and_generate(azseed, served, work, dataset, *scan_args):
    tables = {"speakeasy": ["events"], "chat": ["rooms", "users", "messages"]}[dataset]
    containers = ["--container", "speakers"] if dataset == "speakeasy" else []
    scanned = run(azseed, "scan", "--connection-string", served.connection_string, "--out", str(work / "scanned"),
                  *[a for t in tables for a in ("--table", t)], *containers, *scan_args)
    assert scanned.returncode == 0, scanned.stderr
    ours = run(azseed, "generate", "--dataset", str(work / "scanned"), "--out", str(work / "ours"), *NOW)
    assert ours.returncode == 0, ours.stderr
    theirs = run(azseed, "generate", "--dataset", str(ROOT / "Seeds" / dataset), "--out", str(work / "theirs"), *NOW)
    assert theirs.returncode == 0, theirs.stderr
    return scanned, shape(work / "ours"), shape(work / "theirs")


def test_a_scan_of_speakeasy_generates_its_shape(azseed, served, tmp_path):
    scanned, (tables, entities, blobs), (their_tables, _, their_blobs) = scan_and_generate(azseed, served, tmp_path, "speakeasy", "--copy-values")
    assert tables == their_tables  # partitions, counts, property names and EDM types
    # Speaker keys resolve: every event's SpeakerKey is a speaker's RowKey, its SpeakerName that speaker's Name.
    speakers = {e["RowKey"]: e for e in entities[("events", "speakers")]}
    for event in entities[("events", "Events")]:
        assert event["SpeakerKey"] in speakers and speakers[event["SpeakerKey"]]["Name"] == event["SpeakerName"]
    # ImageUrl points at the speaker's own photo in the dataset's container.
    assert all(s["ImageUrl"].rsplit("/", 1)[1] in {b[0] for b in blobs["speakers"]} for s in speakers.values())
    # Placeholders: same names, content types and sizes, and valid JPEGs (generate decodes each).
    assert blobs == their_blobs
    text = (tmp_path / "scanned" / "dataset.yaml").read_text()
    assert text.startswith("# Scanned by azseed from ") and "ref + from" in text and "template" in text
    assert "weights:" in text and "key: [Name]" in text
    assert "event.SpeakerKey holds RowKeys of partition 'speakers'" in scanned.stdout
    # The fidelity report: printed and written beside the dataset, every property compared; each
    # speaker keeps a photo of its own (the URLs were unique), so nothing says otherwise.
    report = (tmp_path / "scanned" / "fidelity.md").read_text()
    assert "| `ImageUrl` |" in report and "## events / Events → kind `event` (100 / 100 entities)" in report
    assert "Fidelity: generated again at the observed counts, 10 properties compared" in scanned.stdout
    assert "speaker.ImageUrl" not in scanned.stdout.split("Fidelity:")[1]
    assert len({s["ImageUrl"] for s in speakers.values()}) == len(speakers)


def test_a_scan_of_the_chat_dataset_generates_its_shape(azseed, served, tmp_path):
    _, (tables, entities, _), (their_tables, _, _) = scan_and_generate(azseed, served, tmp_path, "chat", "--copy-values")
    assert tables == their_tables
    rooms = {e["RoomId"] for e in entities[("rooms", "rooms")]}
    users = {int(e["UserId"]): e for e in entities[("users", "users")]}
    assert all(u["RoomId"] in rooms for u in users.values())
    for message in entities[("messages", "messages")]:
        assert message["RoomId"] in rooms and int(message["UserId"]) in users
        assert message["Author"] == users[int(message["UserId"])]["Author"]
    assert sorted(int(u) for u in users) == list(range(1000, 1025))  # the sequence


def test_copied_values_are_every_entity_and_the_inferred_kind_draws_from_the_sample(azseed, served, tmp_path):
    scanned, (tables, entities, _), (their_tables, their_entities, _) = scan_and_generate(
        azseed, served, tmp_path, "speakeasy", "--sample", "3", "--copy-values")
    assert tables == their_tables
    # Every entity as it was in the account (seeded from these; its photo URLs name the account).
    strip = lambda found: {k: [{n: v for n, v in e.items() if n != "ImageUrl"} for e in es] for k, es in found.items()}
    assert strip(entities) == strip(their_entities)
    assert all(e["ImageUrl"].startswith(served.connection_string.split("BlobEndpoint=")[1].split(";")[0]) for e in entities[("events", "speakers")])
    text = (tmp_path / "scanned" / "dataset.yaml").read_text()
    # What was inferred is written beside each copied kind, to generate instead; it draws from
    # at most --sample entities' values.
    inferred = "\n".join(l for l in text.splitlines() if l.lstrip().startswith("#"))
    names = ["Bart Tubalinal", "Bert Johnson", "Travis Nielsen", "Matt Morse", "Mo Omar", "Darya Orlova", "Callie Jones", "Ela Gardner"]
    copied = [n for n in names if n in inferred]
    assert 1 <= len(copied) <= 3, copied
    assert "#   - {" not in inferred  # 8 speakers > 3: generated, not listed as rows


def test_copy_blobs_brings_the_bytes(azseed, served, tmp_path):
    done = run(azseed, "scan", "--connection-string", served.connection_string, "--out", str(tmp_path / "s"), "--container", "speakers",
               "--table", "events", "--copy-blobs")
    assert done.returncode == 0, done.stderr
    for photo in (ROOT / "Seeds" / "speakeasy" / "images").glob("*.jpg"):
        assert (tmp_path / "s" / "blobs" / "speakers" / photo.name).read_bytes() == photo.read_bytes()
    photos = sum(p.stat().st_size for p in (ROOT / "Seeds" / "speakeasy" / "images").glob("*.jpg"))
    assert f"Copied {photos} bytes of blobs." in done.stdout, done.stdout


def test_scan_refuses_what_it_cannot_do_in_one_line(azseed, served, tmp_path):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "keep.txt").write_text("mine")
    cases = [
        (["--out", str(taken), "--table", "events"], 1, "is not an empty folder"),
        (["--out", str(tmp_path / "a"), "--table", "nosuchtable"], 1, "table 'nosuchtable' does not exist"),
        (["--out", str(tmp_path / "b"), "--container", "nosuch", "--table", "events"], 1, "container 'nosuch' does not exist"),
        (["--out", str(tmp_path / "c"), "--sample", "0"], 64, "--sample"),
    ]
    for args, code, message in cases:
        done = run(azseed, "scan", "--connection-string", served.connection_string, *args)
        errors = [l for l in done.stderr.splitlines() if l.startswith("azseed: error:")]
        assert done.returncode == code and len(errors) == 1 and message in errors[0], (args, done.stderr)
        assert done.stdout == ""
    assert sorted(p.name for p in taken.iterdir()) == ["keep.txt"]
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_snapshot_folder_scans_as_its_account(azseed, served, tmp_path):
    exported = run(azseed, "export", "--connection-string", served.connection_string, "--out", str(tmp_path / "snap"),
                   "--container", "speakers", "--table", "events")
    assert exported.returncode == 0, exported.stderr
    done = run(azseed, "scan", "--snapshot", str(tmp_path / "snap"), "--out", str(tmp_path / "fromsnap"), "--copy-blobs")
    assert done.returncode == 0, done.stderr
    assert "event.SpeakerKey holds RowKeys of partition 'speakers'" in done.stdout
    assert "speaker.ImageUrl holds URLs of blobs in container 'speakers'" in done.stdout
    ours = run(azseed, "generate", "--dataset", str(tmp_path / "fromsnap"), "--out", str(tmp_path / "ours"), *NOW)
    theirs = run(azseed, "generate", "--dataset", str(ROOT / "Seeds" / "speakeasy"), "--out", str(tmp_path / "theirs"), *NOW)
    assert ours.returncode == 0 and theirs.returncode == 0, ours.stderr
    assert shape(tmp_path / "ours")[0] == shape(tmp_path / "theirs")[0]
    assert shape(tmp_path / "ours")[2] == shape(tmp_path / "theirs")[2]  # the photos themselves: same sizes
    done = run(azseed, "scan", "--snapshot", str(tmp_path / "snap"), "--out", str(tmp_path / "x"), "--connection-string", served.connection_string)
    assert done.returncode == 64 and "--snapshot scans a folder" in done.stderr


def test_an_empty_table_and_a_mistyped_folder(azseed, served, tmp_path):
    from azure.data.tables import TableServiceClient
    TableServiceClient.from_connection_string(served.connection_string).create_table_if_not_exists("emptyone")
    done = run(azseed, "scan", "--connection-string", served.connection_string, "--out", str(tmp_path / "e"), "--table", "emptyone",
               "--container", "speakers")
    assert done.returncode == 0 and "table 'emptyone' holds no entities" in done.stdout, done.stderr
    generated = run(azseed, "generate", "--dataset", str(tmp_path / "e"), "--out", str(tmp_path / "g"), *NOW)
    assert generated.returncode == 0 and "8 blobs" in generated.stdout, generated.stderr
    # A read of an embedded folder that is not there creates nothing.
    done = run(azseed, "scan", "--data-dir", str(tmp_path / "typo"), "--out", str(tmp_path / "t"))
    assert done.returncode == 64 and "holds no embedded storage" in done.stderr
    assert not (tmp_path / "typo").exists()


# --- Issue 28, item 4: scan copies no person and no rare value by default ------------------

def test_scan_copies_no_personal_or_rare_value_unless_asked(azseed, tmp_path):
    from azure.data.tables import TableServiceClient
    emulator = start_emulator(azseed, "--in-memory")
    try:
        table = TableServiceClient.from_connection_string(emulator.connection_string).create_table("customers")
        secrets = []
        for i in range(3):  # a small partition: once listed verbatim as rows
            row = {"PartitionKey": "vip", "RowKey": f"v{i}", "Name": f"Alice{i} Johnson", "Email": f"alice{i}.johnson@corp.example.org",
                   "Phone": f"+1 (415) 555-01{i:02d}", "Website": f"https://alice{i}.example.org", "Notes": f"prefers calls after {i + 5}pm",
                   "Tier": "platinum", "Label": "Topsecret", "Kind": "Topsecret", "Code": f"c{i}"}
            table.create_entity(row)
            secrets += [row["Name"], row["Email"], row["Phone"], row["Website"], row["Notes"]]
        secrets.append("platinum")  # seen in 3 entities only
        cities = ["Chicago", "Boston", "Denver"]
        for i in range(30):
            row = {"PartitionKey": "regular", "RowKey": f"r{i:02d}", "Name": f"Carol{i} Smith", "Email": f"carol{i}@mail.example.com",
                   "Phone": f"415-555-{1000 + i}", "City": cities[i % 3], "Age": 20 + i, "Status": "rare-status" if i == 7 else "active",
                   "Level": "zeta-level" if i == 9 else ["gold", "silver", "bronze"][i % 3]}
            table.create_entity(row)
            secrets += [row["Name"], row["Email"], row["Phone"]]
        secrets += ["rare-status", "zeta-level"]
        for i in range(6):  # a PartitionKey that is an address
            table.create_entity({"PartitionKey": "bob@private.example.net", "RowKey": f"b{i}", "Kind": "order"})
        secrets.append("bob@private.example.net")

        done = run(azseed, "scan", "--connection-string", emulator.connection_string, "--table", "customers", "--out", str(tmp_path / "private"))
        assert done.returncode == 0, done.stderr
        written = "".join(p.read_text() for p in (tmp_path / "private").rglob("*") if p.is_file()) + done.stdout + done.stderr
        leaked = [s for s in secrets if s in written]
        assert leaked == [], leaked
        assert "Chicago" in written  # a value seen in ten entities that names no one is kept
        assert "bronze" in written  # one rare value does not cost the column its frequent ones
        generated = run(azseed, "generate", "--dataset", str(tmp_path / "private"), "--out", str(tmp_path / "gen"), *NOW)
        assert generated.returncode == 0, generated.stderr

        # With --copy-values the small partition is listed as it is: the test can tell.
        copied = run(azseed, "scan", "--connection-string", emulator.connection_string, "--table", "customers", "--out", str(tmp_path / "copied"),
                     "--copy-values")
        assert copied.returncode == 0, copied.stderr
        assert "alice0.johnson@corp.example.org" in (tmp_path / "copied" / "dataset.yaml").read_text()
        # Two equal columns are not each other's template: the copied dataset generates.
        generated = run(azseed, "generate", "--dataset", str(tmp_path / "copied"), "--out", str(tmp_path / "gen2"), *NOW)
        assert generated.returncode == 0, generated.stderr
    finally:
        stop_emulator(emulator)


def test_by_default_blobs_are_written_under_made_up_names(azseed, served, tmp_path):
    done = run(azseed, "scan", "--connection-string", served.connection_string, "--out", str(tmp_path / "s"), "--container", "speakers",
               "--table", "events")
    assert done.returncode == 0, done.stderr
    paths = [str(p.relative_to(tmp_path / "s")) for p in (tmp_path / "s").rglob("*")]
    written = "".join(p.read_text(errors="replace") for p in (tmp_path / "s").rglob("*") if p.is_file() and p.suffix != ".jpg")
    for person in ("Tubalinal", "BJohnson", "Nielsen", "Orlova"):
        assert person not in written and not any(person in p for p in paths), person
    assert sorted(p for p in paths if p.endswith(".jpg")) == [f"blobs/speakers/blob-{i}.jpg" for i in range(1, 9)]
    generated = run(azseed, "generate", "--dataset", str(tmp_path / "s"), "--out", str(tmp_path / "g"), *NOW)
    assert generated.returncode == 0, generated.stderr


def test_without_copied_values_each_speaker_keeps_a_photo_of_its_own(azseed, served, tmp_path):
    scanned, (_, entities, _), _ = scan_and_generate(azseed, served, tmp_path, "speakeasy")
    speakers = entities[("events", "speakers")]
    # The account's URLs were unique: the dataset draws each photo once (it drew 3 for 8 before).
    assert len({s["ImageUrl"] for s in speakers}) == len(speakers) == 8
    assert "speaker.ImageUrl" not in scanned.stdout.split("Fidelity:")[1]
    report = (tmp_path / "scanned" / "fidelity.md").read_text()
    assert "(not shown)" in report and "Bart Tubalinal" not in report
    # Every value kind the 8 speakers and 100 events show comes back as often (exact weights):
    # nothing flagged (4 titles came back as 3 before).
    assert "10 properties compared, 0 flagged" in scanned.stdout, scanned.stdout


def test_a_blob_name_that_cannot_be_a_file_is_not_printed_without_copied_values(azseed, tmp_path):
    """Found by an attacker: the 'Left out' line printed skipped blob names verbatim."""
    emulator = start_emulator(azseed, "--in-memory")
    try:
        from azure.storage.blob import BlobServiceClient
        container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container("private")
        secret = "ceo-salary-jane.smith@corp.example-" + "x" * 260
        container.upload_blob(secret, b"1")
        done = run(azseed, "scan", "--connection-string", emulator.connection_string, "--out", str(tmp_path / "s"))
        assert done.returncode == 0, done.stderr
        assert "Left out 1 blob(s)" in done.stdout and "jane.smith" not in done.stdout + done.stderr
        copied = run(azseed, "scan", "--connection-string", emulator.connection_string, "--out", str(tmp_path / "c"), "--copy-values")
        assert "jane.smith" in copied.stdout
    finally:
        stop_emulator(emulator)
