"""Sharded runs (`--shard I/N`, `--shards N` with JOB_COMPLETION_INDEX): N processes together do
exactly what one does, with no shared state beyond the account; `export --shard` + `snapshot
merge` gives the unsharded export byte for byte; the Kubernetes example parses and its command
line runs as N local processes."""
import filecmp
import json
import os
import subprocess

import pytest
import yaml

from conftest import ROOT, run, start_emulator, stop_emulator

EVENTS = ["--now", "2026-11-21", "--events", "2000"]


def same_tree(a, b):
    compared = filecmp.dircmp(a, b)
    assert not compared.left_only and not compared.right_only and not compared.diff_files, (compared.left_only, compared.right_only, compared.diff_files)
    for sub in compared.common_dirs:
        same_tree(a / sub, b / sub)
    # dircmp compares shallowly (size and time): compare the bytes too.
    for name in compared.common_files:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def apply_in_parallel(azseed, emulator, n, use_index_env):
    """N processes at once, as N pods would run."""
    processes = []
    for i in range(n):
        env = {k: v for k, v in os.environ.items() if k != "AZURE_STORAGE_CONNECTION_STRING"}
        args = [azseed, "apply", "--connection-string", emulator.connection_string, *EVENTS]
        if n > 1 and use_index_env:
            env["JOB_COMPLETION_INDEX"] = str(i)
            args += ["--shards", str(n)]
        elif n > 1:
            args += ["--shard", f"{i}/{n}"]
        processes.append(subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
    outputs = [p.communicate(timeout=300) for p in processes]
    for p, (out, err) in zip(processes, outputs):
        assert p.returncode == 0, err
    return [out for out, _ in outputs]


@pytest.mark.parametrize("n", [1, 2, 4])
def test_n_processes_give_the_account_one_process_gives(azseed, tmp_path, n):
    reference = start_emulator(azseed, "--in-memory")
    sharded = start_emulator(azseed, "--in-memory")
    try:
        apply_in_parallel(azseed, reference, 1, False)
        outputs = apply_in_parallel(azseed, sharded, n, use_index_env=(n == 4))
        created = sum(int(line.split("Apply complete: ")[1].split(" created")[0]) for out in outputs for line in out.splitlines()
                      if line.startswith("Apply complete: "))
        # Each of the 2,008 entities and 8 blobs is written once, by its shard; the container and
        # the table by every shard that found them missing.
        assert 2016 + 2 <= created <= 2016 + 2 * n, outputs
        verified = run(azseed, "verify", "--connection-string", sharded.connection_string, *EVENTS)
        assert verified.returncode == 0, verified.stdout + verified.stderr
        for name, target in (("one", reference), ("many", sharded)):
            done = run(azseed, "export", "--connection-string", target.connection_string, "--out", str(tmp_path / name))
            assert done.returncode == 0, done.stderr
        # The same blobs and entities, byte for byte but for each emulator's own endpoint (two
        # emulators, two ports: ImageUrl names it); the manifests differ only in the source.
        same_tree(tmp_path / "one" / "blobs", tmp_path / "many" / "blobs")
        ours = (tmp_path / "one" / "tables" / "events.jsonl").read_text().replace(reference.blob, "<blob endpoint>")
        theirs = (tmp_path / "many" / "tables" / "events.jsonl").read_text().replace(sharded.blob, "<blob endpoint>")
        assert ours == theirs
        one, many = (json.loads((tmp_path / name / "manifest.json").read_text()) for name in ("one", "many"))
        for manifest in (one, many):
            del manifest["source"]
            for table in manifest["tables"]:
                del table["sha256"]  # of the text compared above, endpoints included
        assert one == many
        # Run again, sharded: nothing to do.
        again = apply_in_parallel(azseed, sharded, n, use_index_env=False)
        assert all("No changes" in out for out in again), again
    finally:
        stop_emulator(reference)
        stop_emulator(sharded)


def test_partial_exports_merge_into_the_unsharded_export(azseed, tmp_path):
    emulator = start_emulator(azseed, "--in-memory")
    try:
        apply_in_parallel(azseed, emulator, 1, False)
        for i in range(3):
            done = run(azseed, "export", "--connection-string", emulator.connection_string, "--out", str(tmp_path / f"part{i}"), "--shard", f"{i}/3",
                       "--export-id", "nightly-1")
            assert done.returncode == 0, done.stderr
        whole = run(azseed, "export", "--connection-string", emulator.connection_string, "--out", str(tmp_path / "whole"))
        assert whole.returncode == 0, whole.stderr
        parts = [str(tmp_path / f"part{i}") for i in range(3)]
        merged = run(azseed, "snapshot", "merge", *parts, "--out", str(tmp_path / "merged"))
        assert merged.returncode == 0 and "Merged 3 shards" in merged.stdout, merged.stderr
        same_tree(tmp_path / "whole", tmp_path / "merged")
        # Each part imports as its shard: a fresh account, three sharded imports, verify.
        fresh = start_emulator(azseed, "--in-memory")
        try:
            for i in range(3):
                done = run(azseed, "import", parts[i], "--connection-string", fresh.connection_string, "--shard", f"{i}/3")
                assert done.returncode == 0, done.stderr
            # The account now holds exactly what was exported (import copies values as they
            # are, ImageUrl included).
            done = run(azseed, "export", "--connection-string", fresh.connection_string, "--out", str(tmp_path / "again"))
            assert done.returncode == 0, done.stderr
            for part in ("tables", "blobs"):
                same_tree(tmp_path / "whole" / part, tmp_path / "again" / part)
        finally:
            stop_emulator(fresh)
        # A missing shard, or a folder that is no partial snapshot, is refused in one line.
        missing = run(azseed, "snapshot", "merge", *parts[:2], "--out", str(tmp_path / "m2"))
        assert missing.returncode == 1 and "exactly once" in missing.stderr and not (tmp_path / "m2").exists()
        whole_too = run(azseed, "snapshot", "merge", str(tmp_path / "whole"), "--out", str(tmp_path / "m3"))
        assert whole_too.returncode == 1 and "not a partial snapshot" in whole_too.stderr
        # Issue 28 item 11, as a snapshot's supplier would try it. A shard exported without an id is refused at once.
        no_id = run(azseed, "export", "--connection-string", emulator.connection_string, "--out", str(tmp_path / "x"), "--shard", "0/3")
        assert no_id.returncode == 64 and "--export-id" in no_id.stderr and not (tmp_path / "x").exists()
        unsharded = run(azseed, "export", "--connection-string", emulator.connection_string, "--out", str(tmp_path / "y"), "--export-id", "x")
        assert unsharded.returncode == 64 and "--shard" in unsharded.stderr and not (tmp_path / "y").exists()
        # Shard 1 of another export (the account changed in between) does not merge with this one's.
        run(azseed, "apply", "--connection-string", emulator.connection_string, "--now", "2026-11-22", "--events", "20", "--yes")
        other = run(azseed, "export", "--connection-string", emulator.connection_string, "--out", str(tmp_path / "other1"), "--shard", "1/3",
                    "--export-id", "nightly-2")
        assert other.returncode == 0, other.stderr
        mixed = run(azseed, "snapshot", "merge", parts[0], str(tmp_path / "other1"), parts[2], "--out", str(tmp_path / "m4"))
        assert mixed.returncode == 1 and "different exports" in mixed.stderr and not (tmp_path / "m4").exists(), mixed.stderr
        # A part relabelled as another shard (its manifest edited to claim shard 1) is refused, not merged into duplicate keys.
        import json, shutil
        shutil.copytree(parts[0], tmp_path / "fake1")
        manifest = json.loads((tmp_path / "fake1" / "manifest.json").read_text())
        manifest["source"]["shard"] = "1/3"
        (tmp_path / "fake1" / "manifest.json").write_text(json.dumps(manifest))
        forged = run(azseed, "snapshot", "merge", parts[0], str(tmp_path / "fake1"), parts[2], "--out", str(tmp_path / "m5"))
        assert forged.returncode == 1 and "claims shard 1/3" in forged.stderr and not (tmp_path / "m5").exists(), forged.stderr
    finally:
        stop_emulator(emulator)


def test_shard_flags_are_checked_before_anything_happens(azseed, emulator, tmp_path):
    cs = ["--connection-string", emulator.connection_string]
    env = {k: v for k, v in os.environ.items() if k not in ("AZURE_STORAGE_CONNECTION_STRING", "JOB_COMPLETION_INDEX")}
    for args, message in [(["--shard", "4/4"], "0 ≤ I < N"), (["--shard", "x"], "I/N"), (["--shards", "3"], "JOB_COMPLETION_INDEX"),
                          (["--shard", "0/2", "--shards", "2"], "exclude each other")]:
        done = run(azseed, "plan", *cs, *EVENTS, *args, env=env)
        assert done.returncode == 64 and message in done.stderr, (args, done.stderr)
    done = run(azseed, "plan", *cs, *EVENTS, "--shards", "3", env={**env, "JOB_COMPLETION_INDEX": "3"})
    assert done.returncode == 64 and "0 to 2" in done.stderr
    # A saved plan is carried out by the shard that made it.
    saved = run(azseed, "plan", *cs, *EVENTS, "--shard", "1/2", "--out", str(tmp_path / "p.json"), env=env)
    assert saved.returncode in (0, 2), saved.stderr
    refused = run(azseed, "apply", *cs, "--plan", str(tmp_path / "p.json"), env=env)
    assert refused.returncode == 1 and "shard 1/2" in refused.stderr, refused.stderr


def test_the_kubernetes_example_parses_and_its_command_runs_as_local_processes(azseed):
    manifest = yaml.safe_load((ROOT / "examples" / "kubernetes" / "seed-indexed-job.yaml").read_text())
    assert manifest["kind"] == "Job" and manifest["spec"]["completionMode"] == "Indexed"
    n = manifest["spec"]["completions"]
    args = manifest["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[0] == "apply" and args[args.index("--shards") + 1] == str(n)
    # The same arguments, fewer events, as N local processes with the index Kubernetes would set.
    local = [a if a != "1000000" else "300" for a in args]
    emulator = start_emulator(azseed, "--in-memory")
    try:
        processes = []
        for i in range(n):
            env = {**{k: v for k, v in os.environ.items() if k != "AZURE_STORAGE_CONNECTION_STRING"},
                   "JOB_COMPLETION_INDEX": str(i), "AZURE_STORAGE_CONNECTION_STRING": emulator.connection_string}
            processes.append(subprocess.Popen([azseed, *local], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
        for p in processes:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
        verified = run(azseed, "verify", "--connection-string", emulator.connection_string, "--events", "300", "--now", "2026-11-21")
        assert verified.returncode == 0, verified.stdout
    finally:
        stop_emulator(emulator)


def test_saved_sharded_plans_apply_one_after_another(azseed, tmp_path):
    emulator = start_emulator(azseed, "--in-memory")
    cs = ["--connection-string", emulator.connection_string]
    try:
        for i in range(2):
            saved = run(azseed, "plan", *cs, *EVENTS, "--shard", f"{i}/2", "--out", str(tmp_path / f"p{i}.json"))
            assert saved.returncode == 0, saved.stderr
        # Shard 0 creates the container and table first; shard 1's plan (which also creates
        # them) still holds: every shard's plan records them as its own actions leave them.
        for i in range(2):
            done = run(azseed, "apply", *cs, "--plan", str(tmp_path / f"p{i}.json"), "--shard", f"{i}/2")
            assert done.returncode == 0, done.stderr
        verified = run(azseed, "verify", *cs, *EVENTS)
        assert verified.returncode == 0, verified.stdout
    finally:
        stop_emulator(emulator)


def test_a_partition_with_foreign_rowkeys_is_not_sharded(azseed, tmp_path):
    """An account seeded with random RowKeys is recognised by natural key, which needs whole
    partitions: every shard refuses alike, and the unsharded run does it."""
    from azure.data.tables import TableServiceClient
    emulator = start_emulator(azseed, "--in-memory")
    cs = ["--connection-string", emulator.connection_string]
    try:
        table = TableServiceClient.from_connection_string(emulator.connection_string).create_table("events")
        table.create_entity({"PartitionKey": "speakers", "RowKey": "3f2a8c1e-0000-4000-8000-000000000001", "Name": "Bert Johnson",
                             "Title": "Solutions Architect"})
        for i in range(2):
            done = run(azseed, "apply", *cs, *EVENTS, "--shard", f"{i}/2")
            errors = [l for l in done.stderr.splitlines() if l.startswith("azseed: error:")]
            assert done.returncode == 1 and len(errors) == 1 and "without --shard" in errors[0], done.stderr
        assert len(list(table.list_entities())) == 1  # nothing written
        done = run(azseed, "apply", *cs, *EVENTS)
        assert done.returncode == 0 and "entity events (speakers, 3f2a8c1e" in done.stdout and "recognised by its natural key" in done.stdout, done.stdout
    finally:
        stop_emulator(emulator)
