"""`azseed scan` judged on an account shaped like a real one that the official SDKs build (not
azseed): devices and their readings, country partitions in capitals, JSON and CSV blobs, and
values written to hurt. Regenerated from the scanned dataset at the observed counts, every
column's type and presence match, distinct counts are within 10%, unique columns stay unique,
sequences are exact, references resolve (and text built from them names the right entity), each
date column stays in its own range, a date that follows its device's stays within the gap
seen, doubles keep their decimals — and, without --copy-values, no value seen in fewer than 5
entities reaches the dataset."""
import json
import random
from datetime import datetime, timedelta, timezone

import pytest
from azure.data.tables import EdmType, EntityProperty, TableServiceClient
from azure.storage.blob import BlobServiceClient, ContentSettings

from conftest import run, start_emulator, stop_emulator
from test_scan import shape

NOW = ["--now", "2026-11-26"]
UTC = timezone.utc


def build(account):
    """The account, written with the official SDKs: 40 devices, 600 readings, NO and SE."""
    rng = random.Random(7)
    tables = TableServiceClient.from_connection_string(account.connection_string)
    table = tables.create_table("telemetry")
    colours = ["red", "green", "blue", "amber", "violet"]
    devices = []
    for i in range(40):
        name = f"device-{colours[i % 5]}-{i}"
        devices.append({"PartitionKey": "devices", "RowKey": f"d{i:03}", "Name": name, "Email": f"{name}@fleet.example",
                        "Installed": datetime(2021, 3, 1, tzinfo=UTC) + timedelta(days=3 * i),
                        "Firmware": ["1.0", "1.1", "2.0"][i % 3], "Badge": 1000 + 37 * i})
    readings = []
    for i in range(600):
        d = devices[rng.randrange(40)]
        readings.append({"PartitionKey": "readings", "RowKey": f"r{i:05}", "Seq": EntityProperty(10 + 10 * i, EdmType.INT64),
                         "ReadAt": datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=rng.randrange(58 * 24 * 60)),
                         "Value": rng.randrange(100000) / 100, "DeviceId": d["RowKey"], "Message": f"Reading from {d['Name']}",
                         "Serviced": d["Installed"] + timedelta(hours=rng.randrange(30 * 24))})
    countries = [{"PartitionKey": c, "RowKey": f"{c}{i}", "Count": rng.randrange(50)} for c in ("NO", "SE") for i in range(10)]
    for group in (devices, readings, countries):
        by_partition = {}
        for e in group:
            by_partition.setdefault(e["PartitionKey"], []).append(e)
        for entities in by_partition.values():
            for start in range(0, len(entities), 100):
                table.submit_transaction([("create", e) for e in entities[start:start + 100]])
    container = BlobServiceClient.from_connection_string(account.connection_string).create_container("docs")
    for i in range(6):
        container.upload_blob(f"reports/{i}.json", json.dumps({"report": i, "ok": True}).encode(),
                              content_settings=ContentSettings(content_type="application/json"))
        container.upload_blob(f"exports/{i}.csv", b"a,b\n1,2\n", content_settings=ContentSettings(content_type="text/csv"))
    return devices, readings


def scan_and_generate(azseed, account, tmp_path, *args):
    out = tmp_path / ("scanned" + "".join(a.strip("-") for a in args))
    done = run(azseed, "scan", "--connection-string", account.connection_string, "--out", str(out), "--table", "telemetry",
               "--container", "docs", *args)
    assert done.returncode == 0, done.stderr
    made = run(azseed, "generate", "--dataset", str(out), "--out", str(tmp_path / (out.name + "-made")), *NOW)
    assert made.returncode == 0, made.stderr
    return done, out, shape(tmp_path / (out.name + "-made"))


@pytest.fixture(scope="module")
def fleet(azseed):
    account = start_emulator(azseed, "--in-memory")
    devices, readings = build(account)
    yield account, devices, readings
    stop_emulator(account)


def column(entities, name):
    return [e[name] for e in entities if name in e]


def ticks(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.mark.parametrize("copy", [True, False])
def test_the_regenerated_fleet_has_the_account_s_shape(azseed, fleet, tmp_path, copy):
    account, devices, readings = fleet
    args = ["--copy-values", "--sample", "60"] if copy else []
    scanned, folder, (tables, entities, blobs) = scan_and_generate(azseed, account, tmp_path, *args)
    made_devices = entities[("telemetry", "devices")]
    made_readings = entities[("telemetry", "readings")]
    # Counts, property names and EDM types per partition; partitions kept (NO stays NO).
    assert {k[1]: v["count"] for k, v in tables.items()} == {"devices": 40, "readings": 600, "NO": 10, "SE": 10}
    assert set(tables[("telemetry", "readings")]["types"]) >= {"Seq", "ReadAt", "Value", "DeviceId", "Message", "Serviced"}
    assert tables[("telemetry", "readings")]["types"]["Seq"] == {"Edm.Int64"}
    # Unique columns unique.
    for name in ("Name", "Email", "Badge", "Installed"):
        assert len(set(map(str, column(made_devices, name)))) == 40, name
    # The sequence exact (from 1 without copied values: its first value is one entity's).
    start = 10 if copy else 1
    assert sorted(int(v) for v in column(made_readings, "Seq")) == list(range(start, start + 6000, 10))
    # References resolve, and the text built from them names the device the key points at.
    by_key = {e["RowKey"]: e for e in made_devices}
    for r in made_readings:
        device = by_key[r["DeviceId"]]
        assert r["Message"] == "Reading from " + device["Name"]
        gap = ticks(r["Serviced"]) - ticks(device["Installed"])
        assert timedelta(0) <= gap <= timedelta(days=31)
    # Each date column within its own range (whole months around it when values are not copied).
    slack = timedelta(0) if copy else timedelta(days=31)
    seen = [r["ReadAt"] for r in readings]
    assert all(min(seen) - slack <= ticks(v) < max(seen) + timedelta(minutes=1) + slack for v in column(made_readings, "ReadAt"))
    installed = [d["Installed"] for d in devices]
    assert all(min(installed) - slack <= ticks(v) <= max(installed) + timedelta(days=1) + slack for v in column(made_devices, "Installed"))
    # Doubles keep two decimals; firmware keeps its three values' shape.
    assert all(len(str(v).split(".")[1]) <= 2 for v in column(made_readings, "Value") if "." in str(v))
    assert len(set(column(made_devices, "Firmware"))) == 3
    # Distinct counts within 10% of the account's, column by column.
    for (part, rows, made) in (("devices", devices, made_devices), ("readings", readings, made_readings)):
        for name in rows[0]:
            if name in ("PartitionKey", "RowKey"):
                continue
            theirs = len({str(r[name].value if isinstance(r[name], EntityProperty) else r[name]) for r in rows})
            ours = len({str(v) for v in column(made, name)})
            assert abs(ours - theirs) <= 0.1 * theirs, (part, name, theirs, ours)
    # Placeholder blobs valid in their format.
    for path in (tmp_path / (folder.name + "-made") / "blobs").rglob("*.json"):
        json.loads(path.read_text())
    report = (folder / "fidelity.md").read_text()
    assert "Fidelity:" in scanned.stdout and "| `Seq` |" in report
    if not copy:
        # Unique addresses that do not key are made-up addresses, each once (not "1", "2", …).
        assert all("@" in v for v in column(made_devices, "Email")), column(made_devices, "Email")[:3]
        # No value seen in fewer than 5 entities: no device name, e-mail or badge anywhere scan wrote.
        written = "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file() and p.suffix in (".yaml", ".mustache", ".md"))
        assert not any(d["Name"] in written or d["Email"] in written for d in devices)
        assert "device-red-0" not in scanned.stdout
