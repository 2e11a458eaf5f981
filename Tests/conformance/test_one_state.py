"""One state (issue 47): the dataset, its migrations and the ledger agree on every run, tried as
a new user runs azseed — the joints between features, each a test that failed before."""
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import ROOT, run, start_emulator, stop_emulator

SPEAKEASY = ROOT / "Seeds" / "speakeasy"


def ok(done):
    assert done.returncode == 0, done.stderr
    return done


def files_under(folder):
    return sorted(str(p.relative_to(folder)) for p in pathlib.Path(folder).rglob("*"))


def test_generated_blobs_work_with_a_recorded_time(azseed, tmp_path):
    """The README's nightly run: apply with --now, change the blob group, apply again without
    it (the recorded time). Failed with 'a file operation failed: no such file or folder'."""
    dataset = tmp_path / "myseed"
    dataset.mkdir()
    text = "name: myseed\ncontainers:\n  - name: reports\n    blobs:\n      - count: {n}\n        name: \"raw/{{{{Index}}}}.bin\"\n        content: {{ bytes: [1024, 2048] }}\n"
    (dataset / "dataset.yaml").write_text(text.format(n=12))
    ok(run(azseed, "apply", "--dataset", str(dataset), "--now", "2026-11-21", cwd=tmp_path))
    (dataset / "dataset.yaml").write_text(text.format(n=13))
    done = ok(run(azseed, "apply", "--dataset", str(dataset), cwd=tmp_path))
    assert "1 created" in done.stdout
    # After the default SpeakEasy apply in the same folder too.
    ok(run(azseed, "apply", "--now", "2026-11-21", cwd=tmp_path))
    ok(run(azseed, "apply", "--dataset", str(dataset), cwd=tmp_path))


def test_the_ledger_records_every_input_and_a_plain_verify_checks_them(azseed, tmp_path):
    """`verify` with no flags after `apply --seed 7 --events 120 --from … --to …` reported drift
    and its hint put seed 2012 back."""
    ok(run(azseed, "apply", "--seed", "7", "--events", "120", "--from", "2027-01-01", "--to", "2027-03-01", "--prune", cwd=tmp_path))
    done = ok(run(azseed, "verify", cwd=tmp_path))
    notes = [line for line in done.stderr.splitlines() if "as recorded by the apply of" in line]
    assert len(notes) == 1, done.stderr  # one line says what was reused
    assert "seed 7" in notes[0] and "event=120" in notes[0] and "2027-01-01" in notes[0], notes
    assert "holds exactly" in done.stdout
    # An input given that differs is named before the plan.
    other = run(azseed, "plan", "--seed", "2012", "--detailed-exitcode", cwd=tmp_path)
    assert other.returncode == 2
    assert "recorded seed 7; this run uses 2012" in other.stderr


def test_a_reseed_keeps_what_migrations_did(azseed, tmp_path):
    """`migrate apply` then `apply`: the re-seed put the migrated properties back (8 created,
    108 updated) while `migrate status` said applied."""
    ok(run(azseed, "apply", "--now", "2026-11-21", cwd=tmp_path))
    done = ok(run(azseed, "migrate", "apply", "--dataset", str(SPEAKEASY), cwd=tmp_path))
    assert "Applied 3 migrations" in done.stdout
    plan = run(azseed, "plan", "--detailed-exitcode", cwd=tmp_path)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    again = ok(run(azseed, "apply", cwd=tmp_path))
    assert "0 created, 0 updated, 0 deleted" in again.stdout or "No changes" in again.stdout, again.stdout
    ok(run(azseed, "verify", cwd=tmp_path))
    status = ok(run(azseed, "migrate", "status", "--dataset", str(SPEAKEASY), cwd=tmp_path))
    assert "pending" not in status.stdout


def test_a_dry_run_writes_nothing(azseed, tmp_path):
    """`azseed plan` in a folder without `.azseed/storage` created it."""
    before = files_under(tmp_path)
    for args in (["plan"], ["verify"], ["apply", "--dry-run"], ["reset", "--dry-run"],
                 ["migrate", "plan", "--dataset", str(SPEAKEASY)], ["migrate", "status", "--dataset", str(SPEAKEASY)],
                 ["migrate", "validate", "--dataset", str(SPEAKEASY)]):
        done = run(azseed, *args, "--now", "2026-11-21", cwd=tmp_path) if args[0] != "migrate" else run(azseed, *args, cwd=tmp_path)
        # (`migrate plan` over an empty account says its table does not exist: exit 1.)
        assert done.returncode in (0, 1, 2) and "cannot" not in done.stderr, (args, done.stderr)
        assert files_under(tmp_path) == before, f"azseed {' '.join(args)} wrote {set(files_under(tmp_path)) - set(before)}"


def test_the_built_in_dataset_is_named_as_such_and_its_hints_work(azseed, tmp_path):
    """Hints named `~/.cache/azseed/embedded-…/Seeds/speakeasy`. A copy of the binary away from
    the repository uses the dataset compiled into it."""
    binary = tmp_path / "bin" / "azseed"
    binary.parent.mkdir()
    shutil.copy2(azseed, binary)
    env = {k: v for k, v in os.environ.items() if k not in ("AZURE_STORAGE_CONNECTION_STRING", "AZSEED_HOME")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    work = tmp_path / "work"
    work.mkdir()
    done = ok(run(str(binary), "apply", "--now", "2026-11-21", cwd=work, env=env))
    text = done.stdout + done.stderr
    assert "speakeasy (built in)" in text and str(tmp_path / "cache") not in text and "embedded-" not in text, text
    hint = [line for line in done.stderr.splitlines() if "not applied to this target" in line]
    assert hint and "run 'azseed migrate plan' to see" in hint[0], done.stderr
    # The hint, typed as shown, works.
    typed = run(str(binary), "migrate", "plan", cwd=work, env=env)
    assert typed.returncode == 0 and "V1" in typed.stdout, typed.stderr


def test_a_wrong_key_is_one_line(azseed, emulator):
    """A wrong account key printed a misleading ledger warning first, then the real 403."""
    wrong = emulator.connection_string.replace("AccountKey=Eby8", "AccountKey=Xby8")
    for args in (["plan"], ["verify"], ["apply", "--yes"]):
        done = run(azseed, *args, "--now", "2026-11-21", "--connection-string", wrong)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, (args, lines)
        assert "403" in lines[0] or "key" in lines[0], lines


def test_a_selection_that_selects_nothing_says_why(azseed, emulator, tmp_path):
    """`where: "Amount gt 100"` on Double values, and `PartitionKey eq orders` unquoted, selected
    0 entities and the plan said only "0 entities"."""
    from azure.data.tables import TableServiceClient

    table = TableServiceClient.from_connection_string(emulator.connection_string).create_table_if_not_exists("orders")
    for i in range(5):
        table.upsert_entity({"PartitionKey": "orders", "RowKey": str(i), "Amount": 150.5 + i})
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "V1__raise.yaml").write_text(
        "description: raise\noperations:\n"
        "  - set-property: {table: orders, where: \"Amount gt 100\", name: Big, value: true}\n"
        "  - set-property: {table: orders, where: \"PartitionKey eq orders\", name: Seen, value: true}\n")
    done = ok(run(azseed, "migrate", "plan", "--migrations", str(folder), "--connection-string", emulator.connection_string))
    warnings = [line for line in done.stdout.splitlines() if "warning:" in line]
    assert len(warnings) == 2, done.stdout
    assert "Amount holds Double" in warnings[0] and "Int32" in warnings[0], warnings
    assert "'orders' is read as a property" in warnings[1], warnings


def test_migrate_plan_with_a_problem_prints_only_the_problem(azseed, tmp_path):
    """A changed checksum printed "No pending migrations in migrations (3 known)." on stdout,
    then the error."""
    emulator = start_emulator(azseed, "--in-memory")
    try:
        ok(run(azseed, "apply", "--now", "2026-11-21", "--connection-string", emulator.connection_string, "--yes"))
        plan_with_a_changed_file(azseed, emulator, tmp_path)
    finally:
        stop_emulator(emulator)


def plan_with_a_changed_file(azseed, emulator, tmp_path):
    folder = tmp_path / "migrations"
    shutil.copytree(SPEAKEASY / "migrations", folder)
    ok(run(azseed, "migrate", "apply", "--migrations", str(folder), "--connection-string", emulator.connection_string, "--yes"))
    with open(folder / "V1__rename_location_to_venue.yaml", "a") as file:
        file.write("# edited\n")
    done = run(azseed, "migrate", "plan", "--migrations", str(folder), "--connection-string", emulator.connection_string)
    assert done.returncode == 1
    assert done.stdout == ""
    assert len([line for line in done.stderr.splitlines() if line.strip()]) == 1, done.stderr


def test_apply_migrate_seeds_and_migrates_in_one_command(azseed, tmp_path):
    done = ok(run(azseed, "apply", "--migrate", "--now", "2026-11-21", cwd=tmp_path))
    assert "Applied 3 migrations" in done.stdout, done.stdout
    assert run(azseed, "plan", "--detailed-exitcode", cwd=tmp_path).returncode == 0
    again = ok(run(azseed, "apply", "--migrate", cwd=tmp_path))
    assert "No pending migrations" in again.stdout, again.stdout
    assert run(azseed, "apply", "--migrate", "--dry-run", cwd=tmp_path).returncode == 64


def test_a_users_own_migrations_folder_is_the_one_every_command_follows(azseed, tmp_path):
    """From a new user's report: a migration written into ./migrations (as the guide says) was
    applied by `azseed migrate apply`, but `plan`, `apply` and `verify` followed the built-in
    dataset's migrations folder — the same version in another file — and failed ("bytes have
    changed"); `apply --migrate` applied the built-in ones instead. Every command now reads the
    same folder: --migrations, else --dataset's, else ./migrations, else the built-in one."""
    (tmp_path / "migrations").mkdir()
    (tmp_path / "migrations" / "V1__place.yaml").write_text(
        "description: EventLocation becomes Place\noperations:\n"
        "  - rename-property: {table: events, from: EventLocation, to: Place}\n")
    ok(run(azseed, "apply", "--now", "2026-11-21", "--events", "200", cwd=tmp_path))
    done = ok(run(azseed, "migrate", "apply", cwd=tmp_path))
    assert "Applied 1 migration" in done.stdout, done.stdout
    plan = run(azseed, "plan", "--detailed-exitcode", cwd=tmp_path)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    ok(run(azseed, "verify", cwd=tmp_path))
    again = ok(run(azseed, "apply", "--migrate", cwd=tmp_path))
    assert "No pending migrations" in again.stdout, again.stdout
    status = ok(run(azseed, "migrate", "status", "--output", "json", cwd=tmp_path))
    assert "checksum-changed" not in status.stdout and "missing-file" not in status.stdout, status.stdout


def test_a_forged_ledger_input_is_refused_or_said(azseed, tmp_path):
    """Whoever may write the target's tables edits the apply record: a `Given` naming something
    else is damage, refused in one line; a forged seed marked as given is reused only with the
    one line that says so."""
    from azure.data.tables import TableServiceClient

    emulator = start_emulator(azseed, "--in-memory")
    try:
        cs = emulator.connection_string
        ok(run(azseed, "apply", "--now", "2026-11-21", "--seed", "5", "--connection-string", cs, "--yes"))
        ledger = TableServiceClient.from_connection_string(cs).get_table_client("azseedledger")
        record = ledger.get_entity("apply", "speakeasy")
        assert record["Given"] == "seed"
        record["Given"] = "seed,evil"
        ledger.update_entity(record, mode="replace")
        done = run(azseed, "plan", "--connection-string", cs)
        assert done.returncode == 1 and len([l for l in done.stderr.splitlines() if l.strip()]) == 1, done.stderr
        assert "Given" in done.stderr, done.stderr
        record["Given"] = "seed"
        record["Seed"] = "99"
        ledger.update_entity(record, mode="replace")
        done = run(azseed, "plan", "--connection-string", cs)
        assert "seed 99, as recorded by the apply of" in done.stderr, done.stderr
    finally:
        stop_emulator(emulator)


def test_a_damaged_migration_record_or_a_migration_under_way_stops_a_seed(azseed, tmp_path):
    """An attacker's review: one junk row in the ledger's `migration` partition read as "no
    migration applied", so `apply` undid all three; a seed beside a migration in shards undid
    what the shards had done."""
    from azure.data.tables import TableServiceClient

    emulator = start_emulator(azseed, "--in-memory")
    try:
        cs = emulator.connection_string
        ok(run(azseed, "apply", "--migrate", "--now", "2026-11-21", "--events", "5", "--connection-string", cs, "--yes"))
        ledger = TableServiceClient.from_connection_string(cs).get_table_client("azseedledger")
        ledger.upsert_entity({"PartitionKey": "migration", "RowKey": "junk", "Schema": "garbage"})
        for args in (["plan"], ["apply", "--yes"]):
            done = run(azseed, *args, "--connection-string", cs)
            assert done.returncode == 1 and len([l for l in done.stderr.splitlines() if l.strip()]) == 1, (args, done.stdout, done.stderr)
            assert "0 created" not in done.stdout and "updated" not in done.stdout
        ledger.delete_entity("migration", "junk")
        assert run(azseed, "plan", "--detailed-exitcode", "--connection-string", cs).returncode == 0
        # A migration applied in shards, one shard done: a seed waits for the rest.
        folder = tmp_path / "migrations"
        folder.mkdir()
        (folder / "V4__more.yaml").write_text(
            "description: more\noperations:\n  - set-property: {table: events, where: \"PartitionKey eq 'Events'\", name: Flag, value: true}\n")
        dataset = tmp_path / "ds"
        shutil.copytree(SPEAKEASY, dataset)
        shutil.copy(folder / "V4__more.yaml", dataset / "migrations")
        ok(run(azseed, "migrate", "apply", "--dataset", str(dataset), "--shard", "0/2", "--connection-string", cs, "--yes"))
        done = run(azseed, "apply", "--dataset", str(dataset), "--connection-string", cs, "--yes")
        assert done.returncode == 1 and "being applied or undone" in done.stderr, (done.stdout, done.stderr)
        ok(run(azseed, "migrate", "apply", "--dataset", str(dataset), "--shard", "1/2", "--connection-string", cs, "--yes"))
        assert run(azseed, "plan", "--dataset", str(dataset), "--detailed-exitcode", "--connection-string", cs).returncode == 0
    finally:
        stop_emulator(emulator)


def test_the_speakeasy_migrations_rehearse_exactly_on_a_fresh_seed(azseed, tmp_path):
    """A new user's first rehearsal, on the tool's own example: `azseed apply` then `azseed
    migrate rehearse` once reported `container photos: gone after undo` and exit 1 — the container
    V3's move creates, which undo leaves empty as documented."""
    ok(run(azseed, "apply", "--now", "2026-11-21", cwd=tmp_path))
    done = ok(run(azseed, "migrate", "rehearse", cwd=tmp_path))
    assert "Apply then undo gave back every entity and blob byte for byte." in done.stdout, done.stdout
    status = ok(run(azseed, "migrate", "status", cwd=tmp_path))
    assert [line.split()[1] for line in status.stdout.splitlines()[1:4]] == ["pending"] * 3, status.stdout
