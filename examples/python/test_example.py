"""What a test of an app's storage code looks like with the fixture: each test has its own
seeded account, so tests cannot see each other's writes."""
from azure.data.tables import TableServiceClient
from azure.storage.blob import BlobServiceClient


def test_the_app_finds_its_speakers(azure_storage):
    azure_storage.seed("--now", "2026-11-21")
    events = TableServiceClient.from_connection_string(azure_storage.connection_string).get_table_client("events")
    speakers = list(events.query_entities("PartitionKey eq 'speakers'"))
    assert len(speakers) == 8
    photos = BlobServiceClient.from_connection_string(azure_storage.connection_string).get_container_client("speakers")
    assert sorted(b.name for b in photos.list_blobs())[0] == "BJohnson.jpg"


def test_a_write_in_one_test_is_not_seen_by_another(azure_storage):
    tables = TableServiceClient.from_connection_string(azure_storage.connection_string)
    assert [t.name for t in tables.list_tables()] == []
    tables.create_table("scratch").create_entity({"PartitionKey": "p", "RowKey": "r"})


def test_and_the_next_test_starts_empty(azure_storage):
    assert list(TableServiceClient.from_connection_string(azure_storage.connection_string).list_tables()) == []
