"""Query Blob Contents (`query_blob`) through the official SDK: CSV and JSON in and out, column
selection, WHERE, COUNT(*), LIMIT, snapshots, conditions and leases as on Get Blob — and as a
stranger would try it: a SAS without read, an anonymous caller, a body or expression too big, a
format the emulator does not implement, a blob written to hurt the parser. Refusals are
Azure's error form and change nothing."""
from datetime import datetime, timedelta, timezone

import pytest
import requests
from azure.core.exceptions import HttpResponseError, ResourceModifiedError, ResourceNotFoundError
from azure.storage.blob import (BlobClient, BlobSasPermissions, BlobServiceClient, DelimitedJsonDialect,
                                DelimitedTextDialect, generate_blob_sas)
from azure.storage.blob._models import ArrowDialect, ArrowType

CSV = b"name,city,score\r\nada,london,91\r\ngrace,new york,78\r\nalan,\"wilmslow, cheshire\",85\r\n"


def _blob(emulator, name, data=CSV):
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    container = service.create_container(name)
    blob = container.get_blob_client("data.csv")
    blob.upload_blob(data)
    return service, container, blob


def test_columns_where_headers_and_json(emulator, name):
    _, _, blob = _blob(emulator, name)
    with_headers = DelimitedTextDialect(has_header=True)
    errors = []
    reader = blob.query_blob("SELECT name, score FROM BlobStorage WHERE score > 80", blob_format=with_headers,
                             output_format=DelimitedTextDialect(has_header=True), on_error=errors.append)
    assert reader.readall() == b"name,score\nada,91\nalan,85\n" and errors == []
    assert len(reader) == len(CSV)
    # A field holding the separator goes out quoted; JSON output names the columns.
    out = blob.query_blob("SELECT city FROM BlobStorage WHERE name = 'alan'", blob_format=with_headers,
                          output_format=DelimitedJsonDialect(delimiter="\n")).readall()
    assert out == b'{"city":"wilmslow, cheshire"}\n'
    assert blob.query_blob("SELECT * FROM BlobStorage WHERE name LIKE 'a%' LIMIT 1",
                           blob_format=with_headers).readall() == b"name,city,score\nada,london,91\n"
    assert blob.query_blob("SELECT COUNT(*) FROM BlobStorage WHERE score BETWEEN 80 AND 90",
                           blob_format=with_headers).readall() == b"_1\n1\n"  # output as input: with a header
    # A count is a number in JSON; a name the header does not hold is one fatal error, not silence.
    assert blob.query_blob("SELECT COUNT(*) FROM BlobStorage", blob_format=with_headers,
                           output_format=DelimitedJsonDialect(delimiter="\n")).readall() == b'{"_1":3}\n'
    errors = []
    assert blob.query_blob("SELECT nmae FROM BlobStorage", blob_format=with_headers, on_error=errors.append).readall() == b""
    assert [(e.error, e.is_fatal) for e in errors] == [("InvalidColumnName", True)] and "nmae" in errors[0].description
    # Strings compare by bytes: 'Ada' is not 'ada'.
    assert blob.query_blob("SELECT * FROM BlobStorage WHERE name = 'Ada'", blob_format=with_headers,
                           output_format=DelimitedTextDialect()).readall() == b""


def test_json_input_and_errors(emulator, name):
    _, container, _ = _blob(emulator, name)
    blob = container.get_blob_client("data.json")
    blob.upload_blob(b'{"id": 1, "tags": ["a"], "who": {"name": "ada"}}\n{"id": "two"}\n{"id": 3}')
    errors = []
    out = blob.query_blob("SELECT id FROM BlobStorage WHERE id > 1", blob_format=DelimitedJsonDialect(),
                          on_error=errors.append).readall()
    assert out == b'{"id":3}\n'
    assert [(e.error, e.is_fatal) for e in errors] == [("InvalidTypeConversion", False)]
    assert blob.query_blob("SELECT who.name FROM BlobStorage WHERE id = 1",
                           blob_format=DelimitedJsonDialect()).readall() == b'{"who.name":"ada"}\n'
    # Not JSON: one fatal error, and the query ends there.
    broken = container.get_blob_client("broken.json")
    broken.upload_blob(b'{"a": 1}\n{a: 2}\n{"a": 3}')
    errors = []
    out = broken.query_blob("SELECT * FROM BlobStorage", blob_format=DelimitedJsonDialect(), on_error=errors.append).readall()
    assert out == b'{"a":1}\n'
    assert [(e.error, e.is_fatal) for e in errors] == [("ParseError", True)]
    assert "Unexpected token 'a' at [byte: 10]" in errors[0].description


def test_snapshot_conditions_and_lease(emulator, name):
    _, _, blob = _blob(emulator, name)
    snapshot = blob.create_snapshot()
    blob.upload_blob(b"other,data\r\n", overwrite=True)
    old = BlobClient.from_connection_string(emulator.connection_string, name, "data.csv", snapshot=snapshot["snapshot"])
    assert old.query_blob("SELECT _1 FROM BlobStorage LIMIT 1").readall() == b"name\n"
    with pytest.raises(ResourceModifiedError):
        blob.query_blob("SELECT * FROM BlobStorage", etag='"0x1"', match_condition=__import__("azure.core").core.MatchConditions.IfNotModified)
    lease = blob.acquire_lease()
    with pytest.raises(HttpResponseError) as refused:
        blob.query_blob("SELECT * FROM BlobStorage", lease="00000000-0000-0000-0000-000000000000")
    assert refused.value.error_code == "LeaseIdMismatchWithBlobOperation"
    assert blob.query_blob("SELECT * FROM BlobStorage", lease=lease).readall() == b"other,data\n"
    lease.release()


def test_a_big_blob_streams_in_pieces(emulator, name):
    rows = b"".join(b"%d,%d\n" % (i, i % 7) for i in range(300_000))
    _, _, blob = _blob(emulator, name, rows)
    reader = blob.query_blob("SELECT _1 FROM BlobStorage WHERE _2 = 3")
    chunks = list(reader._iter_stream())
    assert len(chunks) > 3  # one data record per piece read, not the whole answer at once
    assert b"".join(chunks) == b"".join(b"%d\n" % i for i in range(300_000) if i % 7 == 3)
    assert reader._bytes_processed == reader._size == len(rows)


def test_a_stranger_is_refused_and_nothing_changes(emulator, name):
    service, container, blob = _blob(emulator, name)
    before = blob.get_blob_properties().etag
    # A SAS that cannot read cannot query; one that can, can.
    key = emulator.connection_string.split("AccountKey=")[1].split(";")[0]
    expiry = datetime.now(timezone.utc) + timedelta(hours=1)
    write_only = generate_blob_sas("devstoreaccount1", name, "data.csv", account_key=key,
                                   permission=BlobSasPermissions(write=True), expiry=expiry)
    with pytest.raises(HttpResponseError) as refused:
        BlobClient.from_blob_url(blob.url, credential=write_only).query_blob("SELECT * FROM BlobStorage").readall()
    assert refused.value.status_code == 403
    readable = generate_blob_sas("devstoreaccount1", name, "data.csv", account_key=key,
                                 permission=BlobSasPermissions(read=True), expiry=expiry)
    assert BlobClient.from_blob_url(blob.url, credential=readable).query_blob("SELECT _1 FROM BlobStorage LIMIT 1").readall() == b"name\n"
    # Anonymous, on a private container: as if nothing were there.
    body = b"<QueryRequest><QueryType>SQL</QueryType><Expression>SELECT * FROM BlobStorage</Expression></QueryRequest>"
    anonymous = requests.post(blob.url + "?comp=query", data=body, headers={"x-ms-version": "2025-11-05"}, timeout=10)
    assert anonymous.status_code == 404 and b"name,city" not in anonymous.content
    # What the emulator does not implement, or too much, is Azure's 400 with the element named.
    for expression, output in (("SELECT SUM(score) FROM BlobStorage", None), ("SELECT * FROM BlobStorage[*].a", None),
                               ("SELECT * FROM BlobStorage", [ArrowDialect(ArrowType.DECIMAL, name="a", precision=40, scale=2)]),
                               ("SELECT * FROM BlobStorage WHERE " + "(" * 500 + "_1 = 1" + ")" * 500, None),
                               ("SELECT * FROM BlobStorage WHERE _1 = '" + "x" * 70_000 + "'", None)):
        with pytest.raises(HttpResponseError) as refused:
            blob.query_blob(expression, output_format=output).readall()
        assert refused.value.status_code == 400 and refused.value.error_code == "InvalidXmlNodeValue", expression
    # A blob written to hurt the parser: deep nesting and one endless record end in one fatal
    # error each, and the emulator answers the next request.
    hostile = container.get_blob_client("hostile.json")
    hostile.upload_blob(b"[" * 200_000)
    errors = []
    hostile.query_blob("SELECT * FROM BlobStorage", blob_format=DelimitedJsonDialect(), on_error=errors.append).readall()
    assert [e.is_fatal for e in errors] == [True]
    hostile.upload_blob(b'"' + b"x" * (5 << 20), overwrite=True)
    errors = []
    hostile.query_blob("SELECT * FROM BlobStorage", blob_format=DelimitedJsonDialect(), on_error=errors.append).readall()
    assert [(e.error, e.is_fatal) for e in errors] == [("RecordTooLarge", True)]
    assert blob.get_blob_properties().etag == before
    with pytest.raises(ResourceNotFoundError):
        container.get_blob_client("missing.csv").query_blob("SELECT * FROM BlobStorage")
