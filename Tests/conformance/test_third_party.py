"""Clients nobody here wrote, driving a live emulator seeded by `azseed apply` (issue 14):
the Azure CLI (`az`, in its own virtual environment .venv-az), rclone (Debian's package, the
Go SDK underneath) and adlfs/fsspec. `make test` installs all three."""
import hashlib
import json
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import KEY, ROOT, run, start_emulator, stop_emulator
from test_seeding import NOW

AZ = os.environ.get("AZSEED_AZ", str(ROOT / ".venv-az" / "bin" / "az"))
RCLONE = shutil.which("rclone")


@pytest.fixture(scope="module")
def seeded(azseed, tmp_path_factory):
    """An emulator on disk holding the SpeakEasy dataset, applied by azseed."""
    emulator = start_emulator(azseed, "--data-dir", str(tmp_path_factory.mktemp("third-party") / "data"))
    done = run(azseed, "apply", "--connection-string", emulator.connection_string, *NOW)
    assert done.returncode == 0, done.stderr
    yield emulator
    stop_emulator(emulator)


def az(emulator, *args, check=True):
    if not os.path.exists(AZ):
        pytest.fail(f"{AZ} is missing; `make test` installs azure-cli into .venv-az")
    env = {**os.environ, "AZURE_CORE_COLLECT_TELEMETRY": "no", "AZURE_CORE_NO_COLOR": "1",
           "AZURE_CONFIG_DIR": str(ROOT / ".build" / "test-tmp" / "az-config")}
    done = subprocess.run([AZ, *args, "--connection-string", emulator.connection_string, "--output", "json", "--only-show-errors"],
                          capture_output=True, text=True, env=env, timeout=300)
    if check:
        assert done.returncode == 0, (args, done.stderr[-2000:])
    return json.loads(done.stdout) if done.stdout.strip() else None


def tree(root, both_forms=True):
    """About fifty files: one of 10 MiB, a folder with spaces, Unicode names (with both_forms,
    also NFC and NFD twins; rclone normalises names to NFC, so it gets one of them)."""
    files = {}
    for i in range(45):
        files[f"docs/file-{i:02d}.txt"] = f"file {i}\n".encode() * (i + 1)
    files["with space/a b.txt"] = b"spaces"
    files["unicode/Café.txt"] = "NFC".encode()
    if both_forms:
        files["unicode/Cafe\u0301.txt"] = "NFD".encode()
    files["unicode/日本語.txt"] = "日本".encode()
    files["big/ten-mib.bin"] = hashlib.sha256(b"seed").digest() * (10 * 1024 * 1024 // 32)
    for name, body in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    return files


# --- az ---------------------------------------------------------------------------------

def test_az_blob_commands(seeded, tmp_path):
    assert az(seeded, "storage", "container", "create", "--name", "azcli")["created"] is True
    assert az(seeded, "storage", "container", "show", "--name", "speakers")["name"] == "speakers"
    az(seeded, "storage", "container", "set-permission", "--name", "azcli", "--public-access", "blob")
    az(seeded, "storage", "container", "metadata", "update", "--name", "azcli", "--metadata", "team=fixtures")
    assert az(seeded, "storage", "container", "metadata", "show", "--name", "azcli") == {"team": "fixtures"}
    small, large = tmp_path / "small.bin", tmp_path / "large.bin"
    small.write_bytes(os.urandom(1024))
    large.write_bytes(os.urandom(9 * 1024 * 1024 + 17))  # over the CLI's single-put size: blocks
    az(seeded, "storage", "blob", "upload", "--container-name", "azcli", "--name", "small.bin", "--file", str(small))
    az(seeded, "storage", "blob", "upload", "--container-name", "azcli", "--name", "large.bin", "--file", str(large),
       "--max-connections", "4")
    out = tmp_path / "large.out"
    az(seeded, "storage", "blob", "download", "--container-name", "azcli", "--name", "large.bin", "--file", str(out))
    assert out.read_bytes() == large.read_bytes()
    source = tmp_path / "batch"
    files = tree(source)
    az(seeded, "storage", "blob", "upload-batch", "--destination", "azcli", "--source", str(source), "--destination-path", "tree")
    back = tmp_path / "back"
    back.mkdir()
    az(seeded, "storage", "blob", "download-batch", "--source", "azcli", "--destination", str(back), "--pattern", "tree/*")
    for name, body in files.items():
        assert (back / "tree" / name).read_bytes() == body, name
    listed = az(seeded, "storage", "blob", "list", "--container-name", "azcli", "--prefix", "tree/unicode/", "--num-results", "*")
    assert sorted(b["name"] for b in listed) == sorted(f"tree/{n}" for n in files if n.startswith("unicode/"))
    folders = az(seeded, "storage", "blob", "list", "--container-name", "azcli", "--prefix", "tree/", "--delimiter", "/", "--num-results", "*")
    assert {b["name"] for b in folders} == {"tree/big/", "tree/docs/", "tree/unicode/", "tree/with space/"}
    page = az(seeded, "storage", "blob", "list", "--container-name", "azcli", "--prefix", "tree/docs/", "--num-results", "10", "--show-next-marker")
    assert len([b for b in page if "name" in b]) == 10
    copied = az(seeded, "storage", "blob", "copy", "start", "--destination-container", "azcli", "--destination-blob", "copy.bin",
                "--source-uri", f"{seeded.blob}/azcli/small.bin")
    assert copied["copy_status"] == "success"
    az(seeded, "storage", "blob", "download", "--container-name", "azcli", "--name", "copy.bin", "--file", str(tmp_path / "copy.out"))
    assert (tmp_path / "copy.out").read_bytes() == small.read_bytes()
    az(seeded, "storage", "blob", "delete-batch", "--source", "azcli", "--pattern", "tree/docs/*")
    left = az(seeded, "storage", "blob", "list", "--container-name", "azcli", "--prefix", "tree/docs/", "--num-results", "*")
    assert left == []


def test_az_table_commands_over_the_seeded_events(seeded):
    events = az(seeded, "storage", "entity", "query", "--table-name", "events", "--filter", "PartitionKey eq 'Events'",
                "--select", "EventName", "EventDate", "--num-results", "1000")
    assert len(events["items"]) == 100 and set(events["items"][0]) >= {"EventName", "EventDate"}
    first = az(seeded, "storage", "entity", "query", "--table-name", "events", "--filter", "PartitionKey eq 'Events'", "--num-results", "30")
    assert len(first["items"]) == 30 and first["nextMarker"]
    marker = first["nextMarker"]
    second = az(seeded, "storage", "entity", "query", "--table-name", "events", "--filter", "PartitionKey eq 'Events'", "--num-results", "30",
                "--marker", f"nextpartitionkey={marker['nextpartitionkey']}", f"nextrowkey={marker['nextrowkey']}")
    assert len(second["items"]) == 30
    assert not {e["RowKey"] for e in first["items"]} & {e["RowKey"] for e in second["items"]}
    az(seeded, "storage", "table", "create", "--name", "azcli")
    az(seeded, "storage", "entity", "insert", "--table-name", "azcli", "--entity", "PartitionKey=p", "RowKey=r",
       "Count=42", "Count@odata.type=Edm.Int64", "Name=Ada", "When=2026-11-21T10:00:00Z", "When@odata.type=Edm.DateTime")
    got = az(seeded, "storage", "entity", "show", "--table-name", "azcli", "--partition-key", "p", "--row-key", "r")
    # az shows an Int64 with its type; the value and the type must both have survived.
    assert got["Name"] == "Ada" and got["Count"] == {"edm_type": "Edm.Int64", "value": 42}
    assert got["When"].startswith("2026-11-21T10:00:00")
    az(seeded, "storage", "entity", "merge", "--table-name", "azcli", "--entity", "PartitionKey=p", "RowKey=r", "Extra=1")
    got = az(seeded, "storage", "entity", "show", "--table-name", "azcli", "--partition-key", "p", "--row-key", "r")
    assert got["Name"] == "Ada" and got["Extra"] == 1
    assert any(t["name"] == "azcli" for t in az(seeded, "storage", "table", "list"))


# --- rclone -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def on_default_ports(azseed, tmp_path_factory):
    """Debian's rclone (1.60) reaches an emulator only through `use_emulator` (with the
    endpoint spelled out), which signs as the development account on the well-known
    endpoint http://127.0.0.1:10000/devstoreaccount1: this emulator listens there, seeded by
    azseed like the others."""
    emulator = start_emulator(azseed, "--data-dir", str(tmp_path_factory.mktemp("rclone") / "data"), blob_port=10000, table_port=10002)
    done = run(azseed, "apply", "--connection-string", emulator.connection_string, *NOW)
    assert done.returncode == 0, done.stderr
    yield emulator
    stop_emulator(emulator)


def rclone(emulator, *args, check=True, input=None):
    if RCLONE is None:
        pytest.fail("rclone is missing; `make test` installs Debian's rclone package")
    assert emulator.blob == "http://127.0.0.1:10000/devstoreaccount1"
    env = {**os.environ, "RCLONE_CONFIG": "/dev/null", "RCLONE_CONFIG_EMU_TYPE": "azureblob",
           "RCLONE_CONFIG_EMU_USE_EMULATOR": "true", "RCLONE_CONFIG_EMU_ENDPOINT": emulator.blob}
    done = subprocess.run([RCLONE, *args], capture_output=True, env=env, timeout=300, input=input)
    if check:
        assert done.returncode == 0, (args, done.stderr.decode()[-2000:])
    return done.stdout


def test_rclone_copy_check_sync_move_and_ranges(on_default_ports, tmp_path):
    seeded = on_default_ports
    assert b"BJohnson.jpg" in rclone(seeded, "lsf", "emu:speakers")
    source = tmp_path / "tree"
    files = tree(source, both_forms=False)
    rclone(seeded, "mkdir", "emu:rclone")
    rclone(seeded, "copy", str(source), "emu:rclone/tree")
    rclone(seeded, "check", str(source), "emu:rclone/tree")
    listed = json.loads(rclone(seeded, "lsjson", "-R", "--files-only", "emu:rclone/tree"))
    assert sorted(item["Path"] for item in listed) == sorted(files)
    sums = dict(line.split("  ", 1)[::-1] for line in rclone(seeded, "md5sum", "emu:rclone/tree").decode().splitlines())
    assert all(sums[name] == hashlib.md5(body).hexdigest() for name, body in files.items())
    whole = files["big/ten-mib.bin"]
    assert rclone(seeded, "cat", "--offset", "1000", "--count", "5000", "emu:rclone/tree/big/ten-mib.bin") == whole[1000:6000]
    assert rclone(seeded, "cat", "--offset", str(len(whole) - 10), "emu:rclone/tree/big/ten-mib.bin") == whole[-10:]
    # Server-side move within the account (Copy Blob, then delete).
    rclone(seeded, "moveto", "emu:rclone/tree/with space/a b.txt", "emu:rclone/moved/a b.txt")
    assert rclone(seeded, "cat", "emu:rclone/moved/a b.txt") == b"spaces"
    assert rclone(seeded, "lsf", "emu:rclone/tree/with space/") == b""
    # Sync removes what the source no longer holds.
    (source / "docs" / "file-00.txt").unlink()
    rclone(seeded, "sync", str(source), "emu:rclone/tree")
    del files["docs/file-00.txt"]
    rclone(seeded, "check", str(source), "emu:rclone/tree")
    rclone(seeded, "purge", "emu:rclone/tree")
    assert rclone(seeded, "lsf", "emu:rclone/tree", check=False) == b""


# --- adlfs / fsspec ---------------------------------------------------------------------

def test_adlfs_filesystem_operations(seeded):
    from adlfs import AzureBlobFileSystem
    fs = AzureBlobFileSystem(connection_string=seeded.connection_string)
    assert "speakers/BJohnson.jpg" in fs.ls("speakers")
    assert fs.info("speakers/BJohnson.jpg")["size"] > 1000
    assert fs.cat("speakers/BJohnson.jpg")[:2] == b"\xff\xd8"
    fs.mkdir("adlfs")
    body = os.urandom(9 * 1024 * 1024 + 5)
    with fs.open("adlfs/multi/block.bin", "wb", blocksize=4 * 1024 * 1024) as f:
        for i in range(0, len(body), 1024 * 1024):
            f.write(body[i:i + 1024 * 1024])
    assert fs.cat("adlfs/multi/block.bin") == body
    fs.pipe("adlfs/multi/small.txt", b"small")
    assert sorted(fs.glob("adlfs/multi/*")) == ["adlfs/multi/block.bin", "adlfs/multi/small.txt"]
    fs.cp("adlfs/multi/small.txt", "adlfs/copied.txt")
    assert fs.cat("adlfs/copied.txt") == b"small"
    fs.mv("adlfs/copied.txt", "adlfs/moved.txt")
    assert not fs.exists("adlfs/copied.txt") and fs.cat("adlfs/moved.txt") == b"small"
    fs.rm("adlfs/multi", recursive=True)
    assert fs.ls("adlfs") == ["adlfs/moved.txt"]
