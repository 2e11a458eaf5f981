"""Hostile input never takes the emulator down (issue 13, item 4): every recursive construct
is bounded and answered with Azure's error form, and the server keeps its data."""
import urllib.parse

from azure.data.tables import TableServiceClient

from conftest import start_emulator, stop_emulator


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
