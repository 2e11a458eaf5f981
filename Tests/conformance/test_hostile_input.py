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
