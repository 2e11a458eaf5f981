"""Issue 28, items 3, 7 and 8, as an attacker would try them: a range-limited table SAS probing
keys outside its range, unsigned table bodies meant to exhaust memory, and ACL documents meant
to poison every reader. Each failed on the main before the fix."""
import base64
import json
from urllib.parse import quote

from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.data.tables import TableServiceClient, TableSasPermissions, generate_table_sas

from conftest import ACCOUNT, KEY, register_secret, send
from test_sas import later


def test_a_key_range_sas_learns_no_key_outside_its_range(emulator, name):
    owner = TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
    # 50,100 rows of partition A first (more than one query scans before it answers), then B, then C.
    batch = []
    for i in range(50_100):
        batch.append(("upsert", {"PartitionKey": "A", "RowKey": f"secret-customer-{i:06d}"}))
        if len(batch) == 100:
            owner.submit_transaction(batch)
            batch = []
    for pk, rk in [("B", "1"), ("B", "2"), ("C", "secret-after")]:
        owner.create_entity({"PartitionKey": pk, "RowKey": rk})
    sas = register_secret(generate_table_sas(AzureNamedKeyCredential(ACCOUNT, KEY), name, permission=TableSasPermissions(read=True),
                                             expiry=later(), start_pk="B", end_pk="B"))
    seen, headers = [], []
    url = f"{emulator.table}/{name}()?{sas}&$top=1"
    for _ in range(10):
        r = send("GET", url, {"x-ms-version": "2019-02-02", "Accept": "application/json;odata=nometadata"})
        assert r.status_code == 200, r.text
        seen += [(e["PartitionKey"], e["RowKey"]) for e in json.loads(r.content)["value"]]
        headers.append({k.lower(): v for k, v in r.headers.items() if k.lower().startswith("x-ms-continuation")})
        if "x-ms-continuation-nextpartitionkey" not in headers[-1]:
            break
        h = headers[-1]
        url = (f"{emulator.table}/{name}()?{sas}&$top=1&NextPartitionKey={quote(h['x-ms-continuation-nextpartitionkey'], safe='')}"
               f"&NextRowKey={quote(h['x-ms-continuation-nextrowkey'], safe='')}")
    assert seen == [("B", "1"), ("B", "2")]
    for h in headers:
        for value in h.values():
            assert value.startswith("1!"), value
            decoded = base64.b64decode(value[2:])
            assert b"secret" not in decoded and not decoded.startswith(b"A") and not decoded.startswith(b"C"), decoded
    # A continuation forged below the range starts at the range; a partition outside it is empty.
    forged = f"{emulator.table}/{name}()?{sas}&NextPartitionKey=1%21QQ%3D%3D&NextRowKey=1%21MQ%3D%3D"
    r = send("GET", forged, {"x-ms-version": "2019-02-02", "Accept": "application/json;odata=nometadata"})
    assert [(e["PartitionKey"], e["RowKey"]) for e in json.loads(r.content)["value"]] == [("B", "1"), ("B", "2")]
    r = send("GET", f"{emulator.table}/{name}()?{sas}&$filter=PartitionKey%20eq%20'A'", {"x-ms-version": "2019-02-02", "Accept": "application/json"})
    assert json.loads(r.content)["value"] == [] and not any(k.lower().startswith("x-ms-continuation") for k in r.headers)
