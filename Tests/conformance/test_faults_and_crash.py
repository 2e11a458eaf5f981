"""Fault injection and durability: the failures the emulator injects look like Azure's, and
what it acknowledged survives `kill -9`."""
import os
import signal
import threading
import time

import pytest
from azure.core.exceptions import HttpResponseError, ServiceRequestError, ServiceResponseError
from azure.data.tables import TableServiceClient
from azure.storage.blob import BlobServiceClient

from conftest import start_emulator, stop_emulator


def test_injected_faults(azseed, name):
    emulator = start_emulator(azseed, "--in-memory", "--fault-rate", "0.3", "--fault-seed", "7")
    try:
        service = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0)
        while True:
            try:
                container = service.create_container(name)
                break
            except (HttpResponseError, ServiceRequestError, ServiceResponseError) as e:
                if getattr(e, "error_code", None) == "ContainerAlreadyExists":
                    container = service.get_container_client(name)
                    break
        outcomes = {}
        for i in range(150):
            blob = f"b{i}"
            try:
                container.upload_blob(blob, b"x")
                outcomes[blob] = "ok"
            except HttpResponseError as e:
                outcomes[blob] = f"{e.status_code} {e.response.headers['x-ms-error-code']}"
            except (ServiceRequestError, ServiceResponseError):
                outcomes[blob] = "dropped"
        kinds = set(outcomes.values())
        assert {"ok", "503 ServerBusy", "500 OperationTimedOut", "dropped"} <= kinds, kinds
        assert kinds <= {"ok", "503 ServerBusy", "500 OperationTimedOut", "dropped"}, kinds

        def listed():
            while True:  # listing can be hit by a fault too; ask until it answers
                try:
                    return {b.name for b in container.list_blobs()}
                except (HttpResponseError, ServiceRequestError, ServiceResponseError):
                    continue

        present = listed()
        for blob, outcome in outcomes.items():
            # ServerBusy fails before applying; a timeout or a dropped connection after.
            assert (blob in present) == (outcome != "503 ServerBusy"), (blob, outcome)
        assert emulator.alive()
    finally:
        stop_emulator(emulator)


def test_same_seed_injects_the_same_faults(azseed):
    def run():
        emulator = start_emulator(azseed, "--in-memory", "--fault-rate", "0.5", "--fault-seed", "3")
        try:
            service = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0)
            seen = []
            for i in range(40):
                try:
                    list(service.list_containers())
                    seen.append("ok")
                except HttpResponseError as e:
                    seen.append(e.response.headers["x-ms-error-code"])
                except (ServiceRequestError, ServiceResponseError):
                    seen.append("dropped")
            return seen
        finally:
            stop_emulator(emulator)
    first = run()
    assert set(first) > {"ok"}, first  # faults happened, so equality below means something
    assert run() == first


def test_acknowledged_writes_survive_kill_9(azseed, tmp_path):
    data = tmp_path / "storage"
    emulator = start_emulator(azseed, "--data-dir", str(data))
    tables = TableServiceClient.from_connection_string(emulator.connection_string, retry_total=0)
    blobs = BlobServiceClient.from_connection_string(emulator.connection_string, retry_total=0)
    table = tables.create_table("crash")
    container = blobs.create_container("crash")
    acknowledged_entities, acknowledged_blobs = [], []
    stop = threading.Event()

    def write_entities():
        batch = 0
        while not stop.is_set():
            rows = [("upsert", {"PartitionKey": "p", "RowKey": f"{batch:05d}-{i:03d}", "v": i}) for i in range(100)]
            try:
                table.submit_transaction(rows)
            except Exception:
                return
            acknowledged_entities.extend(r[1]["RowKey"] for r in rows)
            batch += 1

    def write_blobs():
        i = 0
        while not stop.is_set():
            try:
                container.upload_blob(f"blob-{i:05d}", os.urandom(2048) + b"%05d" % i)
            except Exception:
                return
            acknowledged_blobs.append(f"blob-{i:05d}")
            i += 1

    threads = [threading.Thread(target=write_entities), threading.Thread(target=write_blobs)]
    for t in threads:
        t.start()
    # Kill once a fair amount is acknowledged (bounded wait), while both writers are busy.
    deadline = time.time() + 30
    while (len(acknowledged_entities) < 500 or len(acknowledged_blobs) < 20) and time.time() < deadline:
        time.sleep(0.1)
    time.sleep(0.3)
    os.kill(emulator.process.pid, signal.SIGKILL)  # mid-write, no chance to flush anything
    emulator.process.wait()
    stop.set()
    for t in threads:
        t.join()
    print(f"acknowledged before kill -9: {len(acknowledged_entities)} entities, {len(acknowledged_blobs)} blobs")
    assert len(acknowledged_entities) >= 500 and len(acknowledged_blobs) >= 20, (len(acknowledged_entities), len(acknowledged_blobs))

    restarted = start_emulator(azseed, "--data-dir", str(data))
    try:
        table = TableServiceClient.from_connection_string(restarted.connection_string, retry_total=0).get_table_client("crash")
        stored = {e["RowKey"] for e in table.query_entities("PartitionKey eq 'p'")}
        assert set(acknowledged_entities) <= stored
        # A batch is all or nothing, also across a crash.
        per_batch = {}
        for key in stored:
            per_batch[key[:5]] = per_batch.get(key[:5], 0) + 1
        assert set(per_batch.values()) == {100}
        container = BlobServiceClient.from_connection_string(restarted.connection_string, retry_total=0).get_container_client("crash")
        for name in acknowledged_blobs:
            content = container.download_blob(name).readall()
            assert len(content) == 2053 and content.endswith(name[-5:].encode())
        # No byte file is left without a blob pointing at it.
        files = [f for _, _, fs in os.walk(data / "blobs") for f in fs]
        assert len(files) == len(list(container.list_blobs()))
    finally:
        stop_emulator(restarted)
