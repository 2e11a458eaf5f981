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


# --- Bodies: never buffered for a stranger, and bounded for everyone (item 7) ---------------

import socket
import time
import urllib.parse
from email.utils import formatdate

from azure.core.pipeline import PipelineContext, PipelineRequest
from azure.core.pipeline.transport import HttpRequest
from azure.data.tables._authentication import SharedKeyCredentialPolicy as TablePolicy


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def open_posts(url, count, length, headers, sent):
    """`count` connections, each sending a POST's headers and `sent` of its `length` body bytes."""
    parts = urllib.parse.urlsplit(url)
    sockets = []
    for _ in range(count):
        s = socket.create_connection((parts.hostname, parts.port), timeout=10)
        head = f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Length: {length}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        try:
            s.sendall(head.encode())
            s.sendall(b"{" + b" " * (sent - 1))
        except OSError:
            pass  # refused and closed before the body: what a stranger should get
        sockets.append(s)
    return sockets


def answers(sockets):
    statuses = []
    for s in sockets:
        try:
            s.settimeout(1)
            statuses.append(s.recv(64).split(b" ")[1].decode())
        except (OSError, IndexError):
            statuses.append("closed")
        finally:
            s.close()
    return statuses


def signed_table_headers(url, method="POST"):
    headers = {"x-ms-version": "2019-02-02", "x-ms-date": formatdate(usegmt=True), "Content-Type": "application/json",
               "Accept": "application/json;odata=nometadata"}
    headers["Date"] = headers["x-ms-date"]
    request = HttpRequest(method, url, headers=headers)
    TablePolicy(AzureNamedKeyCredential(ACCOUNT, KEY)).on_request(PipelineRequest(request, PipelineContext(None)))
    return {k: v for k, v in request.headers.items() if k.lower() not in ("content-length", "host")}


def test_unsigned_table_bodies_are_refused_before_they_are_read(azseed, name):
    from conftest import start_emulator, stop_emulator
    emulator = start_emulator(azseed, "--in-memory")
    try:
        TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
        url = f"{emulator.table}/{name}"
        before = rss_mib(emulator.process.pid)
        forged = signed_table_headers(url)
        forged["Authorization"] = forged["Authorization"][:-8] + "AAAAAAA="
        length = 3_900_000
        sockets = open_posts(url, 150, length, forged, 3_800_000)
        grown = rss_mib(emulator.process.pid) - before
        assert grown < 60, f"the emulator grew by {grown:.0f} MiB reading bodies of unsigned requests"
        statuses = answers(sockets)
        assert all(s in ("403", "closed") for s in statuses), statuses[:10]
        assert statuses.count("403") > 0
        # Signed bodies are bounded across connections: past the budget, 503 ServerBusy.
        sockets = open_posts(url, 60, length, signed_table_headers(url), 3_800_000)
        time.sleep(1)
        grown = rss_mib(emulator.process.pid) - before
        for s in sockets:
            try:
                s.sendall(b" " * (length - 3_800_000 - 1) + b"}")
            except OSError:
                pass
        statuses = answers(sockets)
        assert "503" in statuses, statuses
        assert grown < 400, f"the emulator grew by {grown:.0f} MiB buffering signed bodies"
        assert emulator.alive()
    finally:
        stop_emulator(emulator)


# --- ACL documents are parsed, never stored as sent (item 8) ------------------------------

DOCTYPE = b"""<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY ext SYSTEM "file:///etc/passwd">]><SignedIdentifiers><SignedIdentifier><Id>&lol2;&ext;</Id></SignedIdentifier></SignedIdentifiers>"""
EXTRA = (b'<?xml version="1.0"?><SignedIdentifiers><SignedIdentifier><Id>p</Id><AccessPolicy><Permission>r</Permission></AccessPolicy>'
         b'<Injected>x</Injected></SignedIdentifier></SignedIdentifiers>')
GOOD = (b'<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers>  <!-- a comment -->\n<SignedIdentifier><Id>read</Id><AccessPolicy>'
        b'<Start>2026-01-01T00:00:00.0000000Z</Start><Expiry>2027-01-01T00:00:00.0000000Z</Expiry><Permission>r</Permission></AccessPolicy>'
        b'</SignedIdentifier></SignedIdentifiers>')


def test_acl_documents_with_declarations_are_refused_and_others_reserialised(emulator, name):
    from azure.storage.blob import BlobServiceClient
    BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    TableServiceClient.from_connection_string(emulator.connection_string).create_table(name)
    for url, service, status in [(f"{emulator.blob}/{name}?restype=container&comp=acl", "blob", 200),
                                 (f"{emulator.table}/{name}?comp=acl", "table", 204)]:
        for hostile in (DOCTYPE, EXTRA):
            r = emulator.raw("PUT", url, {"Content-Type": "application/xml"}, hostile, service=service)
            assert r.status_code == 400 and r.headers.get("x-ms-error-code") == "InvalidXmlDocument", (service, r.status_code, r.text)
        r = emulator.raw("PUT", url, {"Content-Type": "application/xml"}, GOOD, service=service)
        assert r.status_code == status, r.text
        served = emulator.raw("GET", url, service=service).content
        assert b"comment" not in served and b"DOCTYPE" not in served and b"<Id>read</Id>" in served, served
    # The official SDKs read them back.
    policies = BlobServiceClient.from_connection_string(emulator.connection_string).get_container_client(name).get_container_access_policy()
    assert [p.id for p in policies["signed_identifiers"]] == ["read"]
    assert list(TableServiceClient.from_connection_string(emulator.connection_string).get_table_client(name).get_table_access_policy()) == ["read"]
    # Every XML body alike: a block list with a DOCTYPE is refused.
    r = emulator.raw("PUT", f"{emulator.blob}/{name}/b?comp=blocklist", {}, b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><BlockList/>')
    assert r.status_code == 400, r.text


def test_an_etag_naming_a_time_before_year_one_is_412_not_a_crash(emulator, name):
    """From an attacker's review: a replace or delete on an If-Match ETag is one statement on
    the Timestamp the ETag names. An ETag whose zone moved year 0000 before year 1 parsed and
    then trapped when written back: one request took the emulator down. Any ETag not exactly as
    the store writes it matches nothing — 404 for a missing entity, 412 for a present one."""
    from azure.core import MatchConditions
    from azure.core.exceptions import ResourceModifiedError, ResourceNotFoundError
    service = TableServiceClient.from_connection_string(emulator.connection_string)
    table = service.create_table(name)
    hostile = ["W/\"datetime'0000-01-01T00%3A00+0100'\"", "W/\"datetime'0000-01-01T00%3A00%3A00.0000000%2B00%3A01'\""]
    for etag in hostile:
        # The SDK answers a delete of a missing entity as done (it hides the 404): the next
        # call shows the emulator is still there.
        table.delete_entity("a", "b", etag=etag, match_condition=MatchConditions.IfNotModified)
        try:
            table.update_entity({"PartitionKey": "a", "RowKey": "b", "N": 1}, mode="replace", etag=etag,
                                match_condition=MatchConditions.IfNotModified)
            raise AssertionError("a replace on a hostile ETag succeeded")
        except ResourceNotFoundError:
            pass
    table.create_entity({"PartitionKey": "a", "RowKey": "b", "N": 1})
    for etag in hostile:
        for attempt in (lambda: table.delete_entity("a", "b", etag=etag, match_condition=MatchConditions.IfNotModified),
                        lambda: table.update_entity({"PartitionKey": "a", "RowKey": "b", "N": 2}, mode="replace", etag=etag,
                                                    match_condition=MatchConditions.IfNotModified)):
            try:
                attempt()
                raise AssertionError("a write on a hostile ETag succeeded")
            except ResourceModifiedError:
                pass
    assert table.get_entity("a", "b")["N"] == 1


def test_writers_racing_on_one_etag_have_exactly_one_winner(emulator, name):
    """Second actor for the conditional write: a replace or delete on an ETag is one statement
    on the Timestamp it names. 32 clients replace (or delete) the same entity on the ETag they
    all read: exactly one succeeds, every other gets 412, and the entity is the winner's."""
    import threading
    from azure.core import MatchConditions
    from azure.core.exceptions import ResourceModifiedError, ResourceNotFoundError
    service = TableServiceClient.from_connection_string(emulator.connection_string)
    table = service.create_table(name)
    for round, delete in enumerate([False, True, False, True]):
        table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "Writer": -1})
        etag = table.get_entity("p", "r").metadata["etag"]
        won, lost, start = [], [], threading.Barrier(32)

        def write(writer):
            client = TableServiceClient.from_connection_string(emulator.connection_string).get_table_client(name)
            start.wait()
            try:
                if delete and writer % 2:
                    client.delete_entity("p", "r", etag=etag, match_condition=MatchConditions.IfNotModified)
                else:
                    client.update_entity({"PartitionKey": "p", "RowKey": "r", "Writer": writer}, mode="replace", etag=etag,
                                         match_condition=MatchConditions.IfNotModified)
                won.append(writer)
            except (ResourceModifiedError, ResourceNotFoundError):
                lost.append(writer)

        threads = [threading.Thread(target=write, args=(w,)) for w in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # A delete of a missing entity is answered as done by the SDK (it hides the 404): after
        # a delete won, the other deletes may count as won too — but never a replace.
        entity = list(table.query_entities("PartitionKey eq 'p'"))
        replaces_won = [w for w in won if not (delete and w % 2)]
        if entity:
            assert len(won) == 1 and replaces_won == [entity[0]["Writer"]], (round, won, entity)
        else:
            assert delete and replaces_won == [] and len(won) >= 1, (round, won)
