"""Proof under faults: `azseed apply` through an emulator that fails one request in ten, and
`azseed apply` killed with SIGKILL at random points and run again. Each must end with the
account holding exactly the dataset: `verify` exits 0, counts are exact, nothing is
duplicated, read back through the official SDKs."""
import json
import os
import random
import signal
import subprocess
import time

import pytest
from azure.core.exceptions import ResourceNotFoundError
from azure.data.tables import TableServiceClient
from azure.storage.blob import BlobServiceClient

from conftest import port, record, run, start_emulator, stop_emulator
from test_seeding import NOW

# Kill-and-rerun trials: `make test` runs 8; AZSEED_KILL_TRIALS=100 for a longer soak.
KILL_TRIALS = int(os.environ.get("AZSEED_KILL_TRIALS", "8"))


def assert_exactly_the_dataset(azseed, connection_string, events):
    """verify exits 0 and the SDKs see 8 photos, 8 speakers and `events` distinct events."""
    verified = run(azseed, "verify", "--connection-string", connection_string, *NOW, "--events", str(events))
    assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr
    table = TableServiceClient.from_connection_string(connection_string).get_table_client("events")
    rows = list(table.query_entities("PartitionKey eq 'Events'", select=["RowKey", "EventName", "EventLocation", "SpeakerKey", "EventDate"]))
    keys = [r["RowKey"] for r in rows]
    assert len(keys) == len(set(keys)) == events
    natural = {(r["EventName"], r["EventLocation"], r["SpeakerKey"], r["EventDate"]) for r in rows}
    assert len(natural) == events, "two events share a natural key: a duplicate was written"
    speakers = list(table.query_entities("PartitionKey eq 'speakers'", select=["RowKey", "Name"]))
    assert len(speakers) == len({s["Name"] for s in speakers}) == 8
    assert {r["SpeakerKey"] for r in rows} <= {s["RowKey"] for s in speakers}
    container = BlobServiceClient.from_connection_string(connection_string).get_container_client("speakers")
    assert len(list(container.list_blobs())) == 8


@pytest.mark.parametrize("fault_seed", [1, 2, 3])
def test_apply_converges_through_injected_faults(azseed, tmp_path, fault_seed):
    data = tmp_path / "data"
    faulty = start_emulator(azseed, "--data-dir", str(data), "--fault-rate", "0.1", "--fault-seed", str(fault_seed))
    try:
        started = time.monotonic()
        applied = run(azseed, "apply", "--connection-string", faulty.connection_string, *NOW, "--events", "3000", timeout=240)
        elapsed = time.monotonic() - started
        assert applied.returncode == 0, applied.stderr
        assert "3018 created" in applied.stdout, applied.stdout
    finally:
        stop_emulator(faulty)
    # Checked through a fault-free emulator over the same folder and ports (ImageUrls name
    # the blob endpoint): what the faulty one stored.
    clean = start_emulator(azseed, "--data-dir", str(data), blob_port=port(faulty.blob), table_port=port(faulty.table))
    try:
        assert_exactly_the_dataset(azseed, clean.connection_string, 3000)
    finally:
        stop_emulator(clean)
    # A dropped connection must cost a retry, not a 30-second transport timeout.
    assert elapsed < 60, f"apply through faults took {elapsed:.1f} s"


def entity_count(table):
    try:
        return sum(1 for _ in table.query_entities("PartitionKey eq 'Events'", select=["RowKey"]))
    except Exception:
        return -1


def event_keys_in_apply_order(azseed, connection_string):
    """The events' RowKeys in the order the plan (and so apply) creates them."""
    planned = run(azseed, "plan", "--connection-string", connection_string, *NOW, "--events", "4000", "--output", "json")
    assert planned.returncode == 0, planned.stderr
    actions = json.loads(planned.stdout)["actions"]
    return [a["rowKey"] for a in actions if a.get("entityKind") == "event" and a["action"] == "create"]


def has_landed(table, row_key):
    """One point read: cheap enough to poll while apply runs flat out (counting all entities
    took longer than a whole apply once the transport stopped blocking threads)."""
    try:
        table.get_entity("Events", row_key, select=["RowKey"])
        return True
    except ResourceNotFoundError:
        return False


def test_apply_killed_at_random_points_converges(azseed, tmp_path):
    """Each trial: apply 4,000 events and SIGKILL it at a random point — early (planning,
    photos, first batches) or once the event at a random position of the plan has landed —
    kill the re-run too in some trials, then a last run must leave exactly the dataset."""
    rng = random.Random(20261121)
    emulator = start_emulator(azseed, "--data-dir", str(tmp_path / "data"))
    outcomes = []
    try:
        table = TableServiceClient.from_connection_string(emulator.connection_string).get_table_client("events")
        args = ["apply", "--connection-string", emulator.connection_string, *NOW, "--events", "4000"]
        keys = event_keys_in_apply_order(azseed, emulator.connection_string)
        assert len(keys) == 4000
        for trial in range(KILL_TRIALS):
            if trial > 0:  # start each trial from an empty account
                reset = run(azseed, "reset", "--connection-string", emulator.connection_string, *NOW, "--events", "4000")
                assert reset.returncode == 0, reset.stderr
            kills = 1 + (trial % 3 == 2)
            for kill in range(kills):
                process = subprocess.Popen([azseed, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                if trial % 4 == 0 and kill == 0:
                    time.sleep(rng.uniform(0.05, 0.4))  # early: planning, photos, the first batches
                else:
                    target = rng.randrange(100, 3900)  # somewhere among the events
                    deadline = time.monotonic() + 60
                    while process.poll() is None and time.monotonic() < deadline and not has_landed(table, keys[target]):
                        time.sleep(0.002)
                finished = process.poll() is not None
                process.send_signal(signal.SIGKILL)
                out, err = process.communicate()
                record([azseed, *args], out, err)
                outcomes.append((trial, entity_count(table), finished))
            again = run(azseed, *args)
            assert again.returncode == 0, again.stderr
            assert_exactly_the_dataset(azseed, emulator.connection_string, 4000)
    finally:
        stop_emulator(emulator)
    partial = [count for _, count, finished in outcomes if not finished and 0 < count < 4000]
    # The random points must really have cut runs short, mid-way, in most trials.
    assert len(partial) >= KILL_TRIALS // 2, outcomes


def test_embedded_apply_killed_then_rerun_converges(azseed, tmp_path):
    """The embedded storage lives in the killed process itself: what it acknowledged must be
    on disk, and the re-run must finish the job."""
    rng = random.Random(7)
    for trial in range(3):
        process = subprocess.Popen([azseed, "apply", *NOW, "--events", "3000"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.3, 1.5))
        process.send_signal(signal.SIGKILL)
        record([azseed, "apply"], *process.communicate())
        again = run(azseed, "apply", *NOW, "--events", "3000", cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        verified = run(azseed, "verify", *NOW, "--events", "3000", cwd=tmp_path)
        assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr
        reset = run(azseed, "reset", *NOW, "--events", "3000", cwd=tmp_path)
        assert reset.returncode == 0, reset.stderr
