"""What clients this project did not write send (issue 14). Go clients such as rclone write a
space in a query value as `+` and sign the decoded value; Azure reads `+` as a space."""
from email.utils import formatdate

from azure.core.pipeline import PipelineContext, PipelineRequest
from azure.core.pipeline.transport import HttpRequest
from azure.data.tables import TableServiceClient
from azure.storage.blob import BlobServiceClient
from azure.storage.blob._shared.authentication import SharedKeyCredentialPolicy as BlobPolicy

from conftest import ACCOUNT, KEY, send


def go_style(method, signed_url, sent_url):
    """Signs `signed_url` (spaces as %20, what a Go client signs after decoding) and sends the
    same headers to `sent_url` (spaces as `+`, what it puts on the wire)."""
    headers = {"x-ms-version": "2026-10-06", "x-ms-date": formatdate(usegmt=True)}
    request = HttpRequest(method, signed_url, headers=headers)
    BlobPolicy(ACCOUNT, KEY).on_request(PipelineRequest(request, PipelineContext(None)))
    return send(method, sent_url, dict(request.headers))


def test_plus_in_a_query_value_is_a_space(emulator, name):
    container = BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name, public_access="container")
    for i in range(9):
        container.upload_blob(f"with space/{i}.txt", b"x")
    container.upload_blob("with+plus/0.txt", b"x")
    base = f"{emulator.blob}/{name}?restype=container&comp=list"
    signed = go_style("GET", base + "&prefix=with%20space%2F", base + "&prefix=with+space%2F")
    assert signed.status_code == 200, signed.text
    assert signed.text.count("<Name>with space/") == 9
    anonymous = send("GET", base + "&prefix=with+space%2F", {"x-ms-version": "2026-10-06"})
    assert anonymous.status_code == 200 and anonymous.text.count("<Name>with space/") == 9
    # A literal plus is %2B, as every client writes it.
    plus = send("GET", base + "&prefix=with%2Bplus%2F", {"x-ms-version": "2026-10-06"})
    assert plus.text.count("<Name>with+plus/") == 1
    # A page marker holding a space, written with '+', pages on.
    first = send("GET", base + "&prefix=with+space%2F&maxresults=4", {"x-ms-version": "2026-10-06"})
    marker = first.text.split("<NextMarker>")[1].split("</NextMarker>")[0]
    assert " " in marker
    second = send("GET", base + "&prefix=with+space%2F&maxresults=4&marker=" + marker.replace(" ", "+").replace("/", "%2F"),
                  {"x-ms-version": "2026-10-06"})
    assert second.status_code == 200 and second.text.count("<Name>with space/") == 4
    assert second.text.split("<Name>")[1].startswith("with space/4.txt")


def test_plus_in_a_table_filter_is_a_space(emulator, name):
    table = TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
    table.create_entity({"PartitionKey": "a b", "RowKey": "1"})
    table.create_entity({"PartitionKey": "a+b", "RowKey": "2"})
    r = emulator.raw("GET", f"{emulator.table}/{name}()?$filter=PartitionKey+eq+'a+b'", service="table",
                     headers={"Accept": "application/json;odata=nometadata"})
    assert r.status_code == 200, r.text
    assert '"RowKey":"1"' in r.text and '"RowKey":"2"' not in r.text
