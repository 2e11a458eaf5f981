"""Generated blobs (`blobs:` in a container) as a user applies them: the official SDK reads
their names, content types, metadata and bytes; a second run changes nothing; and what a
dataset's author could try — a name template making one name twice, sizes past the bounds —
is one clear error before anything is written."""
import json

from azure.storage.blob import BlobServiceClient

from conftest import run, start_emulator, stop_emulator

DATASET = """
name: generated
seed: 3
window: { from: 2026-01-01, days: 1 }
containers:
  - name: reports
    access: private
    blobs:
      - count: 5
        name: "daily/{{Number}}.json"
        content: { template: report.mustache }
        metadata: { source: azseed, day: "{{Number}}" }
      - count: 2
        name: "photos/p{{Number}}.jpg"
        content: { image: portrait }
      - count: 4
        name: "raw/{{Index}}.bin"
        content: { bytes: [10, 4000] }
tables:
  - { name: things, kinds: [ { name: k, partition: p, key: [N], count: 1, fields: { N: { sequence: 1 } } } ] }
"""


def write(folder, text=DATASET):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dataset.yaml").write_text(text)
    (folder / "templates").mkdir(exist_ok=True)
    (folder / "templates" / "report.mustache").write_text('{"day": {{Number}}, "blob": "{{Name}}"}')
    return folder


def test_generated_blobs_apply_read_back_and_rerun_changes_nothing(azseed, tmp_path):
    account = start_emulator(azseed, "--in-memory")
    try:
        folder = write(tmp_path / "ds")
        cs = ["--connection-string", account.connection_string, "--dataset", str(folder)]
        done = run(azseed, "apply", *cs)
        assert done.returncode == 0, done.stderr
        container = BlobServiceClient.from_connection_string(account.connection_string).get_container_client("reports")
        blobs = {b.name: b for b in container.list_blobs(include=["metadata"])}
        assert sorted(blobs) == ["daily/1.json", "daily/2.json", "daily/3.json", "daily/4.json", "daily/5.json",
                                 "photos/p1.jpg", "photos/p2.jpg", "raw/0.bin", "raw/1.bin", "raw/2.bin", "raw/3.bin"]
        report = json.loads(container.download_blob("daily/3.json").readall())
        assert report == {"day": 3, "blob": "daily/3.json"}
        assert blobs["daily/3.json"].metadata == {"source": "azseed", "day": "3"}
        assert blobs["daily/3.json"].content_settings.content_type == "application/json"
        assert container.download_blob("photos/p1.jpg").readall()[:2] == b"\xff\xd8"
        assert all(10 <= blobs[f"raw/{i}.bin"].size <= 4000 for i in range(4))
        again = run(azseed, "plan", *cs, "--detailed-exitcode")
        assert again.returncode == 0, again.stdout + again.stderr  # 0: no changes
    finally:
        stop_emulator(account)


def test_a_hostile_blob_group_is_refused_before_anything_is_written(azseed, tmp_path):
    account = start_emulator(azseed, "--in-memory")
    try:
        for change, expected in ((('"raw/{{Index}}.bin"', '"daily/{{Number}}.json"'), "made twice"),
                                 (("[10, 4000]", "[10, 99999999999]"), "64 MiB"),
                                 (('"raw/{{Index}}.bin"', '"../{{Index}}"'), "generated blob"),
                                 (("count: 4", "count: 1000000"), "count is 1 to")):
            folder = write(tmp_path / expected.replace(" ", "_"), DATASET.replace(*change))
            done = run(azseed, "apply", "--connection-string", account.connection_string, "--dataset", str(folder))
            assert done.returncode != 0 and expected in done.stderr, (change, done.stderr)
            assert len(done.stderr.strip().splitlines()) <= 2, done.stderr
        service = BlobServiceClient.from_connection_string(account.connection_string)
        assert [c.name for c in service.list_containers()] == []
    finally:
        stop_emulator(account)


def test_a_unique_field_too_small_is_the_dataset_s_error_or_the_flag_s(azseed, tmp_path):
    """Exit 1 when the dataset's own count cannot be unique, 64 when a --count asked for it."""
    text = DATASET.replace("fields: { N: { sequence: 1 } }", "fields: { N: { sequence: 1 }, C: { pick: [a, b], unique: true } }")
    text = text.replace("key: [N], count: 1,", "key: [N], count: 3,")
    folder = write(tmp_path / "ds", text)
    own = run(azseed, "generate", "--dataset", str(folder), "--out", str(tmp_path / "out1"))
    assert own.returncode == 1 and "holds 2 distinct values for 3 entities" in own.stderr, own.stderr
    small = write(tmp_path / "ds2", text.replace("count: 3,", "count: 2,"))
    assert run(azseed, "generate", "--dataset", str(small), "--out", str(tmp_path / "out2")).returncode == 0
    flagged = run(azseed, "generate", "--dataset", str(small), "--count", "k=5", "--out", str(tmp_path / "out3"))
    assert flagged.returncode == 64 and "holds 2 distinct values for 5 entities" in flagged.stderr, flagged.stderr
    assert not (tmp_path / "out1").exists() and not (tmp_path / "out3").exists()
