"""The seeding engine end to end, as a user runs it: `azseed plan / apply / verify / reset`
against the emulator, with the data read back through the official Python SDKs the way the
SpeakEasy app reads it."""
import json
import os
import signal
import subprocess
import time
import urllib.request
import uuid
from datetime import datetime, timezone

import pytest
from azure.data.tables import TableServiceClient, UpdateMode
from azure.storage.blob import BlobServiceClient

from conftest import KEY, ROOT, record, run, start_emulator, stop_emulator

NOW = ["--now", "2026-11-21"]


@pytest.fixture
def account(azseed):
    """A fresh emulator per test: the dataset's names (speakers, events) are fixed."""
    running = start_emulator(azseed, "--in-memory")
    yield running
    stop_emulator(running)


def one_error(stderr):
    """The single `azseed: error:` line (notes such as the dataset line may precede it)."""
    errors = [line for line in stderr.splitlines() if line.startswith("azseed: error: ")]
    assert len(errors) == 1 and all(line.startswith("azseed: ") for line in stderr.splitlines()), stderr
    return errors[0]


def cs(account):
    return ["--connection-string", account.connection_string]


def events_table(account):
    return TableServiceClient.from_connection_string(account.connection_string).get_table_client("events")


def partition(account, key):
    return list(events_table(account).query_entities(f"PartitionKey eq '{key}'"))


def plan_json(azseed, account, *extra):
    done = run(azseed, "plan", *cs(account), *NOW, "--output", "json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_dry_run_on_an_empty_account_writes_nothing(azseed, account):
    done = run(azseed, "plan", *cs(account), *NOW, "--detailed-exitcode")
    assert done.returncode == 2, done.stderr
    assert "Plan: 118 to create, 0 to update, 0 to delete, 0 unchanged." in done.stdout
    assert "+ container speakers (access: container)" in done.stdout
    assert run(azseed, "apply", "--dry-run", *cs(account), *NOW).returncode == 0
    blobs = BlobServiceClient.from_connection_string(account.connection_string)
    assert [c.name for c in blobs.list_containers()] == []
    assert [t.name for t in TableServiceClient.from_connection_string(account.connection_string).list_tables()] == []


def test_apply_then_the_app_reads_it_and_a_replan_has_no_changes(azseed, account):
    done = run(azseed, "apply", *cs(account), *NOW)
    assert done.returncode == 0, done.stderr
    assert "Apply complete: 118 created, 0 updated, 0 deleted, 0 unchanged" in done.stdout

    again = run(azseed, "plan", *cs(account), *NOW, "--detailed-exitcode")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "No changes" in again.stdout
    assert run(azseed, "verify", *cs(account), *NOW).returncode == 0

    # The app's queries: partitions 'Events' and 'speakers', EventDate a DateTime.
    speakers = partition(account, "speakers")
    events = partition(account, "Events")
    assert len(speakers) == 8 and len(events) == 100
    assert {s["Name"] for s in speakers} >= {"Bart Tubalinal", "Ela Gardner"}
    keys = {s["RowKey"] for s in speakers}
    for event in events:
        assert hasattr(event["EventDate"], "tzinfo"), type(event["EventDate"])
        assert event["SpeakerKey"] in keys
    one = events[0]
    got = list(events_table(account).query_entities(f"PartitionKey eq 'Events' and RowKey eq '{one['RowKey']}'"))
    assert len(got) == 1 and got[0]["EventName"] == one["EventName"]
    # Every ImageUrl is fetchable anonymously as image/jpeg.
    for speaker in speakers:
        assert speaker["ImageUrl"].startswith(account.blob + "/speakers/")
        with urllib.request.urlopen(speaker["ImageUrl"], timeout=10) as response:
            assert response.status == 200
            assert response.headers["Content-Type"] == "image/jpeg"
            assert response.read(3) == b"\xff\xd8\xff"


def test_one_changed_field_is_exactly_one_update_and_apply_repairs_it(azseed, account):
    assert run(azseed, "apply", *cs(account), *NOW).returncode == 0
    table = events_table(account)
    victim = partition(account, "Events")[7]
    table.update_entity({"PartitionKey": "Events", "RowKey": victim["RowKey"], "EventName": "Changed by hand"}, mode=UpdateMode.MERGE)

    plan = plan_json(azseed, account)
    assert plan["summary"] == {"create": 0, "update": 1, "delete": 0, "unchanged": 117}
    [update] = [a for a in plan["actions"] if a["action"] == "update"]
    assert update["rowKey"] == victim["RowKey"]
    assert update["changes"] == {"EventName": {"from": "Changed by hand", "to": victim["EventName"]}}

    drift = run(azseed, "verify", *cs(account), *NOW)
    assert drift.returncode == 2 and "EventName" in drift.stdout
    fixed = run(azseed, "apply", *cs(account), *NOW)
    assert "Apply complete: 0 created, 1 updated, 0 deleted, 117 unchanged" in fixed.stdout
    assert table.get_entity("Events", victim["RowKey"])["EventName"] == victim["EventName"]
    assert run(azseed, "verify", *cs(account), *NOW).returncode == 0


def original_program_data(azseed, account, tmp_path):
    """The dataset's entities as the original program would have written them: random GUID
    RowKeys, and events pointing at the speakers' random keys."""
    out = tmp_path / "fixture"
    assert run(azseed, "generate", "--out", str(out), "--blob-endpoint", account.blob, *NOW).returncode == 0
    rows = [json.loads(line) for line in (out / "tables" / "events.jsonl").read_text().splitlines()]
    foreign = {}
    for row in rows:
        if row["PartitionKey"] == "speakers":
            foreign[row["RowKey"]] = str(uuid.uuid4())
    entities = []
    for row in rows:
        entity = {k: v for k, v in row.items() if not k.endswith("@odata.type")}
        if row["PartitionKey"] == "speakers":
            entity["RowKey"] = foreign[row["RowKey"]]
        else:
            entity["RowKey"] = str(uuid.uuid4())
            entity["SpeakerKey"] = foreign[row["SpeakerKey"]]
            entity["EventDate"] = datetime.strptime(row["EventDate"][:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
        entities.append(entity)
    return entities


def test_data_written_with_foreign_row_keys_is_recognised_not_duplicated(azseed, account, tmp_path):
    service = TableServiceClient.from_connection_string(account.connection_string)
    table = service.create_table("events")
    for entity in original_program_data(azseed, account, tmp_path):
        table.create_entity(entity)

    plan = plan_json(azseed, account)
    entity_actions = [a for a in plan["actions"] if a["kind"] == "entity"]
    assert len(entity_actions) == 108
    assert all(a["matchedBy"] == "naturalKey" and a["action"] == "unchanged" for a in entity_actions)
    assert plan["summary"] == {"create": 9, "update": 0, "delete": 0, "unchanged": 109}  # the container and its 8 blobs
    text = run(azseed, "plan", *cs(account), *NOW).stdout
    assert "recognised by its natural key" in text

    assert run(azseed, "apply", *cs(account), *NOW).returncode == 0
    assert len(partition(account, "speakers")) == 8
    assert len(partition(account, "Events")) == 100
    assert run(azseed, "verify", *cs(account), *NOW).returncode == 0


def test_original_speakers_with_random_events_keep_the_app_consistent(azseed, account, tmp_path):
    """Speakers from the original program are kept under their keys; new events point at them."""
    table = TableServiceClient.from_connection_string(account.connection_string).create_table("events")
    originals = [e for e in original_program_data(azseed, account, tmp_path) if e["PartitionKey"] == "speakers"]
    for entity in originals:
        table.create_entity(entity)
    table.create_entity({"PartitionKey": "Events", "RowKey": str(uuid.uuid4()), "EventName": "Old meetup"})

    plan = plan_json(azseed, account)
    assert plan["summary"]["create"] == 1 + 8 + 100  # container, blobs, events
    assert plan["notInDataset"] == {"entities:events": 1}
    assert run(azseed, "apply", *cs(account), *NOW).returncode == 0
    speaker_keys = {e["RowKey"] for e in originals}
    events = partition(account, "Events")
    assert len(events) == 101
    assert all(e["SpeakerKey"] in speaker_keys for e in events if e["EventName"] != "Old meetup")

    pruned = run(azseed, "apply", "--prune", *cs(account), *NOW)
    assert "0 created, 0 updated, 1 deleted" in pruned.stdout, pruned.stdout
    assert len(partition(account, "Events")) == 100
    assert run(azseed, "verify", *cs(account), *NOW).returncode == 0


def test_prune_and_reset_touch_only_what_the_dataset_owns(azseed, account):
    assert run(azseed, "apply", *cs(account), *NOW).returncode == 0
    table = events_table(account)
    table.create_entity({"PartitionKey": "Events", "RowKey": "extra", "EventName": "x"})
    table.create_entity({"PartitionKey": "other", "RowKey": "keep", "Note": "not the dataset's"})
    container = BlobServiceClient.from_connection_string(account.connection_string).get_container_client("speakers")
    container.upload_blob("notes.txt", b"hello")

    drift = run(azseed, "verify", *cs(account), *NOW)
    assert drift.returncode == 2
    assert "- blob speakers/notes.txt" in drift.stdout and "(Events, extra)" in drift.stdout
    assert "other" not in drift.stdout

    pruned = run(azseed, "apply", "--prune", *cs(account), *NOW)
    assert "0 created, 0 updated, 2 deleted" in pruned.stdout, pruned.stdout
    assert table.get_entity("other", "keep")["Note"] == "not the dataset's"

    reset = run(azseed, "reset", *cs(account), *NOW)
    assert reset.returncode == 0, reset.stderr
    assert "Reset complete: 116 deleted" in reset.stdout
    # A new user read '- blob speakers/DOrlova.jpg (not in the dataset)' and a hint at a
    # command that does not list a reset: each delete is the reset's.
    assert "- blob speakers/DOrlova.jpg (reset)" in reset.stdout, reset.stdout
    assert "more entities in events to delete\n" in reset.stdout, reset.stdout
    assert "not in the dataset" not in reset.stdout and "lists every action" not in reset.stdout, reset.stdout
    assert partition(account, "Events") == [] and partition(account, "speakers") == []
    assert [b.name for b in container.list_blobs()] == []
    assert table.get_entity("other", "keep")["Note"] == "not the dataset's"


def test_a_killed_apply_converges_when_run_again(azseed, tmp_path):
    """SIGKILL mid-apply — at the 20th `$batch` of ~60, counted by a proxy in front of the table
    port, not after a time: the release build wrote all 6,000 events between a poll that found
    it running and the kill (CI) — then the same apply again converges to exactly the dataset."""
    from test_migrate import HoldingProxy
    emulator = start_emulator(azseed, "--data-dir", str(tmp_path / "data"))
    proxy = HoldingProxy(int(emulator.table.rsplit(":", 1)[1].split("/")[0]))
    try:
        args = ["apply", "--connection-string", emulator.connection_string, *NOW, "--events", "6000"]
        through = emulator.connection_string.replace(emulator.table, emulator.table.replace(f":{proxy.upstream}/", f":{proxy.port}/"))
        env = {k: v for k, v in os.environ.items() if k != "AZURE_STORAGE_CONNECTION_STRING"}
        process = subprocess.Popen([azseed, "apply", "--connection-string", through, *NOW, "--events", "6000"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)

        def kill(number, sent):
            if number == 20 and sent:
                time.sleep(0.02)  # the storage applies what it was sent
                process.send_signal(signal.SIGKILL)

        proxy.on_batch = kill
        out, err = process.communicate(timeout=300)
        record([azseed, *args], out, err)
        assert process.returncode == -signal.SIGKILL, f"apply ended before its 20th batch ({proxy.batches} sent)"
        table = TableServiceClient.from_connection_string(emulator.connection_string).get_table_client("events")
        partial = sum(1 for _ in table.query_entities("PartitionKey eq 'Events'", select=["RowKey"]))
        assert 300 <= partial < 6000

        again = run(azseed, *args)
        assert again.returncode == 0, again.stderr
        keys = [e["RowKey"] for e in table.query_entities("PartitionKey eq 'Events'", select=["RowKey"])]
        assert len(keys) == len(set(keys)) == 6000
        assert run(azseed, "verify", "--connection-string", emulator.connection_string, *NOW, "--events", "6000").returncode == 0
    finally:
        proxy.close()
        stop_emulator(emulator)


def test_the_embedded_default_persists_across_invocations(azseed, tmp_path):
    first = run(azseed, "apply", *NOW, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "using the embedded storage in .azseed/storage" in first.stderr
    assert "azseed emulator" in first.stderr
    second = run(azseed, "plan", *NOW, "--detailed-exitcode", cwd=tmp_path)
    assert second.returncode == 0 and "No changes" in second.stdout
    assert run(azseed, "verify", *NOW, cwd=tmp_path).returncode == 0
    # What `azseed emulator` serves from the same folder is what was seeded.
    served = start_emulator(azseed, "--data-dir", str(tmp_path / ".azseed" / "storage"))
    try:
        table = TableServiceClient.from_connection_string(served.connection_string).get_table_client("events")
        assert sum(1 for _ in table.query_entities("PartitionKey eq 'Events'")) == 100
        speaker = next(iter(table.query_entities("PartitionKey eq 'speakers'")))
        assert speaker["ImageUrl"].startswith("http://127.0.0.1:10000/devstoreaccount1/speakers/")
    finally:
        stop_emulator(served)


def test_a_saved_plan_runs_only_while_the_target_is_unchanged(azseed, account, tmp_path):
    saved = tmp_path / "plan.json"
    made = run(azseed, "plan", *cs(account), *NOW, "--out", str(saved))
    assert made.returncode == 0 and saved.exists()
    assert KEY not in saved.read_text()
    assert json.loads(saved.read_text())["window"]["from"] == "2026-11-21T00:00:00.0000000Z"
    applied = run(azseed, "apply", *cs(account), "--plan", str(saved))
    assert applied.returncode == 0, applied.stderr
    assert "118 created" in applied.stdout

    second = tmp_path / "second.json"
    assert run(azseed, "plan", *cs(account), *NOW, "--out", str(second)).returncode == 0
    events_table(account).create_entity({"PartitionKey": "Events", "RowKey": "sneaked-in", "EventName": "x"})
    refused = run(azseed, "apply", *cs(account), "--plan", str(second))
    assert refused.returncode == 1
    assert "changed since the plan was made" in one_error(refused.stderr)

    other = start_emulator(azseed, "--in-memory")
    try:
        elsewhere = run(azseed, "apply", "--connection-string", other.connection_string, "--plan", str(saved))
        assert elsewhere.returncode == 1 and "the plan was made for" in one_error(elsewhere.stderr)
        assert [t.name for t in TableServiceClient.from_connection_string(other.connection_string).list_tables()] == []
    finally:
        stop_emulator(other)

    chat = run(azseed, "apply", *cs(account), "--plan", str(saved), "--dataset", str(ROOT / "Seeds" / "chat"))
    assert chat.returncode == 1 and "the plan is for dataset 'speakeasy'" in one_error(chat.stderr)
    flags = run(azseed, "apply", *cs(account), "--plan", str(saved), "--seed", "3")
    assert flags.returncode == 64


@pytest.mark.parametrize("args, code, words", [
    (["plan", "--connection-string", "AccountName=x;AccountKey=%%%"], 64, "connection string"),
    (["apply", "--connection-string", "nonsense"], 64, "connection string"),
    (["apply", "--concurrency", "0"], 64, "--concurrency"),
    (["apply", "--prune", "--connection-string", f"DefaultEndpointsProtocol=https;AccountName=prod;AccountKey={KEY};EndpointSuffix=core.windows.net"], 64, "--yes"),
    (["reset", "--connection-string", f"DefaultEndpointsProtocol=https;AccountName=prod;AccountKey={KEY};EndpointSuffix=core.windows.net"], 64, "--yes"),
    (["apply", "--plan", "/nonexistent/plan.json"], 1, "cannot read the plan file"),
    (["plan", "--dataset", "/nonexistent/dataset"], 1, "/nonexistent/dataset"),
    (["apply", "--events", "0"], 64, "--events"),
    (["verify", "--from", "2026-07-01", "--to", "2026-01-01"], 64, "not before its end"),
    (["apply", "--events", "99999999999"], 64, "cannot make 99999999999 unique entities"),
    (["apply", "--plan", "x.json", "--dry-run"], 64, "exclude each other"),
    (["plan", "--output", "yaml"], 64, "--output"),
])
def test_bad_input_gets_one_line_and_writes_nothing(azseed, tmp_path, args, code, words):
    done = run(azseed, *args, cwd=tmp_path)
    assert done.returncode == code, done.stderr
    assert done.stderr.count("\n") == 1 and words in done.stderr, done.stderr
    assert done.stdout == ""
    assert not (tmp_path / ".azseed").exists()


def test_a_garbage_saved_plan_is_refused(azseed, account, tmp_path):
    bad = tmp_path / "plan.json"
    bad.write_text("{ not json")
    done = run(azseed, "apply", *cs(account), "--plan", str(bad))
    assert done.returncode == 1 and "not a plan file" in one_error(done.stderr)


def test_wrong_credentials_and_unreachable_endpoints_are_explained(azseed, account):
    wrong = account.connection_string.replace(KEY, "d3Jvbmcga2V5IHdyb25nIGtleSB3cm9uZyBrZXk=")
    done = run(azseed, "plan", "--connection-string", wrong, *NOW)
    assert done.returncode == 1
    line = one_error(done.stderr)
    assert "403 AuthenticationFailed" in line and "AccountKey" in line

    started = time.time()
    closed = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + KEY + \
             ";BlobEndpoint=http://127.0.0.1:9/devstoreaccount1;TableEndpoint=http://127.0.0.1:9/devstoreaccount1"
    done = run(azseed, "plan", "--connection-string", closed, *NOW, timeout=60)
    assert done.returncode == 1 and "cannot reach http://127.0.0.1:9: connection refused" in one_error(done.stderr)
    assert time.time() - started < 10

    nowhere = f"DefaultEndpointsProtocol=https;AccountName=nosuchaccount;AccountKey={KEY};EndpointSuffix=invalid"
    done = run(azseed, "plan", "--connection-string", nowhere, *NOW, timeout=60)
    assert done.returncode == 1 and "does not resolve" in one_error(done.stderr)


def test_the_binary_alone_in_an_empty_folder_has_its_default_dataset(azseed, tmp_path):
    """Copied anywhere, as a single-binary CLI is installed: the default dataset travels inside."""
    import shutil
    alone = tmp_path / "bin" / "azseed"
    alone.parent.mkdir()
    shutil.copy2(azseed, alone)
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("AZURE_STORAGE_CONNECTION_STRING", "AZSEED_HOME")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    applied = run(str(alone), "apply", *NOW, cwd=work, env=env)
    assert applied.returncode == 0, applied.stderr
    assert "118 created" in applied.stdout
    planned = run(str(alone), "plan", *NOW, cwd=work, env=env)
    assert planned.returncode == 0 and "No changes" in planned.stdout, planned.stderr
    generated = run(str(alone), "generate", "--out", "fx", "--seed", "42", "--from", "2026-01-01", "--to", "2026-07-01", cwd=work, env=env)
    assert generated.returncode == 0 and "108 entities in events" in generated.stdout, generated.stderr
    assert sorted(p.name for p in (tmp_path / "cache" / "azseed").iterdir())[0].startswith("embedded-")
