"""Apache Arrow answers, read by clients this project did not write: Query Blob Contents with an
Arrow output schema and List Blobs with `response_format="arrow"` (the official SDK, which reads
them with nanoarrow), and nanoarrow itself on the raw bytes. What a stranger may try: names and
values Arrow and XML carry differently, paging by the marker the schema carries, an anonymous
or SAS caller without the right to list, values that are not of their column's type."""
import io
import urllib.parse
from datetime import datetime, timedelta, timezone

import nanoarrow
import pytest
from azure.core.exceptions import HttpResponseError
from azure.storage.blob import (BlobServiceClient, ContainerClient, ContainerSasPermissions, DelimitedJsonDialect,
                                DelimitedTextDialect, generate_container_sas)
from azure.storage.blob._models import ArrowDialect, ArrowType
from nanoarrow.ipc import InputStream

from conftest import KEY

ARROW = "application/vnd.apache.arrow.stream"


def _read(data):
    """An Arrow IPC stream as its schema's metadata and its columns' values."""
    with InputStream.from_readable(io.BytesIO(data)) as stream:
        reader = nanoarrow.ArrayStream(stream)
        schema = reader.schema
        names = [field.name for field in schema.fields]
        columns = {name: [] for name in names}
        for batch in reader:
            for i, name in enumerate(names):
                columns[name] += batch.child(i).to_pylist()
        metadata = dict(schema.metadata.items()) if schema.metadata is not None else {}
    return metadata, columns


def test_a_query_answers_each_arrow_type(emulator, name):
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    blob = service.create_container(name).get_blob_client("data.csv")
    blob.upload_blob(b"name,n,x,ok,at,price\r\nada,1,1.5,true,2020-01-02T03:04:05.678Z,12.34\r\n"
                     b"grace,,-2,FALSE,2021-06-30,7\r\nalan,x,0,true,2020-01-01,1\r\n")
    schema = [ArrowDialect(ArrowType.STRING, name="name"), ArrowDialect(ArrowType.INT64, name="n"),
              ArrowDialect(ArrowType.DOUBLE, name="x"), ArrowDialect(ArrowType.BOOL, name="ok"),
              ArrowDialect(ArrowType.TIMESTAMP_MS, name="at"),
              ArrowDialect(ArrowType.DECIMAL, name="price", precision=5, scale=2)]
    errors = []
    data = blob.query_blob("SELECT * FROM BlobStorage", blob_format=DelimitedTextDialect(has_header=True),
                           output_format=schema, on_error=errors.append).readall()
    _, columns = _read(data)
    assert columns["name"] == ["ada", "grace"]
    assert columns["n"] == [1, None]
    assert columns["x"] == [1.5, -2.0]
    assert columns["ok"] == [True, False]
    assert [t.replace(tzinfo=timezone.utc) for t in columns["at"]] == [
        datetime(2020, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc), datetime(2021, 6, 30, tzinfo=timezone.utc)]
    assert [str(d) for d in columns["price"]] == ["12.34", "0.07"]
    # "alan" has n = "x": its record is skipped with Azure's non-fatal conversion error.
    assert [(e.error, e.is_fatal) for e in errors] == [("InvalidTypeConversion", False)]
    # JSON records, and COUNT(*), answer in Arrow as well.
    blob.upload_blob(b'{"a": "x", "b": 2}\n{"a": "y", "b": null}\n', overwrite=True)
    data = blob.query_blob("SELECT * FROM BlobStorage", blob_format=DelimitedJsonDialect(),
                           output_format=[ArrowDialect(ArrowType.STRING, name="a"),
                                          ArrowDialect(ArrowType.INT64, name="b")]).readall()
    assert _read(data)[1] == {"a": ["x", "y"], "b": [2, None]}
    data = blob.query_blob("SELECT COUNT(*) FROM BlobStorage", blob_format=DelimitedJsonDialect(),
                           output_format=[ArrowDialect(ArrowType.INT64, name="count")]).readall()
    assert _read(data)[1] == {"count": [2]}


def test_a_query_s_arrow_answer_is_bounded_and_its_schema_checked(emulator, name):
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    blob = service.create_container(name).get_blob_client("big.csv")
    # 3 MB of one-column records: the answer comes in several batches, every row once.
    rows = [b"%07d" % i for i in range(300_000)] + [b"x" * (1 << 20)]
    blob.upload_blob(b"\n".join(rows) + b"\n")
    data = blob.query_blob("SELECT * FROM BlobStorage", output_format=[ArrowDialect(ArrowType.STRING, name="s")]).readall()
    assert _read(data)[1]["s"] == [r.decode() for r in rows]
    # A record with more columns than the schema has fields ends the query, said once.
    blob.upload_blob(b"1,2\n", overwrite=True)
    errors = []
    blob.query_blob("SELECT * FROM BlobStorage", output_format=[ArrowDialect(ArrowType.INT64, name="a")],
                    on_error=errors.append).readall()
    assert [(e.error, e.is_fatal) for e in errors] == [("InvalidArrowSchema", True)]
    # Schemas Azure does not offer are refused before anything is read.
    for schema in ([ArrowDialect(ArrowType.DECIMAL, name="d", precision=40, scale=2)],
                   [ArrowDialect(ArrowType.INT64, name=str(i)) for i in range(50)]):
        with pytest.raises(HttpResponseError) as refused:
            blob.query_blob("SELECT * FROM BlobStorage", output_format=schema).readall()
        assert refused.value.status_code == 400 and refused.value.error_code == "InvalidXmlNodeValue"


def test_list_blobs_in_arrow_says_what_xml_says(emulator, name):
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    container = service.create_container(name)
    names = ["a", "b/c", "b/d", "e\uffff", "f&<g>", "  spaced  "]
    for n in names:
        container.get_blob_client(n).upload_blob(b"abc", metadata={"color": "blue"} if n == "a" else None,
                                                 tags={"arrowtag": "yes"} if n == "a" else None)
    container.get_blob_client("page").create_page_blob(size=512, sequence_number=7)
    include = ["metadata", "tags"]
    as_xml = list(container.list_blobs(include=include))
    as_arrow = list(container.list_blobs(include=include, response_format="arrow"))
    assert [b.name for b in as_arrow] == [b.name for b in as_xml]
    for x, a in zip(as_xml, as_arrow):
        assert (a.size, a.etag, a.last_modified, a.creation_time, a.blob_type, a.blob_tier) == \
            (x.size, x.etag, x.last_modified, x.creation_time, x.blob_type, x.blob_tier), x.name
        assert a.content_settings.content_md5 == x.content_settings.content_md5
        assert a.metadata == (x.metadata or {}) and (a.tags or {}) == (x.tags or {})
        assert (a.lease.status, a.lease.state) == (x.lease.status, x.lease.state)
    assert next(b for b in as_arrow if b.name == "page").page_blob_sequence_number == 7
    # Pages: the next marker travels in the schema's metadata, and a name XML cannot carry
    # (U+FFFF) at a page's end comes back as the same opaque token either way.
    pages = list(container.list_blobs(response_format="arrow", results_per_page=2).by_page())
    assert [b.name for page in pages for b in page] == [b.name for b in as_xml]
    # Hierarchy: prefixes are rows of ResourceType "blobprefix", in name order among the blobs
    # (the SDK's XML reader puts them first).
    walked = [b.name for b in container.walk_blobs(response_format="arrow")]
    assert walked == sorted(walked, key=lambda n: n.encode()) and "b/" in walked
    assert sorted(walked) == sorted(b.name for b in container.walk_blobs())


def test_the_raw_arrow_listing_and_who_may_have_it(emulator, name):
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    container = service.create_container(name)
    container.get_blob_client("one").upload_blob(b"1")
    container.get_blob_client("two").upload_blob(b"22")
    url = f"{emulator.blob}/{name}?restype=container&comp=list&maxresults=1"
    answer = emulator.raw("GET", url, headers={"Accept": f"{ARROW},application/xml"})
    assert answer.status_code == 200 and answer.headers["Content-Type"] == ARROW
    metadata, columns = _read(answer.content)
    assert columns["Name"] == ["one"] and columns["ResourceType"] == ["blob"] and columns["Content-Length"] == [1]
    assert metadata[b"NextMarker"] == b"two"
    # Without the Accept header, XML as ever.
    assert emulator.raw("GET", url).content.startswith(b"<?xml")
    # Anonymous on a private container, and a SAS without list: Azure's XML error, no rows.
    anonymous = emulator.raw("GET", url, headers={"Accept": ARROW}, sign=False)
    assert anonymous.status_code == 404 and b"one" not in anonymous.content
    expiry = datetime.now(timezone.utc) + timedelta(hours=1)
    read_only = generate_container_sas("devstoreaccount1", name, account_key=KEY,
                                       permission=ContainerSasPermissions(read=True), expiry=expiry)
    refused = emulator.raw("GET", url + "&" + read_only, headers={"Accept": ARROW}, sign=False)
    assert refused.status_code == 403 and refused.headers["Content-Type"].startswith("application/xml")
    lister = generate_container_sas("devstoreaccount1", name, account_key=KEY,
                                    permission=ContainerSasPermissions(list=True), expiry=expiry)
    sas_client = ContainerClient.from_container_url(f"{emulator.blob}/{name}?{lister}")
    assert [b.name for b in sas_client.list_blobs(response_format="arrow")] == ["one", "two"]
    # A marker handed back as text is a name, never anything else.
    odd = emulator.raw("GET", url + "&marker=" + urllib.parse.quote("1!not-base64!"), headers={"Accept": ARROW})
    assert odd.status_code == 200 and _read(odd.content)[1]["Name"] == ["one"]
