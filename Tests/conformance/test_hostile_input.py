"""Hostile input never takes the emulator down (issue 13, item 4): every recursive construct
is bounded and answered with Azure's error form, and the server keeps its data."""
import signal
import urllib.parse
from email.utils import formatdate

from azure.core.pipeline import PipelineContext, PipelineRequest
from azure.core.pipeline.transport import HttpRequest

from azure.data.tables import TableServiceClient

from conftest import ACCOUNT, KEY, BlobPolicy, start_emulator, stop_emulator


def test_deeply_nested_filters_are_a_400_and_the_server_stays_up(azseed, name):
    # In memory, so a crash would lose every entity: the worst case the issue reported.
    emulator = start_emulator(azseed, "--in-memory")
    try:
        table = TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
        table.create_entity({"PartitionKey": "p", "RowKey": "r", "N": 1})
        for hostile in ("not " * 8000 + "N eq 1",
                        "(" * 8000 + "N eq 1" + ")" * 8000,
                        " and ".join(["N eq 1"] * 2500)):
            query = urllib.parse.quote(hostile, safe="")
            response = emulator.raw("GET", f"{emulator.table}/{name}()?$filter={query}", service="table",
                                    headers={"Accept": "application/json;odata=nometadata"})
            assert response.status_code == 400, (response.status_code, response.text[:200])
            assert '"odata.error"' in response.text and "InvalidInput" in response.text
            assert emulator.alive()
        # Nesting within the bounds still works.
        assert [e["RowKey"] for e in table.query_entities("not not (((N eq 1)))")] == ["r"]
        assert [e["RowKey"] for e in table.query_entities("not " * 30 + "N eq 1")] == ["r"]
        assert [e["RowKey"] for e in table.list_entities()] == ["r"]
    finally:
        stop_emulator(emulator)


def test_bad_entity_bodies_get_the_right_error_code(azseed, name):
    """Entity bodies are read straight from their bytes; the error still follows the order of
    a full parse: malformed JSON first, then not-an-object, then missing keys."""
    emulator = start_emulator(azseed, "--in-memory")
    try:
        TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
        headers = {"Accept": "application/json;odata=nometadata", "Content-Type": "application/json"}
        cases = [
            (b'{"RowKey":"r"} junk', "InvalidInput", "not valid JSON"),
            (b'{"RowKey":"r","N":1', "InvalidInput", "not valid JSON"),
            (b"", "InvalidInput", "not valid JSON"),
            (b'["PartitionKey","p"]', "InvalidInput", "must be a JSON object"),
            (b'{"RowKey":"r","N":1}', "PropertiesNeedValue", "PartitionKey and RowKey are required"),
            (b'{"PartitionKey":1,"RowKey":"r"}', "PropertiesNeedValue", "PartitionKey and RowKey are required"),
            (b'{"PartitionKey":"p","RowKey":"r","N@odata.type":"Edm.Nope","N":"1"}', "InvalidInput", "not valid"),
        ]
        for body, code, text in cases:
            response = emulator.raw("POST", f"{emulator.table}/{name}", service="table", headers=headers, body=body)
            assert response.status_code == 400, (body, response.status_code, response.text[:200])
            assert response.headers.get("x-ms-error-code") == code and text in response.text, (body, response.text[:300])
        # Keys in the URL take the place of missing ones in the body.
        response = emulator.raw("PUT", f"{emulator.table}/{name}(PartitionKey='p',RowKey='r')", service="table", headers=headers, body=b'{"N":1}')
        assert response.status_code == 204, response.text[:200]
        assert emulator.alive()
    finally:
        stop_emulator(emulator)


def test_a_name_given_twice_is_refused_and_nothing_is_stored(azseed, name):
    """From an attacker's review: a body naming a property (or, escaped, a key) twice was taken
    with its last value, so the emulator stored what a reader taking the first never sent. Azure
    refuses it: DuplicatePropertiesSpecified, DuplicateKeyPropertySpecified for a key."""
    emulator = start_emulator(azseed, "--in-memory")
    try:
        table = TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
        headers = {"Accept": "application/json;odata=nometadata", "Content-Type": "application/json"}
        cases = [
            (b'{"PartitionKey":"p","RowKey":"r","N":1,"N":2}', "DuplicatePropertiesSpecified"),
            (b'{"PartitionKey":"p","RowKey":"r","N":1,"\\u004e":2}', "DuplicatePropertiesSpecified"),
            (b'{"PartitionKey":"p","RowKey":"r","N":"1","N@odata.type":"Edm.Int64","N@odata.type":"Edm.String"}',
             "DuplicatePropertiesSpecified"),
            (b'{"PartitionKey":"p","RowKey":"r","Partition\\u004bey":"q"}', "DuplicateKeyPropertySpecified"),
            (b'{"PartitionKey":"p","RowKey":"r","RowKey":"s"}', "DuplicateKeyPropertySpecified"),
        ]
        for body, code in cases:
            response = emulator.raw("POST", f"{emulator.table}/{name}", service="table", headers=headers, body=body)
            assert response.status_code == 400, (body, response.status_code, response.text[:200])
            assert response.headers.get("x-ms-error-code") == code, (body, response.text[:300])
            response = emulator.raw("PUT", f"{emulator.table}/{name}(PartitionKey='p',RowKey='r')", service="table",
                                    headers=headers, body=body)
            assert response.status_code == 400 and response.headers.get("x-ms-error-code") == code, (body, response.text[:300])
        # Inside a batch, the whole change set is refused, the operation's index first.
        changeset = "changeset_1"
        parts = "".join(
            f"--{changeset}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
            f"POST {emulator.table}/{name} HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{entity}\r\n"
            for entity in ('{"PartitionKey":"p","RowKey":"a"}', '{"PartitionKey":"p","RowKey":"b","N":1,"N":2}'))
        body = f"--batch_1\r\nContent-Type: multipart/mixed; boundary={changeset}\r\n\r\n{parts}--{changeset}--\r\n--batch_1--\r\n"
        response = emulator.raw("POST", f"{emulator.table}/$batch", {"Content-Type": "multipart/mixed; boundary=batch_1"},
                                body.encode(), service="table")
        assert response.status_code == 202 and "DuplicatePropertiesSpecified" in response.text and '"1:' in response.text, response.text[:600]
        assert list(table.list_entities()) == []
        assert emulator.alive()
    finally:
        stop_emulator(emulator)


def test_thousands_of_annotations_cost_no_more_than_their_bytes(azseed, name):
    """From an attacker's review: each annotation was compared with every one before it (the
    duplicate check) and each value with every annotation, so a 255 KB body of 8,000
    annotations held the emulator for a second and a 4 MB one for more than 30 s. Past what an
    entity can hold (252 properties, each annotated once) the body is TooManyProperties at
    once; within it, names are indexed."""
    import time
    emulator = start_emulator(azseed, "--in-memory")
    try:
        TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
        headers = {"Accept": "application/json;odata=nometadata", "Content-Type": "application/json"}
        members = ",".join(f'"P{i}@odata.type":"Edm.String","P{i}":"v"' for i in range(60_000))
        body = ('{"PartitionKey":"p","RowKey":"r",' + members + "}").encode()
        started = time.monotonic()
        response = emulator.raw("POST", f"{emulator.table}/{name}", service="table", headers=headers, body=body, timeout=30)
        assert response.status_code == 400 and response.headers.get("x-ms-error-code") == "TooManyProperties", response.text[:300]
        assert time.monotonic() - started < 2, time.monotonic() - started
        # 250 annotated properties, all distinct: stored; one annotation given twice among them: refused.
        members = ",".join(f'"P{i}@odata.type":"Edm.Int64","P{i}":"{i}"' for i in range(250))
        ok = emulator.raw("POST", f"{emulator.table}/{name}", service="table", headers=headers,
                          body=('{"PartitionKey":"p","RowKey":"a",' + members + "}").encode())
        assert ok.status_code == 201, ok.text[:300]
        twice = emulator.raw("POST", f"{emulator.table}/{name}", service="table", headers=headers,
                             body=('{"PartitionKey":"p","RowKey":"b",' + members + ',"P7@odata.type":"Edm.Int64"}').encode())
        assert twice.headers.get("x-ms-error-code") == "DuplicatePropertiesSpecified", twice.text[:300]
        assert emulator.alive()
    finally:
        stop_emulator(emulator)


def test_a_graceful_stop_does_not_wait_for_ever_on_a_request_held_open(azseed, tmp_path):
    """From an attacker's review: a signed upload that never sent its body kept the emulator
    running through SIGTERM, SIGTERM and SIGINT; only SIGKILL ended it. A graceful stop now
    waits at most 5 s for requests in flight, then cancels them and stops as always."""
    import socket
    import time
    emulator = start_emulator(azseed, "--data-dir", str(tmp_path / "data"))
    try:
        assert emulator.raw("PUT", f"{emulator.blob}/held?restype=container", {"Content-Length": "0"}).status_code == 201
        headers = {"x-ms-version": "2026-10-06", "x-ms-date": formatdate(usegmt=True), "Content-Length": "10000000",
                   "x-ms-blob-type": "BlockBlob", "Content-Type": "application/octet-stream"}
        request = HttpRequest("PUT", f"{emulator.blob}/held/big", headers=headers)
        BlobPolicy(ACCOUNT, KEY).on_request(PipelineRequest(request, PipelineContext(None)))
        host, port = emulator.blob.split("//")[1].split("/")[0].split(":")
        held = socket.create_connection((host, int(port)))
        path = "/" + emulator.blob.split("//")[1].split("/", 1)[1] + "/held/big"
        held.send((f"PUT {path} HTTP/1.1\r\nHost: {host}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in request.headers.items())
                   + "\r\n").encode() + b"a" * 1000)
        time.sleep(0.3)
        started = time.monotonic()
        emulator.process.send_signal(signal.SIGTERM)
        emulator.process.wait(timeout=20)
        assert time.monotonic() - started < 12, time.monotonic() - started
        held.close()
    finally:
        if emulator.alive():
            emulator.process.kill()
        stop_emulator(emulator)
    # The folder is whole: another emulator opens it and the container is there.
    again = start_emulator(azseed, "--data-dir", str(tmp_path / "data"))
    try:
        assert again.raw("GET", f"{again.blob}/held?restype=container").status_code == 200
    finally:
        stop_emulator(again)


def test_a_batch_part_with_thousands_of_header_lines_is_refused_at_once(emulator, name):
    """From an attacker's review: each header line of a changeset part replaced any of its name
    by scanning those before it, so a part of 30,000 lines held the emulator for seconds — before
    the request was authorised. A part of more than 100 header lines is a malformed batch."""
    import time
    from azure.data.tables import TableServiceClient
    TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
    headers_block = "".join(f"X-Filler-{i}: {i}\r\n" for i in range(30_000))
    changeset = "changeset_1"
    inner = (f"--{changeset}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
             f"POST {emulator.table}/{name} HTTP/1.1\r\n{headers_block}Content-Type: application/json\r\n\r\n"
             '{"PartitionKey": "p", "RowKey": "r"}\r\n' f"--{changeset}--\r\n")
    body = f"--batch_1\r\nContent-Type: multipart/mixed; boundary={changeset}\r\n\r\n{inner}--batch_1--\r\n".encode()
    started = time.monotonic()
    r = emulator.raw("POST", f"{emulator.table}/$batch", {"Content-Type": "multipart/mixed; boundary=batch_1", "DataServiceVersion": "3.0"}, body,
                     service="table", timeout=30)
    elapsed = time.monotonic() - started
    assert r.status_code == 400 and b"more than 100 header lines" in r.content, r.content[:300]
    assert elapsed < 2, f"{elapsed:.1f} s"


def test_a_block_list_longer_than_azure_allows_is_refused(emulator, name):
    """From an attacker's review: a block list of more than 50,000 entries was accepted (and one
    naming a composed blob's blocks over and over ran for minutes). Azure refuses it:
    400 BlockListTooLong."""
    import base64
    from azure.storage.blob import BlobServiceClient
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    client = container.get_blob_client("b")
    client.stage_block("one", b"x")
    block = base64.b64encode(b"one").decode()  # as the SDK sends the id
    xml = ("<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>" + f"<Latest>{block}</Latest>" * 50_001 + "</BlockList>").encode()
    r = emulator.raw("PUT", f"{emulator.blob}/{name}/b?comp=blocklist", {"Content-Type": "application/xml"}, xml, timeout=30)
    assert r.status_code == 400 and r.headers.get("x-ms-error-code") == "BlockListTooLong", (r.status_code, r.content[:200])
    r = emulator.raw("PUT", f"{emulator.blob}/{name}/b?comp=blocklist", {"Content-Type": "application/xml"},
                     xml.replace(f"<Latest>{block}</Latest>".encode(), b"", 1), timeout=30)
    assert r.status_code == 201 and client.download_blob().readall() == b"x" * 50_000, r.content[:300]
