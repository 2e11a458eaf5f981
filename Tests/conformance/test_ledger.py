"""Issue 29, item 2: "run it again and nothing changes" holds on any day. SpeakEasy's window is
relative to today; before the ledger, a plan the day after an apply wanted 100 new events, so a
nightly `azseed apply` piled them up. The target now keeps a ledger (table azseedledger) of each
apply's reference time, which plan, apply and verify reuse without --now; and nothing that reads
or writes user data (datasets, snapshots, scans, copies, exports) touches that table.

An apply recorded on a past day stands in for yesterday's run, so these tests need no clock of
their own (LedgerTests in Swift inject one)."""
import json

from azure.data.tables import TableServiceClient

from conftest import run, start_emulator, stop_emulator

PAST = "2026-01-05T10:00:00Z"


def test_a_plan_on_another_day_reuses_the_recorded_now_and_finds_no_changes(azseed, tmp_path):
    data = str(tmp_path / "storage")
    applied = run(azseed, "apply", "--data-dir", data, "--now", PAST)
    assert applied.returncode == 0, applied.stderr
    assert "Plan: 118 to create" in applied.stdout

    planned = run(azseed, "plan", "--data-dir", data, "--detailed-exitcode")
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert "No changes" in planned.stdout
    assert "now 2026-01-05T10:00:00Z, as recorded by the apply of" in planned.stderr
    assert "window 2026-01-05T00:00:00Z to 2026-07-04T00:00:00Z" in planned.stderr

    verified = run(azseed, "verify", "--data-dir", data)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    again = run(azseed, "apply", "--data-dir", data, "--output", "json")
    assert again.returncode == 0, again.stderr
    document = json.loads(again.stdout)
    assert document["changes"]["create"] == 0 and document["changes"]["unchanged"] == 118
    as_json = json.loads(run(azseed, "plan", "--data-dir", data, "--output", "json").stdout)
    assert as_json["now"] == "2026-01-05T10:00:00.0000000Z" and "nowMove" not in as_json


def test_now_today_moves_the_reference_time_and_the_plan_shows_the_move(azseed, tmp_path):
    data = str(tmp_path / "storage")
    assert run(azseed, "apply", "--data-dir", data, "--now", PAST).returncode == 0
    moved = run(azseed, "plan", "--data-dir", data, "--now", "today")
    assert moved.returncode == 0, moved.stderr
    first = moved.stdout.splitlines()[0]
    assert first.startswith("  ~ now 2026-01-05T10:00:00Z -> ") and "window 2026-01-05T00:00:00Z to 2026-07-04T00:00:00Z -> " in first, first
    assert "Plan: 100 to create, 0 to update, 0 to delete, 18 unchanged." in moved.stdout

    as_json = json.loads(run(azseed, "plan", "--data-dir", data, "--now", "today", "--output", "json").stdout)
    assert as_json["nowMove"]["from"] == "2026-01-05T10:00:00.0000000Z"

    assert run(azseed, "apply", "--data-dir", data, "--now", "today").returncode == 0
    after = run(azseed, "plan", "--data-dir", data)
    assert "No changes" in after.stdout and "as recorded by the apply of" in after.stderr

    # 'today' is --now's word only: a window bound is a date.
    refused = run(azseed, "plan", "--data-dir", data, "--from", "today")
    assert refused.returncode == 64 and "'today' is for --now" in refused.stderr


def test_a_saved_plan_records_its_own_now(azseed, tmp_path):
    data, plan = str(tmp_path / "storage"), str(tmp_path / "plan.json")
    assert run(azseed, "plan", "--data-dir", data, "--now", PAST, "--out", plan).returncode == 0
    applied = run(azseed, "apply", "--data-dir", data, "--plan", plan)
    assert applied.returncode == 0, applied.stderr
    assert "No changes" in run(azseed, "plan", "--data-dir", data).stdout


def test_the_ledger_stays_out_of_scans_copies_exports_and_datasets(azseed, tmp_path):
    source = start_emulator(azseed, "--in-memory")
    target = start_emulator(azseed, "--in-memory")
    try:
        assert run(azseed, "apply", "--connection-string", source.connection_string, "--now", PAST).returncode == 0
        tables = [t.name for t in TableServiceClient.from_connection_string(source.connection_string).list_tables()]
        assert "azseedledger" in tables

        scanned = run(azseed, "scan", "--connection-string", source.connection_string, "--out", str(tmp_path / "scanned"))
        assert scanned.returncode == 0, scanned.stderr
        assert "azseedledger" not in (tmp_path / "scanned" / "dataset.yaml").read_text()

        copied = run(azseed, "copy", "--from", source.connection_string, "--connection-string", target.connection_string)
        assert copied.returncode == 0, copied.stderr
        assert "azseedledger" not in [t.name for t in TableServiceClient.from_connection_string(target.connection_string).list_tables()]

        for command in (["export", "--connection-string", source.connection_string, "--table", "azseedledger", "--container", "speakers",
                         "--out", str(tmp_path / "export")],
                        ["copy", "--from", source.connection_string, "--connection-string", target.connection_string, "--table", "AzseedLedger"],
                        ["scan", "--connection-string", source.connection_string, "--table", "azseedledger", "--out", str(tmp_path / "s2")]):
            refused = run(azseed, *command)
            assert refused.returncode == 64 and "azseed's ledger" in refused.stderr, (command[0], refused.stderr)
            assert refused.stderr.count("\n") == 1
    finally:
        stop_emulator(source)
        stop_emulator(target)

    # A dataset's author and a snapshot's supplier cannot write azseed's records either.
    dataset = tmp_path / "ds"
    dataset.mkdir()
    (dataset / "dataset.yaml").write_text("name: d\nseed: 1\nwindow: { from: today, days: 1 }\ntables:\n  - name: azseedledger\n"
                                          "    kinds:\n      - { name: k, partition: p, key: [A], rows: [{ A: x }] }\n")
    refused = run(azseed, "plan", "--dataset", str(dataset), "--data-dir", str(tmp_path / "x"))
    assert refused.returncode != 0 and "azseed's ledger" in refused.stderr, refused.stderr


def test_a_snapshot_holding_the_ledger_table_is_refused(azseed, tmp_path):
    data = str(tmp_path / "storage")
    assert run(azseed, "apply", "--data-dir", data, "--now", PAST).returncode == 0
    snapshot = tmp_path / "snap"
    exported = run(azseed, "export", "--data-dir", data, "--out", str(snapshot))
    assert exported.returncode == 0, exported.stderr
    manifest = json.loads((snapshot / "manifest.json").read_text())
    assert [t["name"] for t in manifest["tables"]] == ["events"]
    # The supplier renames the table (its file and entry) to the ledger's.
    entry = manifest["tables"][0]
    (snapshot / "tables" / "events.jsonl").rename(snapshot / "tables" / "azseedledger.jsonl")
    entry["name"], entry["file"] = "azseedledger", "tables/azseedledger.jsonl"
    (snapshot / "manifest.json").write_text(json.dumps(manifest))
    refused = run(azseed, "import", str(snapshot), "--data-dir", str(tmp_path / "other"))
    assert refused.returncode == 1 and "azseed's ledger" in refused.stderr and refused.stderr.count("\n") == 1, refused.stderr
    assert not (tmp_path / "other").exists()


def test_window_flags_are_checked_against_the_recorded_now_not_the_clock(azseed, tmp_path):
    """From an attacker's review: with the ledger's time in January, `--to 2026-03-01` (before
    today) was refused as a window ending before it starts — checked against the clock, though
    the run would use the recorded time."""
    data = str(tmp_path / "storage")
    assert run(azseed, "apply", "--data-dir", data, "--now", PAST).returncode == 0
    planned = run(azseed, "plan", "--data-dir", data, "--to", "2026-03-01")
    assert planned.returncode == 0, planned.stderr
    assert "window 2026-01-05T00:00:00Z to 2026-03-01T00:00:00Z" in planned.stderr
    # With no record, the clock's window is the one refused, as before.
    fresh = run(azseed, "plan", "--data-dir", str(tmp_path / "fresh"), "--to", "2026-03-01")
    assert fresh.returncode == 64 and "is not before its end" in fresh.stderr, fresh.stderr


def test_a_saved_plan_with_an_edited_now_is_refused(azseed, tmp_path):
    data, plan = str(tmp_path / "storage"), tmp_path / "plan.json"
    assert run(azseed, "plan", "--data-dir", data, "--now", PAST, "--out", str(plan)).returncode == 0
    document = json.loads(plan.read_text())
    document["now"] = "9999-12-31T23:59:59.0000000Z"
    plan.write_text(json.dumps(document))
    refused = run(azseed, "apply", "--data-dir", data, "--plan", str(plan))
    assert refused.returncode == 1 and "gives dataset 'speakeasy' no window" in refused.stderr and refused.stderr.count("\n") == 1, refused.stderr
    assert "No changes" not in refused.stdout
