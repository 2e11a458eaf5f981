"""The bad-input corpus: every command, fed what users get wrong — connection strings, names,
keys, sizes, dataset files, templates, images, windows, flags, saved plans, snapshots. Each
case must end with one clear line on stderr (`azseed: error: …`, after at most the notes
every run prints), the documented exit code (64 usage, 1 otherwise), nothing on stdout, and
the account and the working folder exactly as they were."""
import base64
import json
import pathlib
import shutil

import pytest
from azure.data.tables import TableServiceClient
from azure.storage.blob import BlobServiceClient

from conftest import KEY, ROOT, port, register_secret, run, start_emulator, stop_emulator
from test_seeding import NOW

SPEAKEASY = ROOT / "Seeds" / "speakeasy"
PROD = f"DefaultEndpointsProtocol=https;AccountName=prod;AccountKey={KEY};EndpointSuffix=core.windows.net"
WRONG_KEY = register_secret(base64.b64encode(b"a wrong key, but well formed base64").decode())
SAS = register_secret("sv=2022-11-02&ss=bt&srt=sco&sp=rwdlac&se=2030-01-01T00:00:00Z&sig=c2VjcmV0LXNpZ25hdHVyZS12YWx1ZQ%3D%3D")
USERINFO_KEY = register_secret("dXNlcmluZm8ta2V5LW5vdC10by1iZS1zaG93bg")
SLASHED_KEY = register_secret("c2VjcmV0/a2V5+d2l0aC1zbGFzaA==")
LOCAL = "http://127.0.0.1:1/x"


@pytest.fixture(scope="module")
def seeded(azseed, tmp_path_factory):
    """One account holding the default dataset, a foreign entity and a foreign blob: every
    case runs against it and must leave it as it was."""
    emulator = start_emulator(azseed, "--data-dir", str(tmp_path_factory.mktemp("bad-input") / "data"))
    done = run(azseed, "apply", "--connection-string", emulator.connection_string, *NOW)
    assert done.returncode == 0, done.stderr
    TableServiceClient.from_connection_string(emulator.connection_string).get_table_client("events").create_entity(
        {"PartitionKey": "other", "RowKey": "keep", "Note": "not the dataset's"})
    BlobServiceClient.from_connection_string(emulator.connection_string).get_container_client("speakers").upload_blob("keep.txt", b"keep")
    yield emulator
    stop_emulator(emulator)


def state(emulator):
    """Everything the account holds, comparable."""
    blobs = BlobServiceClient.from_connection_string(emulator.connection_string)
    tables = TableServiceClient.from_connection_string(emulator.connection_string)
    seen = {}
    for c in blobs.list_containers():
        client = blobs.get_container_client(c.name)
        seen["container " + c.name] = (client.get_container_access_policy().get("public_access"),
                                       sorted((b.name, b.etag) for b in client.list_blobs()))
    for t in tables.list_tables():
        seen["table " + t.name] = sorted((e["PartitionKey"], e["RowKey"], e.metadata["etag"]) for e in tables.get_table_client(t.name).list_entities())
    return seen


def dataset(tmp_path, replace=None, templates=None, images=None):
    """A copy of the SpeakEasy dataset with `replace` applied to dataset.yaml, templates
    copied (and `templates` files overwritten) and `images` files written."""
    folder = tmp_path / "ds"
    shutil.copytree(SPEAKEASY, folder)
    text = (folder / "dataset.yaml").read_text()
    for old, new in (replace or {}).items():
        assert old in text, old
        text = text.replace(old, new)
    (folder / "dataset.yaml").write_text(text)
    for name, body in (templates or {}).items():
        (folder / "templates" / name).write_text(body)
    for name, body in (images or {}).items():
        (folder / "images" / name).write_bytes(body)
    return folder


def snapshot(azseed, tmp_path, emulator, tamper=None):
    """An export of the seeded account, then `tamper(folder)`."""
    folder = tmp_path / "snap"
    done = run(azseed, "export", "--connection-string", emulator.connection_string, "--out", str(folder))
    assert done.returncode == 0, done.stderr
    if tamper:
        tamper(folder)
    return folder


def saved_plan(azseed, tmp_path, emulator, edit=None):
    path = tmp_path / "plan.json"
    done = run(azseed, "plan", "--connection-string", emulator.connection_string, *NOW, "--events", "150", "--out", str(path))
    assert done.returncode == 0, done.stderr
    if edit:
        path.write_text(edit(path.read_text()))
    return path


def with_key(emulator, key):
    return emulator.connection_string.replace(KEY, key)


def edit_manifest(folder, change):
    manifest = json.loads((folder / "manifest.json").read_text())
    change(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))


JPEG = (SPEAKEASY / "images" / "BTubalinal.jpg").read_bytes()

# (id, build args from (azseed, tmp_path, emulator), exit code, words in the error line)
CASES = [
    # Connection strings
    ("cs-garbage", lambda a, t, e: ["plan", "--connection-string", "nonsense"], 64, "connection string"),
    ("cs-no-key", lambda a, t, e: ["plan", "--connection-string", "AccountName=x;BlobEndpoint=http://127.0.0.1:1/x"], 64, "neither AccountKey nor SharedAccessSignature"),
    ("cs-key-not-base64", lambda a, t, e: ["plan", "--connection-string", "AccountName=x;AccountKey=%%%"], 64, "connection string"),
    ("cs-unknown-protocol", lambda a, t, e: ["plan", "--connection-string", f"DefaultEndpointsProtocol=ftp;AccountName=x;AccountKey={KEY}"], 64, "connection string"),
    ("cs-endpoint-not-url", lambda a, t, e: ["plan", "--connection-string", f"AccountName=x;AccountKey={KEY};BlobEndpoint=::not a url::;TableEndpoint=http://127.0.0.1:1"], 64, "connection string"),
    ("cs-wrong-key", lambda a, t, e: ["plan", "--connection-string", with_key(e, WRONG_KEY), *NOW], 1, "403 AuthenticationFailed"),
    ("cs-wrong-key-apply", lambda a, t, e: ["apply", "--connection-string", with_key(e, WRONG_KEY), *NOW], 1, "403 AuthenticationFailed"),
    ("cs-sas-forged", lambda a, t, e: ["plan", "--connection-string", f"BlobEndpoint={e.blob};TableEndpoint={e.table};SharedAccessSignature={SAS}", *NOW], 1, "403 AuthenticationFailed"),
    ("cs-refused-port", lambda a, t, e: ["apply", "--connection-string", f"AccountName=devstoreaccount1;AccountKey={KEY};BlobEndpoint=http://127.0.0.1:9/devstoreaccount1;TableEndpoint=http://127.0.0.1:9/devstoreaccount1", *NOW], 1, "connection refused"),
    # Secrets inside the bad part are never echoed (issue 13, item 9).
    ("cs-endpoint-sas", lambda a, t, e: ["plan", "--connection-string", f"AccountName=x;AccountKey={KEY};BlobEndpoint={LOCAL}?{SAS};TableEndpoint={LOCAL}"], 64, "query string"),
    ("cs-endpoint-userinfo", lambda a, t, e: ["plan", "--connection-string", f"AccountName=x;AccountKey={KEY};BlobEndpoint=http://x:{USERINFO_KEY}@127.0.0.1:1/x;TableEndpoint={LOCAL}"], 64, "user-info"),
    ("cs-endpoint-sas-not-url", lambda a, t, e: ["plan", "--connection-string", f"AccountName=x;AccountKey={KEY};BlobEndpoint=ftp://h/x?{SAS};TableEndpoint={LOCAL}"], 64, "not an http(s) URL"),
    ("cs-env-endpoint-userinfo", lambda a, t, e: ["plan", *NOW, "--env", f"AZURE_STORAGE_CONNECTION_STRING=AccountName=x;SharedAccessSignature={SAS};BlobEndpoint=https://u:{USERINFO_KEY}@h/x;TableEndpoint={LOCAL}"], 64, "user-info"),
    ("cs-endpoint-userinfo-slash", lambda a, t, e: ["plan", "--connection-string", f"AccountName=x;AccountKey={KEY};BlobEndpoint=https://acct:{SLASHED_KEY}@h/x;TableEndpoint={LOCAL}"], 64, "connection string"),
    ("cs-without-its-flag", lambda a, t, e: ["plan", f"DefaultEndpointsProtocol=https;AccountName=a;AccountKey={KEY}"], 64, "Unexpected argument"),
    ("generate-blob-endpoint-sas", lambda a, t, e: ["generate", "--out", str(t / "fx"), "--blob-endpoint", f"ftp://h/x?{SAS}"], 64, "--blob-endpoint"),
    ("cs-env-garbage", lambda a, t, e: ["plan", *NOW, "--env", "AZURE_STORAGE_CONNECTION_STRING=AccountName=x"], 64, "AZURE_STORAGE_CONNECTION_STRING"),
    ("verify-cs-garbage", lambda a, t, e: ["verify", "--connection-string", "AccountName="], 64, "connection string"),
    ("reset-cs-garbage", lambda a, t, e: ["reset", "--connection-string", "x=y"], 64, "connection string"),
    ("export-cs-garbage", lambda a, t, e: ["export", "--connection-string", "x=y", "--out", str(t / "out")], 64, "connection string"),
    ("copy-to-garbage", lambda a, t, e: ["copy", "--from", e.connection_string, "--to", "x=y"], 64, "--to: "),
    ("copy-to-with-data-dir", lambda a, t, e: ["copy", "--from", e.connection_string, "--to", e.connection_string, "--data-dir", str(t / "d")], 64, "drop it when passing --to"),
    ("copy-to-beside-connection-string", lambda a, t, e: ["copy", "--from", e.connection_string, "--to", e.connection_string, "--connection-string", e.connection_string], 64, "--to names the target"),
    ("import-cs-garbage", lambda a, t, e: ["import", str(snapshot(a, t, e)), "--connection-string", "x=y"], 64, "connection string"),
    # Names and keys in dataset files
    ("name-container-uppercase", lambda a, t, e: ["plan", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"- name: speakers": "- name: Speakers"}))], 1, "Speakers"),
    ("name-table-digit-first", lambda a, t, e: ["plan", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"- name: events": "- name: 1events"}))], 1, "1events"),
    ("name-partition-slash", lambda a, t, e: ["apply", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"partition: Events": "partition: Ev/ents"}))], 1, "Ev/ents"),
    ("name-property-invalid", lambda a, t, e: ["apply", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"EventName:\n": "Event Name:\n"}))], 1, "Event Name"),
    ("key-row-hash", lambda a, t, e: ["apply", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"Name: Bart Tubalinal, Title": "Name: Bart Tubalinal, RowKey: 'bad#key', Title"}))], 1, "RowKey"),
    ("name-reserved-property", lambda a, t, e: ["apply", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"EventName:\n": "Timestamp:\n"}))], 1, "Timestamp"),
    # Sizes
    ("size-events-negative", lambda a, t, e: ["apply", "--events", "-1"], 64, "--events"),
    ("size-events-word", lambda a, t, e: ["plan", "--events", "many"], 64, "--events"),
    ("size-events-impossible", lambda a, t, e: ["apply", "--connection-string", e.connection_string, *NOW, "--events", "99999999999"], 64, "cannot make"),
    ("size-string-over-32k", lambda a, t, e: ["apply", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, templates={"bio.mustache": "x" * 33000}))], 1, "property 'Bio' is longer than 32K characters"),
    ("size-concurrency-zero", lambda a, t, e: ["apply", "--connection-string", e.connection_string, "--concurrency", "0"], 64, "--concurrency"),
    ("size-concurrency-huge", lambda a, t, e: ["import", "x", "--concurrency", "100000"], 64, "--concurrency"),
    # Dataset files
    ("dataset-missing", lambda a, t, e: ["plan", "--connection-string", e.connection_string, "--dataset", "/nonexistent/dataset"], 1, "/nonexistent/dataset"),
    ("dataset-yaml-broken", lambda a, t, e: ["plan", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"tables:": "tables: [unclosed"}))], 1, "dataset.yaml:"),
    ("dataset-unknown-field", lambda a, t, e: ["plan", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"count: 100": "count: 100\n        colour: blue"}))], 1, "colour"),
    ("dataset-unknown-ref", lambda a, t, e: ["plan", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"ref: speaker": "ref: nobody"}))], 1, "nobody"),
    ("dataset-no-name", lambda a, t, e: ["plan", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"name: speakeasy\n": ""}))], 1, "name"),
    ("dataset-empty-pick", lambda a, t, e: ["plan", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"pick: [Mobile Mondays, iOS Meetup, Windows Phone Meetup, Android Meetup, HTML5 Meetup, SharePoint Saturdays]": "pick: []"}))], 1, "pick"),
    ("generate-dataset-broken", lambda a, t, e: ["generate", "--out", str(t / "fx"), *NOW, "--dataset", str(dataset(t, {"seed: 2012": "seed: twenty"}))], 1, "seed"),
    # Templates
    ("template-missing", lambda a, t, e: ["plan", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"bio.mustache": "missing.mustache"}))], 1, "missing.mustache"),
    ("template-unclosed-section", lambda a, t, e: ["plan", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, templates={"bio.mustache": "{{#Name}} never closed"}))], 1, "bio.mustache"),
    ("template-nested-deep", lambda a, t, e: ["plan", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, templates={"bio.mustache": "{{#Name}}" * 1000 + "x" + "{{/Name}}" * 1000}))], 1, "bio.mustache:1: Mustache sections nested more than 100 deep"),
    ("template-unknown-field", lambda a, t, e: ["plan", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, templates={"bio.mustache": "{{Nickname}} speaks"}))], 1, "Nickname"),
    # Images
    ("image-not-jpeg", lambda a, t, e: ["apply", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, images={"BTubalinal.jpg": b"GIF89a not a jpeg"}))], 1, "BTubalinal.jpg"),
    ("image-truncated", lambda a, t, e: ["apply", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, images={"MOmar.jpg": JPEG[:200]}))], 1, "MOmar.jpg"),
    ("image-referenced-missing", lambda a, t, e: ["apply", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"Image: EGardner.jpg": "Image: Nobody.jpg"}))], 1, "Nobody.jpg"),
    ("image-folder-missing", lambda a, t, e: ["apply", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"images: images/": "images: photos/"}))], 1, "photos"),
    # Windows
    ("window-reversed", lambda a, t, e: ["verify", "--connection-string", e.connection_string, "--from", "2026-07-01", "--to", "2026-01-01"], 64, "not before its end"),
    ("window-now-garbage", lambda a, t, e: ["plan", "--now", "yesterday-ish"], 64, "--now"),
    ("window-impossible-date", lambda a, t, e: ["plan", "--from", "2026-13-45"], 64, "--from"),
    ("window-outside-edm", lambda a, t, e: ["plan", "--connection-string", e.connection_string, "--from", "1500-01-01", "--to", "1500-02-01"], 64, "1601"),
    ("window-dataset-bad", lambda a, t, e: ["plan", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"days: 180": "days: -5"}))], 1, "days"),
    # Flags
    ("flag-unknown", lambda a, t, e: ["plan", "--frobnicate"], 64, "--frobnicate"),
    ("flag-output-yaml", lambda a, t, e: ["plan", "--output", "yaml"], 64, "--output"),
    ("flag-access-public", lambda a, t, e: ["apply", "--access", "public"], 64, "--access"),
    ("flag-seed-negative", lambda a, t, e: ["generate", "--out", str(t / "fx"), "--seed", "-1"], 64, "the seed is 0 to 2^64-1"),
    ("flag-seed-too-big", lambda a, t, e: ["plan", "--seed", "18446744073709551616"], 64, "the seed is 0 to 2^64-1"),
    ("flag-events-and-count-event", lambda a, t, e: ["generate", "--out", str(t / "fx"), "--count", "event=5", "--events", "7"], 64, "--events"),
    ("flag-plan-and-dry-run", lambda a, t, e: ["apply", "--plan", "x.json", "--dry-run"], 64, "exclude each other"),
    ("flag-plan-and-events", lambda a, t, e: ["apply", "--plan", "x.json", "--events", "5"], 64, "--plan"),
    ("flag-prune-remote", lambda a, t, e: ["apply", "--prune", "--connection-string", PROD], 64, "--yes"),
    ("flag-reset-remote", lambda a, t, e: ["reset", "--connection-string", PROD], 64, "--yes"),
    ("flag-unknown-command", lambda a, t, e: ["seed-everything"], 64, "seed-everything"),
    ("flag-emulator-fault-rate", lambda a, t, e: ["emulator", "--in-memory", "--fault-rate", "2"], 64, "--fault-rate"),
    ("flag-emulator-port", lambda a, t, e: ["emulator", "--in-memory", "--blob-port", "70000"], 64, "--blob-port"),
    ("flag-emulator-port-taken", lambda a, t, e: ["emulator", "--in-memory", "--blob-port", str(port(e.blob)), "--table-port", "0"], 1, "port"),
    ("flag-portraits-no-file", lambda a, t, e: ["portraits", "--out", str(t / "p"), "Just A Name"], 64, "Just A Name"),
    # Saved plans
    ("plan-file-missing", lambda a, t, e: ["apply", "--connection-string", e.connection_string, "--plan", "/nonexistent/plan.json"], 1, "cannot read the plan file"),
    ("plan-file-garbage", lambda a, t, e: ["apply", "--connection-string", e.connection_string, "--plan", str(saved_plan(a, t, e, lambda s: "{ not json"))], 1, "not a plan file"),
    ("plan-file-wrong-shape", lambda a, t, e: ["apply", "--connection-string", e.connection_string, "--plan", str(saved_plan(a, t, e, lambda s: '{"format": "something else"}'))], 1, "plan"),
    ("plan-file-other-target", lambda a, t, e: ["apply", "--connection-string", e.connection_string.replace("127.0.0.1", "localhost"), "--plan", str(saved_plan(a, t, e))], 1, "the plan was made for"),
    ("plan-file-digest-edited", lambda a, t, e: ["apply", "--connection-string", e.connection_string, "--plan", str(saved_plan(a, t, e, lambda s: s.replace('"observed": "', '"observed": "0')))], 1, "changed since the plan was made"),
    ("plan-file-from-import", lambda a, t, e: ["apply", "--connection-string", e.connection_string, "--plan", str(import_plan(a, t, e))], 1, "import"),
    # Snapshots
    ("snap-missing", lambda a, t, e: ["import", "/nonexistent/snapshot", "--connection-string", e.connection_string], 1, "/nonexistent/snapshot"),
    ("snap-no-manifest", lambda a, t, e: ["import", str(snapshot(a, t, e, lambda f: (f / "manifest.json").unlink())), "--connection-string", e.connection_string], 1, "manifest.json"),
    ("snap-manifest-garbage", lambda a, t, e: ["import", str(snapshot(a, t, e, lambda f: (f / "manifest.json").write_text("[1, 2"))), "--connection-string", e.connection_string], 1, "manifest.json"),
    ("snap-blob-tampered", lambda a, t, e: ["import", str(snapshot(a, t, e, lambda f: (f / "blobs" / "speakers" / "MOmar.jpg").write_bytes(JPEG))), "--connection-string", e.connection_string], 1, "MOmar.jpg"),
    ("snap-blob-missing", lambda a, t, e: ["import", str(snapshot(a, t, e, lambda f: (f / "blobs" / "speakers" / "CJones.jpg").unlink())), "--connection-string", e.connection_string], 1, "CJones.jpg"),
    ("snap-extra-file", lambda a, t, e: ["import", str(snapshot(a, t, e, lambda f: (f / "blobs" / "speakers" / "stray.jpg").write_bytes(JPEG))), "--connection-string", e.connection_string], 1, "stray.jpg"),
    ("snap-table-truncated", lambda a, t, e: ["import", str(snapshot(a, t, e, lambda f: truncate(f / "tables" / "events.jsonl"))), "--connection-string", e.connection_string], 1, "events.jsonl"),
    ("snap-table-line-edited", lambda a, t, e: ["import", str(snapshot(a, t, e, lambda f: edit_line(f / "tables" / "events.jsonl"))), "--connection-string", e.connection_string], 1, "events.jsonl"),
    ("snap-count-edited", lambda a, t, e: ["import", str(snapshot(a, t, e, lambda f: edit_manifest(f, lambda m: m["tables"][0].update(entities=1)))), "--connection-string", e.connection_string], 1, "manifest"),
    # Output folders
    ("export-out-is-file", lambda a, t, e: ["export", "--connection-string", e.connection_string, "--out", str(a_file(t))], 64, "not a folder"),
    ("export-out-not-empty", lambda a, t, e: ["export", "--connection-string", e.connection_string, "--out", str(a_full_folder(t))], 64, "--force"),
    ("generate-out-not-empty", lambda a, t, e: ["generate", *NOW, "--out", str(a_full_folder(t))], 64, "--force"),
    # --force never replaces what is being read (issue 13, item 2).
    ("generate-out-is-dataset", lambda a, t, e: ["generate", *NOW, "--dataset", str(dataset(t)), "--out", str(t / "ds"), "--force"], 64, "is the dataset folder"),
    ("generate-out-inside-dataset", lambda a, t, e: ["generate", *NOW, "--dataset", str(dataset(t)), "--out", str(t / "ds" / "fixture")], 64, "is inside the dataset folder"),
    ("generate-out-contains-dataset", lambda a, t, e: ["generate", *NOW, "--dataset", str(dataset(t)), "--out", str(t), "--force"], 64, "contains the dataset folder"),
    ("export-out-is-data-dir", lambda a, t, e: ["export", "--connection-string", e.connection_string, "--out", ".azseed/storage", "--force"], 64, "data folder"),
    ("export-out-contains-data-dir", lambda a, t, e: ["export", "--connection-string", e.connection_string, "--out", ".azseed", "--force"], 64, "contains the storage's data folder"),
    ("export-out-is-dataset", lambda a, t, e: ["export", "--connection-string", e.connection_string, "--dataset", str(dataset(t)), "--out", str(t / "ds"), "--force"], 64, "is the dataset folder"),
    ("export-out-is-another-data-dir", lambda a, t, e: ["export", "--connection-string", e.connection_string, "--out", str(a_data_folder(t)), "--force"], 64, "is the storage data folder"),
    ("generate-out-contains-a-data-dir", lambda a, t, e: ["generate", *NOW, "--out", str(a_data_folder(t).parent), "--force"], 64, "contains the storage data folder"),
    ("import-data-dir-in-snapshot", lambda a, t, e: ["import", str(snapshot(a, t, e)), "--data-dir", str(t / "snap" / "storage"), "--dry-run"], 64, "--data-dir"),
    ("snap-stray-table-file", lambda a, t, e: ["import", str(snapshot(a, t, e, lambda f: (f / "tables" / "extra.jsonl").write_text("{}\n"))), "--connection-string", e.connection_string], 1, "extra.jsonl: not in the manifest"),
    ("snap-stray-top-level-file", lambda a, t, e: ["import", str(snapshot(a, t, e, lambda f: (f / "notes.txt").write_text("x"))), "--connection-string", e.connection_string], 1, "notes.txt: not part of a snapshot"),
    ("image-name-other-normal-form", lambda a, t, e: ["apply", "--connection-string", e.connection_string, *NOW, "--dataset", str(dataset(t, {"Image: BTubalinal.jpg": "Image: Caf\u00e9.jpg"}, images={"Cafe\u0301.jpg": JPEG}))], 1, "not a file of container"),
    # No raw Foundation error (issue 13, item 8).
    ("snap-blob-unsafe-name", lambda a, t, e: ["import", str(snapshot(a, t, e, lambda f: edit_manifest(f, lambda m: m["containers"][0]["blobs"][0].update(name="../x")))), "--connection-string", e.connection_string], 1, "'..' segments"),
    ("image-symlink-outside", lambda a, t, e: ["apply", "--connection-string", e.connection_string, *NOW, "--dataset", str(linked_outside(t))], 1, "outside the dataset's folder"),
    ("generate-out-under-a-file", lambda a, t, e: ["generate", *NOW, "--out", str(a_file(t) / "sub")], 64, "is a file, not a folder"),
    ("emulator-data-dir-is-file", lambda a, t, e: ["emulator", "--blob-port", "0", "--table-port", "0", "--data-dir", str(a_file(t))], 1, "a-file: it is a file, not a folder; pass another --data-dir"),
    ("plan-data-dir-under-a-file", lambda a, t, e: ["plan", *NOW, "--data-dir", str(a_file(t) / "storage")], 1, "a-file/storage: it cannot be created here"),
]


def truncate(path):
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[: len(lines) // 2]))


def edit_line(path):
    text = path.read_text()
    path.write_text(text.replace("Mobile Mondays", "Mobile Tuesdays", 1))


def linked_outside(tmp_path):
    """A dataset whose images folder holds a link to a file outside the dataset."""
    folder = dataset(tmp_path)
    secret = tmp_path / "outside.jpg"
    secret.write_bytes(JPEG)
    (folder / "images" / "Linked.jpg").symlink_to(secret)
    return folder


def a_data_folder(tmp_path):
    """A storage data folder somewhere else (as an emulator started with --data-dir leaves it)."""
    folder = tmp_path / "elsewhere" / "data"
    (folder / "blobs").mkdir(parents=True)
    (folder / "storage.sqlite").write_bytes(b"")
    (folder / "owner.lock").write_text("")
    return folder


def a_file(tmp_path):
    path = tmp_path / "a-file"
    path.write_text("not a folder")
    return path


def a_full_folder(tmp_path):
    folder = tmp_path / "full"
    folder.mkdir()
    (folder / "precious.txt").write_text("mine")
    return folder


def import_plan(azseed, tmp_path, emulator):
    path = tmp_path / "import-plan.json"
    folder = snapshot(azseed, tmp_path, emulator)
    done = run(azseed, "import", str(folder), "--connection-string", emulator.connection_string, "--dry-run", "--out", str(path))
    assert done.returncode == 0, done.stderr
    return path


def test_the_corpus_covers_every_command():
    assert len(CASES) >= 50
    assert len({case[0] for case in CASES}) == len(CASES)


def listing(folder):
    return sorted((str(p.relative_to(folder)), p.stat().st_size) for p in folder.rglob("*"))


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_bad_input(azseed, seeded, tmp_path, case):
    _, build, code, words = case
    args = build(azseed, tmp_path, seeded)
    env = None
    if "--env" in args:  # a bad connection string in the environment instead of a flag
        at = args.index("--env")
        name, value = args[at + 1].split("=", 1)
        env = {"PATH": "/usr/bin:/bin", name: value}
        args = args[:at] + args[at + 2:]
    before_account, before_files = state(seeded), listing(tmp_path)
    done = run(azseed, *args, cwd=tmp_path, env=env, timeout=60)
    assert done.returncode == code, (done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    errors = [line for line in lines if line.startswith("azseed: error: ")]
    assert len(errors) == 1 and all(line.startswith("azseed: ") for line in lines), done.stderr
    assert words in errors[0], errors[0]
    assert done.stdout == ""
    assert state(seeded) == before_account
    assert listing(tmp_path) == before_files, "the command wrote files"


def test_a_plan_saved_into_a_missing_folder_is_one_plain_line(azseed, tmp_path):
    """The reason is the file system's, in words — never Foundation's error text."""
    done = run(azseed, "plan", "--data-dir", str(tmp_path / "data"), *NOW, "--out", str(tmp_path / "no" / "such" / "plan.json"), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("azseed: error: ")]
    assert len(errors) == 1 and "cannot save the plan to" in errors[0] and "no such file" in errors[0], done.stderr
    assert "NSCocoaErrorDomain" not in done.stderr and "Error Domain" not in done.stderr
