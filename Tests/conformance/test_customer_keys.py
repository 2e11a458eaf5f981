"""Customer-provided keys and encryption scopes through the official SDK, over HTTPS (as Azure
takes keys), and as someone without the key would try to get at a blob written with one."""
import base64
import hashlib

import pytest
import requests
from azure.core.exceptions import HttpResponseError
from azure.storage.blob import BlobServiceClient, ContainerEncryptionScope, CustomerProvidedEncryptionKey

from conftest import ACCOUNT, KEY, register_secret, start_emulator, stop_emulator
from test_tls import make_ca_and_server_certificate


def key(seed):
    raw = hashlib.sha256(seed).digest()
    return CustomerProvidedEncryptionKey(register_secret(base64.b64encode(raw).decode()), base64.b64encode(hashlib.sha256(raw).digest()).decode())


MINE, OTHER = key(b"mine"), key(b"other")


@pytest.fixture(scope="module")
def secure(azseed, tmp_path_factory):
    folder = tmp_path_factory.mktemp("cpk")
    ca, cert, server_key = make_ca_and_server_certificate(folder)
    emulator = start_emulator(azseed, "--in-memory", "--cert", str(cert), "--key", str(server_key),
                              "--encryption-scope", "scope-a", "--encryption-scope", "scope-b")
    emulator.ca = str(ca)
    yield emulator
    stop_emulator(emulator)


def client(emulator):
    return BlobServiceClient(emulator.blob, credential={"account_name": ACCOUNT, "account_key": KEY}, connection_verify=emulator.ca,
                             retry_total=0)


def test_a_blob_written_with_a_key_needs_that_key(secure, name):
    container = client(secure).create_container(name)
    blob = container.get_blob_client("locked.txt")
    written = blob.upload_blob(b"secret", cpk=MINE)
    assert written["encryption_key_sha256"] == MINE.key_hash and written["request_server_encrypted"]
    assert blob.download_blob(cpk=MINE).readall() == b"secret"
    for attempt in (lambda: blob.download_blob().readall(), lambda: blob.download_blob(cpk=OTHER).readall(),
                    lambda: blob.get_blob_properties(), lambda: blob.set_blob_metadata({"a": "b"}),
                    lambda: blob.create_snapshot()):
        with pytest.raises(HttpResponseError) as refused:
            attempt()
        assert refused.value.status_code == 409
    assert blob.get_blob_properties(cpk=MINE).metadata == {}
    # Blocks staged with a key are committed only with it.
    staged = container.get_blob_client("staged.txt")
    staged.stage_block("MQ==", b"one", cpk=MINE)
    with pytest.raises(HttpResponseError):
        staged.commit_block_list(["MQ=="], cpk=OTHER)
    staged.commit_block_list(["MQ=="], cpk=MINE)
    assert staged.download_blob(cpk=MINE).readall() == b"one"
    # A copy reads a keyed source only with its key (x-ms-source-encryption-*).
    copy = container.get_blob_client("copy.txt")
    with pytest.raises(HttpResponseError):
        copy.start_copy_from_url(blob.url)
    assert not copy.exists()
    # A key on a blob written without one is refused too (Azure's BlobDoesNotUseCustomerSpecifiedEncryption).
    plain = container.upload_blob("plain.txt", b"plain")
    with pytest.raises(HttpResponseError) as refused:
        plain.download_blob(cpk=MINE)
    assert refused.value.error_code == "BlobDoesNotUseCustomerSpecifiedEncryption"
    # The listing shows the key's hash, never the key.
    listing = signed("GET", f"{container.url}?restype=container&comp=list", {"Content-Length": "0"}, b"", secure.ca)
    assert f"<CustomerProvidedKeySha256>{MINE.key_hash}</CustomerProvidedKeySha256>" in listing.text
    assert MINE.key_value not in listing.text


def signed(method, url, headers, body, ca):
    """A request as written, signed with the official SDK's Shared Key policy, over HTTPS."""
    from email.utils import formatdate
    from azure.core.pipeline import PipelineContext, PipelineRequest
    from azure.core.pipeline.transport import HttpRequest
    from azure.storage.blob._shared.authentication import SharedKeyCredentialPolicy
    headers = {"x-ms-version": "2026-10-06", "x-ms-date": formatdate(usegmt=True), "Content-Length": str(len(body)), **headers}
    request = HttpRequest(method, url, headers=headers)
    SharedKeyCredentialPolicy(ACCOUNT, KEY).on_request(PipelineRequest(request, PipelineContext(None)))
    return requests.request(method, url, headers=dict(request.headers), data=body, verify=ca, timeout=10)


def test_keys_are_refused_when_malformed_or_over_plain_http(secure, emulator, name):
    container = client(secure).create_container(name)
    url = f"{container.url}/bad.txt"
    base = {"x-ms-blob-type": "BlockBlob", "x-ms-encryption-key": MINE.key_value, "x-ms-encryption-algorithm": "AES256"}
    for headers in ({**base, "x-ms-encryption-key-sha256": OTHER.key_hash},  # not the key's hash
                    {**base, "x-ms-encryption-key-sha256": MINE.key_hash, "x-ms-encryption-algorithm": "AES128"},
                    {k: v for k, v in base.items() if k != "x-ms-encryption-algorithm"} | {"x-ms-encryption-key-sha256": MINE.key_hash},
                    {**base, "x-ms-encryption-key": base64.b64encode(b"short").decode(), "x-ms-encryption-key-sha256": MINE.key_hash}):
        r = signed("PUT", url, headers, b"x", secure.ca)
        assert r.status_code == 400, r.text
        assert MINE.key_value not in r.text
    assert not container.get_blob_client("bad.txt").exists()
    # Over plain HTTP a key is refused: it would travel in the clear.
    BlobServiceClient.from_connection_string(emulator.connection_string).create_container(name)
    r = emulator.raw("PUT", f"{emulator.blob}/{name}/x.txt", {**base, "x-ms-encryption-key-sha256": MINE.key_hash}, b"x")
    assert r.status_code == 400 and "HTTPS" in r.text, r.text


def test_encryption_scopes_are_the_accounts_and_a_container_can_insist(secure, name):
    service = client(secure)
    container = service.create_container(name, container_encryption_scope=ContainerEncryptionScope("scope-a", prevent_encryption_scope_override=True))
    assert container.get_container_properties().encryption_scope.default_encryption_scope == "scope-a"
    blob = container.upload_blob("doc.txt", b"d")
    assert blob.get_blob_properties().encryption_scope == "scope-a"
    with pytest.raises(HttpResponseError):
        container.upload_blob("other.txt", b"o", encryption_scope="scope-b")
    with pytest.raises(HttpResponseError):
        container.upload_blob("keyed.txt", b"k", cpk=MINE)
    open_container = service.create_container(name + "x")
    assert open_container.upload_blob("b.txt", b"b", encryption_scope="scope-b").get_blob_properties().encryption_scope == "scope-b"
    with pytest.raises(HttpResponseError) as unknown:
        open_container.upload_blob("c.txt", b"c", encryption_scope="no-such-scope")
    assert unknown.value.status_code == 409
    assert not open_container.get_blob_client("c.txt").exists()


def test_crc64_sm_uploads_in_blocks_commit_through_a_structured_block_list(secure, name):
    """The new user's finding: with validate_content="crc64-sm" the SDK frames the Put Block
    List body too; it was refused. Any PUT body may be a structured message."""
    service = BlobServiceClient(secure.blob, credential={"account_name": ACCOUNT, "account_key": KEY}, connection_verify=secure.ca,
                                retry_total=0, max_single_put_size=1024, max_block_size=1024)
    container = service.create_container(name)
    data = bytes(range(256)) * 12
    blob = container.get_blob_client("chunked.bin")
    blob.upload_blob(data, validate_content="crc64-sm")
    assert blob.download_blob(validate_content="crc64").readall() == data
    assert len(blob.get_block_list()[0]) == 3
