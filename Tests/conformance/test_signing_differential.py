"""Differential test: azseed's Shared Key signatures equal the official Python SDKs'.

Generates a few hundred varied requests (metadata keys with `_`, `-` and digits, unicode and
space-filled blob names, query strings, every table verb), signs each with the SDKs' own
signing policies, asks `azseed sign-requests` to sign the same requests, and compares the
Authorization headers one by one.
"""
import json
import random
import subprocess
from urllib.parse import quote

from azure.core.credentials import AzureNamedKeyCredential
from azure.core.pipeline import PipelineContext, PipelineRequest
from azure.core.pipeline.transport import HttpRequest
from azure.data.tables._authentication import SharedKeyCredentialPolicy as TablePolicy
from azure.storage.blob._shared.authentication import SharedKeyCredentialPolicy as BlobPolicy

from conftest import ACCOUNT, KEY, record

BLOB = "http://127.0.0.1:10000/devstoreaccount1"
TABLE = "http://127.0.0.1:10002/devstoreaccount1"

NAME_PARTS = ["photo", "a b", "ünïcödé", "日本語", "x+y", "100%", "dir/sub", "tab\tname", "quote's", "~tilde", "semi;colon", "eq=ual"]
META_KEYS = ["a", "a_b", "a1", "ab", "A-B", "z9", "_x", "m_1_2", "key-with-dash", "x0_y", "B", "aa"]


def date(rng):
    return "Sat, %02d Nov 2026 %02d:%02d:%02d GMT" % (rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59))


def blob_requests(rng, n):
    out = []
    for i in range(n):
        container = rng.choice(["speakers", "c1", "my-container", "x" * 20])
        name = "-".join(rng.sample(NAME_PARTS, rng.randint(1, 3)))
        path = f"/{container}/" + quote(name, safe="/~")
        kind = i % 6
        headers = {"x-ms-version": rng.choice(["2026-10-06", "2023-11-03"]), "x-ms-date": date(rng),
                   "x-ms-client-request-id": f"req-{i}"}
        query = []
        method = "GET"
        if kind == 0:  # Put Blob with metadata and properties
            method = "PUT"
            body_len = rng.choice([0, 1, 5, 1234])
            headers.update({"x-ms-blob-type": "BlockBlob", "Content-Type": "application/octet-stream",
                            "Content-Length": str(body_len), "x-ms-blob-content-type": rng.choice(["image/jpeg", "text/plain; charset=utf-8"])})
            if rng.random() < 0.5:
                headers["Content-MD5"] = "XUFAKrxLKna5cZ2REBfFkg=="
            if rng.random() < 0.5:
                headers["If-None-Match"] = "*"
            for k in rng.sample(META_KEYS, rng.randint(0, 6)):
                headers[f"x-ms-meta-{k}"] = rng.choice(["1", "v a l", "x"])
        elif kind == 1:  # ranged Get
            headers["x-ms-range"] = f"bytes=0-{rng.randint(0, 999)}"
        elif kind == 2:  # list
            path = f"/{container}"
            query = [("restype", "container"), ("comp", "list")]
            if rng.random() < 0.7:
                query.append(("prefix", rng.choice(["dir/", "a b", "ü", "x&y", "p=q"])))
            if rng.random() < 0.5:
                query.append(("marker", rng.choice(["2!80!abc", "m 2"])))
            query.append(("maxresults", str(rng.randint(1, 5000))))
            query.append(("include", "metadata"))
            rng.shuffle(query)
        elif kind == 3:  # container create / acl
            method = "PUT"
            path = f"/{container}"
            query = [("restype", "container")] + ([("comp", "acl")] if rng.random() < 0.5 else [])
            if rng.random() < 0.7:
                headers["x-ms-blob-public-access"] = rng.choice(["container", "blob"])
        elif kind == 4:  # block upload
            method = "PUT"
            query = [("comp", "block"), ("blockid", "YmxvY2stMDAwMDAwMDE=")]
            headers["Content-Length"] = str(rng.randint(1, 4 * 1024 * 1024))
        else:  # HEAD / DELETE with conditions
            method = rng.choice(["HEAD", "DELETE"])
            if rng.random() < 0.5:
                headers["If-Match"] = '"0x8D9"'
        url = BLOB + path + ("?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in query) if query else "")
        out.append({"service": "blob", "method": method, "url": url, "headers": list(headers.items())})
    return out


def table_requests(rng, n):
    out = []
    for i in range(n):
        table = rng.choice(["events", "Tables", "speakers2026"])
        pk = quote(rng.choice(["Events", "speakers", "p k''1", "ü"]), safe="")
        rk = quote(rng.choice(["r1", "8b1f-…", "a b"]), safe="")
        entity = f"/{table}(PartitionKey='{pk}',RowKey='{rk}')"
        kind = i % 8
        headers = {"x-ms-date": date(rng), "DataServiceVersion": "3.0", "Accept": "application/json;odata=minimalmetadata"}
        query = []
        if kind == 0:
            method, path = "POST", "/Tables"
            headers["Content-Type"] = "application/json;odata=nometadata"
        elif kind == 1:
            method, path = "POST", f"/{table}"
            headers["Content-Type"] = "application/json"
            headers["Prefer"] = "return-no-content"
        elif kind == 2:
            method, path = "PUT", entity
            headers["Content-Type"] = "application/json"
        elif kind == 3:
            method, path = rng.choice(["MERGE", "PATCH"]), entity
            headers["Content-Type"] = "application/json"
            headers["If-Match"] = "*"
        elif kind == 4:
            method, path = "DELETE", entity
            headers["If-Match"] = "*"
        elif kind == 5:
            method, path = "GET", f"/{table}()"
            query = [("$filter", "PartitionKey eq 'Events' and RowKey gt 'a b'"), ("$select", "Name,Title"), ("$top", "5"),
                     ("NextPartitionKey", "1!8!RXZlbnRz"), ("NextRowKey", "1!4!cjE-")]
            query = query[: rng.randint(0, len(query))]
        elif kind == 6:
            method, path = "POST", "/$batch"
            headers["Content-Type"] = f"multipart/mixed; boundary=batch_{i:08d}-aaaa-bbbb"
            headers["MaxDataServiceVersion"] = "3.0;NetFx"
        else:
            method, path = rng.choice(["GET", "PUT"]), f"/{table}"
            query = [("comp", "acl")]
            if method == "PUT":
                headers["Content-Type"] = "application/xml"
        if rng.random() < 0.3:
            headers["Content-MD5"] = "1B2M2Y8AsgTpgAmY7PhCfg=="
        url = TABLE + path + ("?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in query) if query else "")
        out.append({"service": "table", "method": method, "url": url, "headers": list(headers.items())})
    return out


def sdk_sign(req):
    http = HttpRequest(req["method"], req["url"], headers=dict(req["headers"]))
    policy = BlobPolicy(ACCOUNT, KEY) if req["service"] == "blob" else TablePolicy(AzureNamedKeyCredential(ACCOUNT, KEY))
    policy.on_request(PipelineRequest(http, PipelineContext(None)))
    return http.headers["Authorization"]


def test_signatures_match_the_official_sdks(azseed):
    rng = random.Random(20261121)
    requests = blob_requests(rng, 150) + table_requests(rng, 120)
    assert len(requests) >= 200
    lines = "\n".join(json.dumps(r, ensure_ascii=False) for r in requests) + "\n"
    result = subprocess.run([azseed, "sign-requests"], input=lines.encode(), capture_output=True, check=True)
    record([azseed, "sign-requests"], result.stdout, result.stderr)
    ours = result.stdout.decode().splitlines()
    assert len(ours) == len(requests)
    mismatches = [(r["method"], r["url"], s, o) for r, s, o in zip(requests, map(sdk_sign, requests), ours) if s != o]
    assert not mismatches, f"{len(mismatches)} of {len(requests)} differ; first: {mismatches[0]}"
