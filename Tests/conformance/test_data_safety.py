"""No data lost (issue 13, items 1 and 2): one owner per data folder, and `--force` never
replaces what a command reads. Driven as users drive it: `azseed emulator` serving uploads
from the official SDK while storage commands run on the same folder."""
import os
import pathlib
import pwd
import shutil
import stat
import subprocess
import tempfile
import threading
import time

import pytest

from azure.storage.blob import BlobServiceClient

from conftest import record, run, start_emulator, stop_emulator
from test_seeding import NOW, one_error


def test_storage_commands_beside_a_serving_emulator_lose_nothing(azseed, tmp_path):
    """The reported loss: uploads acknowledged by the emulator while `azseed plan` opened the
    same folder were deleted by the plan's start-up sweep. Now the plan talks to the
    emulator, and every acknowledged upload is still there, byte for byte."""
    folder = tmp_path / ".azseed" / "storage"
    served = start_emulator(azseed, "--data-dir", str(folder))
    try:
        container = BlobServiceClient.from_connection_string(served.connection_string).create_container("uploads")
        acknowledged, stop, failures = [], threading.Event(), []

        def upload():
            i = 0
            while not stop.is_set():
                name = f"blob-{i:05d}"
                try:
                    container.upload_blob(name, name.encode() * 50)
                    acknowledged.append(name)
                except Exception as error:  # noqa: BLE001 - a failed upload is allowed, a lost one is not
                    failures.append(repr(error))
                i += 1

        writer = threading.Thread(target=upload)
        writer.start()
        try:
            for _ in range(4):
                done = run(azseed, "plan", *NOW, cwd=tmp_path)
                assert done.returncode == 0, done.stderr
                assert "through the 'azseed emulator' that serves it" in done.stderr
        finally:
            stop.set()
            writer.join()
        assert len(acknowledged) >= 20, (len(acknowledged), failures[:3])
        for name in acknowledged:
            assert container.download_blob(name).readall() == name.encode() * 50, name
        # A write command through it works too, and its data is the emulator's.
        done = run(azseed, "apply", *NOW, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert run(azseed, "verify", *NOW, cwd=tmp_path).returncode == 0
        # A second emulator on the folder is refused, naming the first.
        second = run(azseed, "emulator", "--data-dir", str(folder), "--blob-port", "0", "--table-port", "0", timeout=30)
        assert second.returncode == 1, second.stderr
        line = one_error(second.stderr)
        assert "already served by 'azseed emulator'" in line and served.blob in line
    finally:
        stop_emulator(served)


def apply_owning_the_folder(azseed, tmp_path):
    """An embedded `azseed apply` of 20,000 events, once it holds the data folder's lock."""
    lock = tmp_path / ".azseed" / "storage" / "owner.lock"
    applying = subprocess.Popen([azseed, "apply", *NOW, "--events", "20000"], cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not (lock.exists() and "command=azseed apply" in lock.read_text()):
        assert time.time() < deadline and applying.poll() is None, "apply did not take the folder"
        time.sleep(0.05)
    return applying


def test_a_second_process_on_a_busy_folder_is_refused_with_the_owner(azseed, tmp_path):
    applying = apply_owning_the_folder(azseed, tmp_path)
    try:
        planned = run(azseed, "plan", *NOW, cwd=tmp_path, timeout=60)
        assert applying.poll() is None, "apply finished before the second command ran; the test proves nothing"
        assert planned.returncode == 1 and planned.stdout == ""
        line = one_error(planned.stderr)
        assert "in use by 'azseed apply' (pid " in line and "azseed emulator" in line, line
    finally:
        out, err = applying.communicate(timeout=300)
        record([azseed, "apply"], out, err)
    assert applying.returncode == 0, err
    # The owner gone, the folder is free again.
    assert run(azseed, "plan", *NOW, "--events", "20000", "--detailed-exitcode", cwd=tmp_path).returncode == 0


def test_force_never_replaces_the_input(azseed, tmp_path):
    """`export --out .azseed/storage --force` deleted the storage it exported from."""
    assert run(azseed, "apply", *NOW, cwd=tmp_path).returncode == 0
    before = sorted(p.relative_to(tmp_path) for p in (tmp_path / ".azseed").rglob("*") if p.name != "owner.lock")
    for out in (".azseed/storage", ".azseed", ".azseed/storage/blobs", "."):
        done = run(azseed, "export", "--out", out, "--force", cwd=tmp_path)
        assert done.returncode == 64, (out, done.stderr)
        assert "data folder" in one_error(done.stderr)
    after = sorted(p.relative_to(tmp_path) for p in (tmp_path / ".azseed").rglob("*") if p.name != "owner.lock")
    assert after == before
    plan = run(azseed, "plan", *NOW, "--detailed-exitcode", cwd=tmp_path)
    assert plan.returncode == 0 and "No changes" in plan.stdout, plan.stdout + plan.stderr


# --- Validation before the first write (issue 13, item 6) --------------------------------

import base64
import hashlib
import json

import pytest
from azure.data.tables import TableServiceClient

from test_seeding import account  # noqa: F401  (the fixture: a fresh in-memory emulator)


def with_entity(folder, entity):
    """Appends an entity (its PartitionKey sorts last) and re-seals the manifest."""
    path = folder / "tables" / "events.jsonl"
    path.write_bytes(path.read_bytes() + (json.dumps(entity, ensure_ascii=False) + "\n").encode())
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["tables"][0].update(entities=manifest["tables"][0]["entities"] + 1, sha256=hashlib.sha256(path.read_bytes()).hexdigest())
    (folder / "manifest.json").write_text(json.dumps(manifest))


def with_blob(folder, name, body=b"body"):
    (folder / "blobs" / "speakers" / name).write_bytes(body)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["containers"][0]["blobs"].append({"name": name, "contentType": "text/plain", "size": len(body),
                                                "md5": base64.b64encode(hashlib.md5(body).digest()).decode()})
    (folder / "manifest.json").write_text(json.dumps(manifest))


INVALID = {
    "row-key-slash": (lambda f: with_entity(f, {"PartitionKey": "zzz", "RowKey": "zz/bad"}), "invalid RowKey"),
    "260-properties": (lambda f: with_entity(f, {"PartitionKey": "zzz", "RowKey": "many", **{f"P{i}": i for i in range(260)}}), "260 properties"),
    "entity-1.5-MiB": (lambda f: with_entity(f, {"PartitionKey": "zzz", "RowKey": "big", **{f"S{i}": "x" * 30000 for i in range(26)}}), "1 MiB"),
    "blob-ending-in-dot": (lambda f: with_blob(f, "zzz."), "zzz."),
}


@pytest.mark.parametrize("case", INVALID, ids=list(INVALID))
def test_an_invalid_snapshot_writes_nothing(azseed, account, tmp_path, case):
    tamper, words = INVALID[case]
    folder = tmp_path / "snap"
    assert run(azseed, "generate", *NOW, "--out", str(folder)).returncode == 0
    tamper(folder)
    done = run(azseed, "import", str(folder), "--connection-string", account.connection_string)
    assert done.returncode == 1, done.stderr
    line = one_error(done.stderr)
    assert words in line and ("events.jsonl:109" in line or "manifest.json" in line), line
    # Nothing at all was written: no container, no table, no entity.
    assert list(BlobServiceClient.from_connection_string(account.connection_string).list_containers()) == []
    assert list(TableServiceClient.from_connection_string(account.connection_string).list_tables()) == []


# --- Issue 29, item 6: interrupted and concurrent runs say what happened ------------------

import signal


def test_ctrl_c_during_apply_is_one_line_exit_130_and_a_rerun_finishes(azseed, tmp_path):
    emulator = start_emulator(azseed, "--in-memory")
    try:
        cs = ["--connection-string", emulator.connection_string]
        # Interrupted once events are being written (not at a fixed time: issue 34 made 20,000
        # events finish within the 2.5 s this test once waited).
        applying = subprocess.Popen([azseed, "apply", *cs, *NOW, "--events", "40000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        from azure.data.tables import TableServiceClient
        events = TableServiceClient.from_connection_string(emulator.connection_string).get_table_client("events")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and applying.poll() is None:
            try:
                if any(True for _ in events.query_entities("PartitionKey eq 'Events'", results_per_page=1).by_page().__next__()):
                    break
            except Exception:  # the table is not there yet
                pass
            time.sleep(0.05)
        assert applying.poll() is None, "apply finished before it could be interrupted; the test proves nothing"
        applying.send_signal(signal.SIGINT)
        out, err = applying.communicate(timeout=60)
        record([azseed, "apply"], out, err)
        assert applying.returncode == 130, (applying.returncode, err)
        lines = [line for line in err.splitlines() if "interrupted" in line]
        assert len(lines) == 1 and "run the same command again" in lines[0] and "half-written" in lines[0], err
        again = run(azseed, "apply", *cs, *NOW, "--events", "40000")
        assert again.returncode == 0, again.stderr
        assert run(azseed, "verify", *cs, *NOW, "--events", "40000").returncode == 0
    finally:
        stop_emulator(emulator)


def test_lock_timeout_waits_for_the_folders_owner(azseed, tmp_path):
    applying = apply_owning_the_folder(azseed, tmp_path)
    try:
        waited = run(azseed, "plan", *NOW, "--events", "20000", "--detailed-exitcode", "--lock-timeout", "5m", cwd=tmp_path, timeout=300)
        assert applying.poll() is not None, "plan did not wait for apply"
        assert waited.returncode == 0, waited.stderr  # it planned after apply: nothing to do
    finally:
        out, err = applying.communicate(timeout=300)
        record([azseed, "apply"], out, err)
    assert applying.returncode == 0, err


def test_a_huge_count_is_refused_and_sigterm_ends_a_long_generate(azseed, tmp_path):
    # From an attacker's review: a dataset's author asking for 999,999,999,999 entities took all memory.
    folder = tmp_path / "huge"
    folder.mkdir()
    (folder / "dataset.yaml").write_text("name: huge\nseed: 1\nwindow: { from: 2026-01-01, days: 1 }\ntables:\n  - name: things\n    kinds:\n"
                                         "      - name: k\n        partition: p\n        key: [A]\n        count: 999999999999\n"
                                         "        fields:\n          A: { sequence: { start: 1, step: 1 } }\n")
    done = run(azseed, "generate", "--dataset", str(folder), "--out", str(tmp_path / "o"), *NOW, timeout=60)
    assert done.returncode == 64 and "at most 50000000" in done.stderr and not (tmp_path / "o").exists(), done.stderr
    # A long generate (20 million entities: the release build makes 3 million in under two seconds) ends on SIGTERM within seconds, in one line.
    text = (folder / "dataset.yaml").read_text().replace("999999999999", "20000000")
    (folder / "dataset.yaml").write_text(text)
    running = subprocess.Popen([azseed, "generate", "--dataset", str(folder), "--out", str(tmp_path / "o2"), *NOW],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    assert running.poll() is None, "generate finished before it could be stopped; the test proves nothing"
    started = time.time()
    running.send_signal(signal.SIGTERM)
    out, err = running.communicate(timeout=30)
    record([azseed, "generate"], out, err)
    assert running.returncode == 130 and time.time() - started < 8, (running.returncode, err)
    assert "interrupted" in err


@pytest.mark.skipif(os.geteuid() != 0, reason="hands folders to user nobody, which needs root")
def test_another_users_cache_and_folders_are_refused(azseed, tmp_path):
    """Issue 45, items 6 and 7, as the other local user (`nobody`) would attack: they create
    the shared cache folder first and fill it with their own dataset; they hand over an empty
    export or backup folder of theirs to read the snapshot; they read the data folder from
    disk. Each is refused in one line, nothing written, or finds nothing to read."""
    nobody = pwd.getpwnam("nobody")
    shared = pathlib.Path(tempfile.mkdtemp(prefix="azseed-shared-"))
    shared.chmod(0o755)  # a shared place both users can reach, as /tmp is
    try:
        # The binary away from the checkout, as installed: the default dataset is then looked
        # for in the working directory, then the cache (a build folder finds the repository's).
        (shared / "bin").mkdir()
        azseed = shutil.copy(azseed, shared / "bin" / "azseed")
        work = shared / "work"
        work.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("AZURE_STORAGE_CONNECTION_STRING", "AZSEED_HOME")}

        # A cache folder another user made first: their dataset is never used.
        cache = shared / "cache"
        (cache / "azseed").mkdir(parents=True)
        for folder in (cache, cache / "azseed"):
            os.chown(folder, nobody.pw_uid, nobody.pw_gid)
        done = run(azseed, "plan", *NOW, cwd=work, env={**env, "XDG_CACHE_HOME": str(cache)})
        assert done.returncode == 1, done.stderr
        assert "belongs to another user" in one_error(done.stderr)
        assert not (work / ".azseed").exists(), "a refused run opened the storage"

        # A Seeds/speakeasy another user planted in a shared working directory is not used.
        planted = shared / "planted"
        (planted / "Seeds").mkdir(parents=True)
        shutil.copytree(pathlib.Path(__file__).parents[2] / "Seeds" / "speakeasy", planted / "Seeds" / "speakeasy")
        for path in [planted / "Seeds", *(planted / "Seeds").rglob("*")]:
            os.chown(path, nobody.pw_uid, nobody.pw_gid)
        done = run(azseed, "plan", *NOW, cwd=planted, env={**env, "XDG_CACHE_HOME": str(shared / "planted-cache")})
        assert done.returncode == 1, done.stderr
        assert "Seeds/speakeasy cannot be trusted" in one_error(done.stderr)

        # Our own cache whose dataset was edited: written again before it is used.
        own = shared / "own-cache"
        own_env = {**env, "XDG_CACHE_HOME": str(own)}
        assert run(azseed, "apply", *NOW, cwd=work, env=own_env).returncode == 0
        cached = next((own / "azseed").glob("embedded-*/Seeds/speakeasy/dataset.yaml"))
        original = cached.read_bytes()
        cached.write_bytes(original.replace(b"speakeasy", b"forged", 1))
        done = run(azseed, "verify", *NOW, cwd=work, env=own_env)
        assert done.returncode == 0, done.stderr
        assert cached.read_bytes() == original
        assert stat.S_IMODE((own / "azseed").stat().st_mode) == 0o700

        # A Seeds/speakeasy another user planted beside the binary (a tarball unpacked under a
        # shared folder) is passed over: the cache's copy is used.
        beside = shared / "Seeds" / "speakeasy"
        shutil.copytree(pathlib.Path(__file__).parents[2] / "Seeds" / "speakeasy", beside)
        text = (beside / "dataset.yaml").read_text()
        (beside / "dataset.yaml").write_text(text.replace("Bart Tubalinal", "PLANTED BESIDE"))
        for path in [shared / "Seeds", *(shared / "Seeds").rglob("*")]:
            os.chown(path, nobody.pw_uid, nobody.pw_gid)
        done = run(azseed, "plan", *NOW, cwd=work, env=own_env)
        assert done.returncode == 0 and "PLANTED" not in done.stdout + done.stderr, done.stdout + done.stderr

        # The data folder: private on disk, whatever the umask was.
        data = work / ".azseed" / "storage"
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
        sqlite = data / "storage.sqlite"
        assert stat.S_IMODE(sqlite.stat().st_mode) & 0o077 == 0
        peek = subprocess.run(["runuser", "-u", "nobody", "--", "cat", str(sqlite)], capture_output=True, timeout=30)
        assert peek.returncode != 0 and not peek.stdout, "another user read the storage from disk"

        # An empty export or backup folder another user owns: refused, nothing written into it.
        theirs = shared / "theirs"
        theirs.mkdir()
        os.chown(theirs, nobody.pw_uid, nobody.pw_gid)
        done = run(azseed, "export", "--out", str(theirs), cwd=work, env=own_env)
        assert done.returncode == 1 and "belongs to another user" in one_error(done.stderr)
        assert list(theirs.iterdir()) == []
        migrations = shared / "migrations"
        migrations.mkdir()
        (migrations / "V1__capacity.yaml").write_text(
            "description: Capacity\noperations:\n  - set-property: {table: events, name: Capacity, value: 1, if-missing: true}\n")
        done = run(azseed, "migrate", "apply", "--migrations", str(migrations), "--backup", str(theirs), cwd=work, env=own_env)
        assert done.returncode == 1 and "belongs to another user" in one_error(done.stderr)
        assert list(theirs.iterdir()) == []
        # A folder of our own that others may write is refused too.
        open_to_all = shared / "open"
        open_to_all.mkdir()
        open_to_all.chmod(0o777)
        done = run(azseed, "export", "--out", str(open_to_all), cwd=work, env=own_env)
        assert done.returncode == 1 and "users other than you may write to it" in one_error(done.stderr)
    finally:
        shutil.rmtree(shared, ignore_errors=True)
