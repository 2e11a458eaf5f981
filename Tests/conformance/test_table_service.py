"""The emulator's Table service, driven through azure-data-tables and judged by Azure's
documented results (docs/PROTOCOL.md), error codes included."""
import base64
import datetime
import json
import re
import uuid

import pytest
from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceModifiedError, ResourceNotFoundError
from azure.data.tables import EdmType, EntityProperty, TableServiceClient, TableTransactionError, UpdateMode

from conftest import ACCOUNT


def code(error):
    """The service's error code: the SDK's attribute where it sets one, else x-ms-error-code."""
    return getattr(error, "error_code", None) or error.response.headers.get("x-ms-error-code")


@pytest.fixture
def service(emulator):
    return TableServiceClient.from_connection_string(emulator.connection_string, retry_total=0)


@pytest.fixture
def table(service, name):
    return service.create_table(name)


def test_table_lifecycle_and_errors(service, name):
    service.create_table(name)
    with pytest.raises(ResourceExistsError) as e:
        service.create_table(name)
    assert code(e.value) == "TableAlreadyExists"
    with pytest.raises(ResourceExistsError):
        service.create_table(name.upper())  # names are case-insensitive
    assert [t.name for t in service.query_tables(f"TableName eq '{name}'")] == [name]
    assert name in [t.name for t in service.list_tables()]
    service.delete_table(name)
    assert [t.name for t in service.query_tables(f"TableName eq '{name}'")] == []
    with pytest.raises(ResourceNotFoundError) as e:
        service.get_table_client(name).create_entity({"PartitionKey": "p", "RowKey": "r"})
    assert code(e.value) == "TableNotFound"


def test_invalid_table_name_is_400(emulator, service):
    # The SDK turns this 400 into its own ValueError, so the wire answer is checked directly.
    with pytest.raises(ValueError):
        service.create_table("1bad")
    r = emulator.raw("POST", f"{emulator.table}/Tables", {"Content-Type": "application/json"}, b'{"TableName":"1bad"}', service="table")
    assert r.status_code == 400 and r.headers["x-ms-error-code"] == "InvalidResourceName"


def test_list_tables_pages_with_continuation(service, name):
    for i in range(5):
        service.create_table(f"{name}p{i}")
    pages = list(service.query_tables(f"TableName ge '{name}p' and TableName lt '{name}q'", results_per_page=2).by_page())
    assert [len(list(p)) for p in pages] == [2, 2, 1]


EVERY_TYPE = {
    "PartitionKey": "p k'1", "RowKey": "r/ü",
    "Str": "héllo", "Int": 42, "Neg": -7,
    "Big": EntityProperty(2**40, EdmType.INT64),
    "Dbl": 2.0, "Frac": 0.25,
    "Flag": True,
    "When": datetime.datetime(2026, 3, 4, 5, 6, 7, tzinfo=datetime.timezone.utc),
    "Id": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "Bytes": b"\x00\x01\xff",
}


def test_every_edm_type_round_trips(table):
    entity = dict(EVERY_TYPE)
    entity["RowKey"] = "r-u"
    table.create_entity(entity)
    got = table.get_entity("p k'1", "r-u")
    assert got["Str"] == "héllo" and got["Int"] == 42 and got["Neg"] == -7
    assert got["Big"].value == 2**40 and got["Big"].edm_type == EdmType.INT64
    assert got["Dbl"] == 2.0 and isinstance(got["Dbl"], float) and got["Frac"] == 0.25
    assert got["Flag"] is True
    assert got["When"] == EVERY_TYPE["When"]
    assert got["Id"] == EVERY_TYPE["Id"]
    assert got["Bytes"] == b"\x00\x01\xff"


def test_etag_and_timestamp_shape(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    got = table.get_entity("p", "r")
    etag, ts = got.metadata["etag"], got.metadata["timestamp"]
    assert re.fullmatch(r"W/\"datetime'\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\d\.\d{7}Z'\"", etag), etag
    assert ts.tzinfo is not None


def test_insert_conflict_update_merge_delete(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "a": 1, "b": "x"})
    with pytest.raises(ResourceExistsError) as e:
        table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    assert code(e.value) == "EntityAlreadyExists"
    current = table.get_entity("p", "r")
    # Replace with the right ETag, then a stale one.
    table.update_entity({"PartitionKey": "p", "RowKey": "r", "a": 2}, mode=UpdateMode.REPLACE,
                        etag=current.metadata["etag"], match_condition=MatchConditions.IfNotModified)
    assert dict(table.get_entity("p", "r")) == {"PartitionKey": "p", "RowKey": "r", "a": 2}
    with pytest.raises(HttpResponseError) as e:
        table.update_entity({"PartitionKey": "p", "RowKey": "r", "a": 3}, mode=UpdateMode.REPLACE,
                            etag=current.metadata["etag"], match_condition=MatchConditions.IfNotModified)
    assert e.value.status_code == 412 and code(e.value) == "UpdateConditionNotSatisfied"
    # Merge (the SDK sends PATCH) keeps what it does not name.
    table.update_entity({"PartitionKey": "p", "RowKey": "r", "c": True}, mode=UpdateMode.MERGE)
    assert dict(table.get_entity("p", "r")) == {"PartitionKey": "p", "RowKey": "r", "a": 2, "c": True}
    with pytest.raises(ResourceNotFoundError):
        table.update_entity({"PartitionKey": "p", "RowKey": "missing", "a": 1}, mode=UpdateMode.MERGE)
    # Upserts create.
    table.upsert_entity({"PartitionKey": "p", "RowKey": "u1", "v": 1}, mode=UpdateMode.MERGE)
    table.upsert_entity({"PartitionKey": "p", "RowKey": "u2", "v": 2}, mode=UpdateMode.REPLACE)
    table.upsert_entity({"PartitionKey": "p", "RowKey": "u2", "w": 3}, mode=UpdateMode.REPLACE)
    assert dict(table.get_entity("p", "u2")) == {"PartitionKey": "p", "RowKey": "u2", "w": 3}
    table.delete_entity("p", "r")
    with pytest.raises(ResourceNotFoundError) as e:
        table.get_entity("p", "r")
    assert code(e.value) == "ResourceNotFound"
    table.delete_entity("p", "r")  # the SDK treats a 404 on delete as done


def test_merge_with_the_merge_verb(emulator, table, name):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "a": 1})
    r = emulator.raw("MERGE", f"{emulator.table}/{name}(PartitionKey='p',RowKey='r')",
                     {"Content-Type": "application/json", "If-Match": "*", "DataServiceVersion": "3.0"},
                     json.dumps({"b": "two"}).encode(), service="table")
    assert r.status_code == 204 and r.headers["ETag"].startswith("W/\"datetime'")
    assert dict(table.get_entity("p", "r")) == {"PartitionKey": "p", "RowKey": "r", "a": 1, "b": "two"}


def seed(table, n, partition="p"):
    ops = [("upsert", {"PartitionKey": partition, "RowKey": f"{i:04d}", "N": i, "Even": i % 2 == 0,
                        "Name": f"name{i % 7}", "At": datetime.datetime(2026, 1, 1 + i % 28, tzinfo=datetime.timezone.utc),
                        "G": uuid.UUID(int=i), "L": EntityProperty(i * 10**10, EdmType.INT64), "D": i / 4})
           for i in range(n)]
    for k in range(0, n, 100):
        table.submit_transaction(ops[k:k + 100])


@pytest.mark.parametrize("query,expected", [
    ("N eq 5", [5]),
    ("N ne 5 and N lt 4", [0, 1, 2, 3]),
    ("N gt 45", [46, 47, 48, 49]),
    ("N ge 48 or N le 1", [0, 1, 48, 49]),
    ("not (N lt 47)", [47, 48, 49]),
    ("Even eq true and N gt 44", [46, 48]),
    ("Name eq 'name3' and N lt 20", [3, 10, 17]),
    ("RowKey gt '0047'", [48, 49]),
    ("At eq datetime'2026-01-05T00:00:00Z'", [4, 32]),
    ("G eq guid'00000000-0000-0000-0000-000000000007'", [7]),
    ("L ge 480000000000L", [48, 49]),
    ("D gt 12.0", [49]),
    ("PartitionKey eq 'p' and N eq 9", [9]),
    ("PartitionKey eq 'other'", []),
])
def test_filters(service, name, query, expected):
    table = service.create_table(name)
    seed(table, 50)
    assert sorted(e["N"] for e in table.query_entities(query)) == expected


def test_select_top_and_continuation(table):
    seed(table, 250)
    pages = list(table.query_entities("N ge 0", results_per_page=100, select=["N", "Name"]).by_page())
    counts = [len(list(p)) for p in pages]
    assert counts == [100, 100, 50]
    first = next(iter(table.query_entities("N eq 3", select=["N", "Missing"])))
    assert first["N"] == 3 and "Name" not in first and "PartitionKey" not in first


def test_queries_page_at_1000(table):
    seed(table, 1200)
    pages = list(table.list_entities().by_page())
    assert [len(list(p)) for p in pages] == [1000, 200]


def test_batch_success_and_atomic_failure(table):
    table.submit_transaction([("create", {"PartitionKey": "b", "RowKey": str(i)}) for i in range(5)])
    assert len(list(table.query_entities("PartitionKey eq 'b'"))) == 5
    with pytest.raises(TableTransactionError) as e:
        table.submit_transaction([("create", {"PartitionKey": "b", "RowKey": "new"}),
                                  ("upsert", {"PartitionKey": "b", "RowKey": "0", "x": 1}),
                                  ("create", {"PartitionKey": "b", "RowKey": "3"})])
    assert e.value.index == 2 and e.value.error_code == "EntityAlreadyExists"
    assert str(e.value).startswith("2:The specified entity already exists.")
    # Nothing of the failed batch was applied.
    assert [x["RowKey"] for x in table.query_entities("PartitionKey eq 'b'")] == ["0", "1", "2", "3", "4"]
    assert "x" not in table.get_entity("b", "0")
    table.submit_transaction([("delete", {"PartitionKey": "b", "RowKey": "0"}),
                              ("update", {"PartitionKey": "b", "RowKey": "1", "y": 2}, {"mode": "merge"}),
                              ("upsert", {"PartitionKey": "b", "RowKey": "2", "z": 3}, {"mode": "replace"})])
    assert [x["RowKey"] for x in table.query_entities("PartitionKey eq 'b'")] == ["1", "2", "3", "4"]
    assert table.get_entity("b", "1")["y"] == 2


def batch_body(name, base, ops, boundary="batch_x", changeset="changeset_y"):
    lines = [f"--{boundary}", f"Content-Type: multipart/mixed; boundary={changeset}", ""]
    for i, (method, pk, rk) in enumerate(ops):
        lines += [f"--{changeset}", "Content-Type: application/http", "Content-Transfer-Encoding: binary", f"Content-ID: {i}", ""]
        if method == "POST":
            lines += [f"POST {base}/{name} HTTP/1.1", "Content-Type: application/json", "Accept: application/json;odata=minimalmetadata",
                      "Prefer: return-no-content", "DataServiceVersion: 3.0", "", json.dumps({"PartitionKey": pk, "RowKey": rk})]
        else:
            lines += [f"DELETE {base}/{name}(PartitionKey='{pk}',RowKey='{rk}') HTTP/1.1", "If-Match: *", "DataServiceVersion: 3.0", "", ""]
    lines += [f"--{changeset}--", "", f"--{boundary}--", ""]
    return "\r\n".join(lines).encode()


def send_batch(emulator, name, ops):
    body = batch_body(name, emulator.table, ops)
    return emulator.raw("POST", f"{emulator.table}/$batch",
                        {"Content-Type": "multipart/mixed; boundary=batch_x", "DataServiceVersion": "3.0",
                         "MaxDataServiceVersion": "3.0;NetFx", "Accept": "application/json;odata=minimalmetadata"},
                        body, service="table")


@pytest.mark.parametrize("ops,index,code,message", [
    ([("POST", "a", "1"), ("POST", "b", "2")], 1, "CommandsInBatchActOnDifferentPartitions", "1:All commands in a batch must operate on same entity group."),
    ([("POST", "a", "1"), ("DELETE", "a", "1")], 1, "InvalidDuplicateRow", "1:The batch request contains multiple changes with same row key."),
    ([("POST", "a", str(i)) for i in range(101)], None, "InvalidInput", "exceeds the maximum 100 changes per change set."),
    ([("DELETE", "a", "nope")], 0, "ResourceNotFound", "0:The specified resource does not exist."),
])
def test_batch_rejections_answer_202_with_the_failing_index(emulator, table, name, ops, index, code, message):
    r = send_batch(emulator, name, ops)
    assert r.status_code == 202, r.text
    assert r.headers["Content-Type"].startswith("multipart/mixed; boundary=batchresponse_")
    status_lines = re.findall(r"HTTP/1.1 (\d{3})", r.text)
    assert len(status_lines) == 1 and status_lines[0].startswith("4")
    error = json.loads(r.text[r.text.index("{"):r.text.rindex("}") + 1])["odata.error"]
    assert error["code"] == code and message in error["message"]["value"]
    if index is not None:
        assert error["message"]["value"].startswith(f"{index}:")
    assert list(table.list_entities()) == []


def test_batch_on_missing_table(emulator, name):
    r = send_batch(emulator, name + "missing", [("POST", "a", "1")])
    assert r.status_code == 202 and "TableNotFound" in r.text and '"0:The table specified does not exist.' in r.text


def test_shared_key_lite_and_wrong_signature(emulator, table, name):
    import hashlib, hmac
    from email.utils import formatdate
    from conftest import KEY, send
    date = formatdate(usegmt=True)
    resource = f"/{ACCOUNT}/{ACCOUNT}/{name}()"
    sig = base64.b64encode(hmac.new(base64.b64decode(KEY), f"{date}\n{resource}".encode(), hashlib.sha256).digest()).decode()
    headers = {"x-ms-date": date, "x-ms-version": "2019-02-02", "Accept": "application/json;odata=nometadata",
               "DataServiceVersion": "3.0", "Authorization": f"SharedKeyLite {ACCOUNT}:{sig}"}
    r = send("GET", f"{emulator.table}/{name}()", headers)
    assert r.status_code == 200 and json.loads(r.content) == {"value": []}
    headers["Authorization"] = f"SharedKeyLite {ACCOUNT}:" + base64.b64encode(b"x" * 32).decode()
    r = send("GET", f"{emulator.table}/{name}()", headers)
    assert r.status_code == 403 and r.headers["x-ms-error-code"] == "AuthenticationFailed"
    assert json.loads(r.content)["odata.error"]["code"] == "AuthenticationFailed"
    del headers["Authorization"]
    assert send("GET", f"{emulator.table}/{name}()", headers).status_code == 404  # no anonymous table access


def test_metadata_levels(emulator, table, name):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "Big": EntityProperty(5, EdmType.INT64), "D": 1.5})
    url = f"{emulator.table}/{name}(PartitionKey='p',RowKey='r')"
    none = json.loads(emulator.raw("GET", url, {"Accept": "application/json;odata=nometadata"}, service="table").content)
    assert none["Big"] == "5" and "Big@odata.type" not in none and "odata.etag" not in none
    minimal = json.loads(emulator.raw("GET", url, {"Accept": "application/json;odata=minimalmetadata"}, service="table").content)
    assert minimal["Big@odata.type"] == "Edm.Int64" and "D@odata.type" not in minimal and minimal["odata.etag"].startswith("W/")
    assert minimal["odata.metadata"].endswith(f"/$metadata#{name}/@Element")
    full = json.loads(emulator.raw("GET", url, {"Accept": "application/json;odata=fullmetadata"}, service="table").content)
    assert full["D@odata.type"] == "Edm.Double" and full["Timestamp@odata.type"] == "Edm.DateTime" and "odata.id" in full


def test_entity_limits(emulator, table, name):
    with pytest.raises(HttpResponseError) as e:
        table.create_entity({"PartitionKey": "a/b", "RowKey": "r"})
    assert e.value.status_code == 400
    with pytest.raises(HttpResponseError) as e:
        table.create_entity({"PartitionKey": "p", "RowKey": "r", "S": "x" * 40000})
    assert code(e.value) == "PropertyValueTooLarge"
    with pytest.raises(HttpResponseError) as e:
        table.create_entity({"PartitionKey": "p", "RowKey": "r", **{f"P{i}": i for i in range(253)}})
    assert code(e.value) == "TooManyProperties"
    r = emulator.raw("POST", f"{emulator.table}/{name}", {"Content-Type": "application/json"},
                     json.dumps({"PartitionKey": "p", "RowKey": "r", "S": "x" * (5 << 20)}).encode(), service="table")
    assert r.status_code == 413 and r.headers["x-ms-error-code"] == "RequestBodyTooLarge"
    assert list(table.list_entities()) == []


def test_malformed_table_requests(emulator, table, name):
    for method, path, body in [("POST", name, b"{not json"), ("POST", name, b"[1,2]"), ("GET", f"{name}()?$filter=N%20eq", b""),
                               ("GET", f"{name}()?$top=0", b""), ("POST", "$batch", b"garbage"),
                               ("GET", f"{name}(PartitionKey='p'", b""), ("POST", "Tables", b"{}")]:
        r = emulator.raw(method, f"{emulator.table}/{path}", {"Content-Type": "application/json"}, body, service="table")
        assert r.status_code == 400, (method, path, r.status_code, r.text)
        assert r.headers["x-ms-error-code"] and "odata.error" in r.text
    assert emulator.alive() and list(table.list_entities()) == []
