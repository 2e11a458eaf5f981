"""Storage Analytics (logging and hour/minute metrics, switched on in Set Service Properties)
through the official SDKs: what was requested is logged to `$logs` in Azure's format and
counted in the `$Metrics…` tables, for Blob and Table. And what must not happen: a credential in
a log (a SAS signature, a key, a token), an anonymous stranger's failed probes filling the log,
a caller writing the metrics tables, a setting Azure refuses kept, entries lost at shutdown."""
import time
from datetime import datetime, timedelta, timezone

import pytest
import requests
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableServiceClient
from azure.storage.blob import (BlobAnalyticsLogging, BlobSasPermissions, BlobServiceClient, Metrics, PublicAccess,
                                RetentionPolicy, generate_blob_sas)
from azure.data.tables import TableAnalyticsLogging
from azure.data.tables import TableMetrics, TableRetentionPolicy

from conftest import KEY, start_emulator, stop_emulator


def _fields(line):
    """Splits an entry at the semicolons outside quotes, as Azure's format is read."""
    fields, field, quoted = [], "", False
    for c in line:
        if c == '"':
            quoted = not quoted
        if c == ";" and not quoted:
            fields.append(field)
            field = ""
        else:
            field += c
    return fields + [field]


def _logs(service, prefix):
    logs = service.get_container_client("$logs")
    entries = []
    for blob in logs.list_blobs(name_starts_with=prefix, include=["metadata"]):
        entries += [(blob, _fields(line)) for line in logs.download_blob(blob.name).readall().decode().splitlines()]
    return entries


def test_blob_logging_and_metrics(azseed, name):
    emulator = start_emulator(azseed, "--in-memory", "--analytics-flush-seconds", "0.5")
    try:
        service = BlobServiceClient.from_connection_string(emulator.connection_string)
        service.set_service_properties(
            analytics_logging=BlobAnalyticsLogging(read=True, write=True, delete=True,
                                                   retention_policy=RetentionPolicy(enabled=True, days=2)),
            hour_metrics=Metrics(enabled=True, include_apis=True, retention_policy=RetentionPolicy(enabled=True, days=2)),
            minute_metrics=Metrics(enabled=True, include_apis=False, retention_policy=RetentionPolicy(enabled=True, days=1)))
        container = service.create_container(name, public_access=PublicAccess.BLOB)
        blob = container.upload_blob("a.txt", b"hello")
        sas = generate_blob_sas("devstoreaccount1", name, "a.txt", account_key=KEY, permission=BlobSasPermissions(read=True),
                                expiry=datetime.now(timezone.utc) + timedelta(hours=1))
        assert requests.get(f"{blob.url}?{sas}", timeout=10).content == b"hello"
        assert requests.get(blob.url, timeout=10).content == b"hello"  # anonymous, public
        for _ in range(20):  # a stranger's probes: anonymous failures are not logged
            requests.get(f"{container.url}/nope{_}", timeout=10)
        blob.delete_blob()
        time.sleep(1.5)
        entries = _logs(service, "blob/")
        assert entries and all(len(fields) == 30 and fields[0] == "1.0" for _, fields in entries)
        log_blob = entries[0][0]
        assert log_blob.metadata["LogVersion"] == "1.0" and set(log_blob.metadata["LogType"].split(",")) <= {"read", "write", "delete"}
        by_operation = [(f[2], f[3], f[4], f[7]) for _, f in entries]
        assert ("CreateContainer", "Success", "201", "authenticated") in by_operation
        assert ("PutBlob", "Success", "201", "authenticated") in by_operation
        assert ("GetBlob", "SASSuccess", "200", "sas") in by_operation
        assert ("GetBlob", "AnonymousSuccess", "200", "anonymous") in by_operation
        assert ("DeleteBlob", "Success", "202", "authenticated") in by_operation
        assert not [o for o in by_operation if o[3] == "anonymous" and o[2] == "404"]
        text = "\n".join(";".join(f) for _, f in entries)
        signature = sas.split("sig=")[1].split("&")[0]
        assert signature not in text and requests.utils.unquote(signature) not in text and KEY not in text
        # Metrics: per hour with per-API rows, per minute without.
        tables = TableServiceClient.from_connection_string(emulator.connection_string)
        hour = list(tables.get_table_client("$MetricsHourPrimaryTransactionsBlob").list_entities())
        rows = {e["RowKey"]: e for e in hour}
        assert rows["user;All"]["TotalRequests"].value >= 5 and rows["user;PutBlob"]["TotalRequests"].value == 1
        assert rows["user;GetBlob"]["SASSuccess"].value == 1 and rows["user;GetBlob"]["AnonymousSuccess"].value == 1
        minute = list(tables.get_table_client("$MetricsMinutePrimaryTransactionsBlob").list_entities())
        assert {e["RowKey"] for e in minute} == {"user;All"}
        # Read, never written or listed, by callers: not one by one, not in a batch, not deleted.
        assert "$MetricsHourPrimaryTransactionsBlob" not in [t.name for t in tables.list_tables()]
        metrics = tables.get_table_client("$MetricsHourPrimaryTransactionsBlob")
        with pytest.raises(HttpResponseError) as refused:
            metrics.upsert_entity({"PartitionKey": "x", "RowKey": "y"})
        assert refused.value.status_code == 403
        with pytest.raises(Exception):
            metrics.submit_transaction([("create", {"PartitionKey": "x", "RowKey": "forged", "TotalRequests": 999999})])
        with pytest.raises(HttpResponseError) as refused:
            tables.delete_table("$MetricsHourPrimaryTransactionsBlob")
        assert refused.value.status_code == 403
        assert not [e for e in metrics.list_entities() if e["RowKey"] == "forged"]
        # A stranger cannot add fields to an entry, nor fill the log with failed credentials.
        requests.get(f"{container.url}/a.txt", headers={"x-ms-version": "2020-01-01;INJECTED;FIELDS;x",
                                                         "Authorization": "SharedKey devstoreaccount1:bogus"}, timeout=10)
        requests.put(f"{container.url}/c.txt?sig=x&sv=2020-01-01", data=b"x",
                     headers={"Content-MD5": "a;b;c;d", "x-ms-blob-type": "BlockBlob"}, timeout=10)
        time.sleep(1.5)
        assert all(len(f) == 30 for _, f in _logs(service, "blob/"))
        assert "INJECTED" not in "\n".join(";".join(f) for _, f in _logs(service, "blob/"))
        # $logs stays (403 for its deletion); capacity metrics are not kept (404, said so).
        with pytest.raises(HttpResponseError) as refused:
            service.delete_container("$logs")
        assert refused.value.status_code == 403
        with pytest.raises(HttpResponseError) as refused:
            list(tables.get_table_client("$MetricsCapacityBlob").list_entities())
        assert refused.value.status_code == 404 and "capacity" in refused.value.message
        # Off again: nothing more is logged.
        service.set_service_properties(analytics_logging=BlobAnalyticsLogging())
        time.sleep(1.5)  # what was logged before (the reads above) is written by now
        before = len(_logs(service, "blob/"))
        container.upload_blob("b.txt", b"b")
        time.sleep(1.5)
        assert len(_logs(service, "blob/")) == before
    finally:
        stop_emulator(emulator)


def test_table_logging_v2_and_entries_written_at_shutdown(azseed, tmp_path):
    # A long flush interval: what is logged is written when the emulator stops.
    emulator = start_emulator(azseed, "--data-dir", str(tmp_path), "--analytics-flush-seconds", "3600")
    try:
        tables = TableServiceClient.from_connection_string(emulator.connection_string)
        tables.set_service_properties(
            analytics_logging=TableAnalyticsLogging(version="2.0", read=True, write=True, delete=True,
                                                    retention_policy=TableRetentionPolicy(enabled=True, days=3)),
            hour_metrics=TableMetrics(enabled=True, include_apis=True, retention_policy=TableRetentionPolicy(enabled=True, days=3)))
        table = tables.create_table("logged")
        table.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
        table.get_entity("p", "r")
    finally:
        # A graceful stop writes what was gathered; give it time on a loaded machine.
        emulator.process.terminate()
        emulator.process.wait(timeout=120)
    emulator = start_emulator(azseed, "--data-dir", str(tmp_path))
    try:
        service = BlobServiceClient.from_connection_string(emulator.connection_string)
        entries = _logs(service, "table/")
        operations = [f[2] for _, f in entries]
        assert all(len(f) == 38 and f[0] == "2.0" for _, f in entries), entries[:2]
        assert "CreateTable" in operations and "InsertEntity" in operations and "QueryEntity" in operations
        rows = {e["RowKey"] for e in TableServiceClient.from_connection_string(emulator.connection_string)
                .get_table_client("$MetricsHourPrimaryTransactionsTable").list_entities()}
        assert {"user;All", "user;InsertEntity"} <= rows
    finally:
        stop_emulator(emulator)


@pytest.mark.parametrize("logging,metrics", [
    (BlobAnalyticsLogging(read=True, retention_policy=RetentionPolicy(enabled=True, days=0)), None),
    (BlobAnalyticsLogging(read=True, retention_policy=RetentionPolicy(enabled=True, days=366)), None),
    (None, Metrics(enabled=True, include_apis=None)),
])
def test_settings_azure_refuses_are_refused_and_nothing_changes(emulator, logging, metrics):
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    before = service.get_service_properties()
    with pytest.raises(HttpResponseError) as refused:
        service.set_service_properties(analytics_logging=logging, hour_metrics=metrics)
    assert refused.value.status_code == 400
    after = service.get_service_properties()
    assert after["analytics_logging"].read == before["analytics_logging"].read
    assert after["hour_metrics"].enabled == before["hour_metrics"].enabled
