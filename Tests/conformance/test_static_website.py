"""The static website endpoint: `$web` served read-only, to anyone, at the account's web host
(`<account>.web.<host>` on the Blob port) once StaticWebsite is enabled — and nothing else: no
other container, no writes, nothing while it is off."""
import requests
from azure.storage.blob import BlobServiceClient, ContentSettings, StaticWebsite


def test_the_web_host_serves_web_and_nothing_else(emulator, name):
    service = BlobServiceClient.from_connection_string(emulator.connection_string)
    port = emulator.blob.split(":")[2].split("/")[0]
    site = f"http://127.0.0.1:{port}"
    host = {"Host": f"devstoreaccount1.web.localhost:{port}"}
    web = service.create_container("$web")
    web.upload_blob("index.html", b"<h1>home</h1>", content_settings=ContentSettings(content_type="text/html"))
    web.upload_blob("guide/index.html", b"<h1>guide</h1>")
    web.upload_blob("404.html", b"<h1>not here</h1>")
    private = service.create_container(name)
    private.upload_blob("secret.txt", b"private")
    # Off (the default): nothing is served.
    assert requests.get(site + "/", headers=host, timeout=10).status_code == 404
    service.set_service_properties(static_website=StaticWebsite(enabled=True, index_document="index.html", error_document404_path="404.html"))
    home = requests.get(site + "/", headers=host, timeout=10)
    assert home.status_code == 200 and home.content == b"<h1>home</h1>" and home.headers["Content-Type"] == "text/html"
    assert requests.get(site + "/guide/", headers=host, timeout=10).content == b"<h1>guide</h1>"
    assert requests.get(site + "/guide", headers=host, timeout=10).content == b"<h1>guide</h1>"
    missing = requests.get(site + "/nope.html", headers=host, timeout=10)
    assert missing.status_code == 404 and missing.content == b"<h1>not here</h1>"
    # Only $web: another container's blob, by any spelling, is a missing page.
    for path in (f"/{name}/secret.txt", f"/../{name}/secret.txt", f"/%2E%2E%2F{name}%2Fsecret.txt", f"/devstoreaccount1/{name}/secret.txt"):
        r = requests.get(site + path, headers=host, timeout=10)
        assert r.status_code == 404 and b"private" not in r.content, path
    # Read-only, whatever the caller sends: no writes, no other operations.
    assert requests.put(site + "/index.html", headers=host, data=b"defaced", timeout=10).status_code == 405
    assert requests.delete(site + "/index.html", headers=host, timeout=10).status_code == 405
    assert requests.get(site + "/?comp=list&restype=container", headers=host, timeout=10).content == b"<h1>home</h1>"
    assert web.get_blob_client("index.html").download_blob().readall() == b"<h1>home</h1>"
    # An index document and a default index path exclude each other (Azure's 400).
    import pytest
    from azure.core.exceptions import HttpResponseError
    with pytest.raises(HttpResponseError):
        service.set_service_properties(static_website=StaticWebsite(enabled=True, index_document="index.html",
                                                                      default_index_document_path="index.html"))
