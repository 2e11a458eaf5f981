"""The emulator over HTTPS (`--cert`/`--key`) with a test CA made here, judged by the official
SDKs verifying its certificate, and azseed trusting it through `--ca-file` or `SSL_CERT_FILE` —
and refusing it, in one line, without them."""
import os
import subprocess

import pytest
from azure.data.tables import TableServiceClient
from azure.storage.blob import BlobServiceClient

from conftest import run, start_emulator, stop_emulator

NOW = ["--now", "2026-11-21", "--from", "2026-01-01", "--to", "2027-01-01"]


def make_ca_and_server_certificate(folder):
    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=azseed test CA")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    (folder / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                                    "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem",
            "-days", "2", "-extfile", "ext.cnf")
    return folder / "ca.pem", folder / "server.pem", folder / "server.key"


@pytest.fixture
def https_emulator(azseed, tmp_path):
    ca, cert, key = make_ca_and_server_certificate(tmp_path)
    emulator = start_emulator(azseed, "--in-memory", "--cert", str(cert), "--key", str(key))
    emulator.ca = str(ca)
    yield emulator
    stop_emulator(emulator)


def test_the_sdks_verify_the_emulators_certificate(https_emulator, name):
    e = https_emulator
    assert e.blob.startswith("https://127.0.0.1:") and e.table.startswith("https://127.0.0.1:")
    cs = e.connection_string.replace("DefaultEndpointsProtocol=http;", "DefaultEndpointsProtocol=https;")
    blobs = BlobServiceClient.from_connection_string(cs, connection_verify=e.ca, retry_total=0)
    container = blobs.create_container(name)
    container.upload_blob("a.txt", b"over tls")
    assert container.download_blob("a.txt").readall() == b"over tls"
    tables = TableServiceClient.from_connection_string(cs, connection_verify=e.ca, retry_total=0)
    table = tables.create_table(name)
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "N": 1})
    assert [x["N"] for x in table.list_entities()] == [1]
    # Without the CA the SDK refuses the certificate: it is really verified.
    with pytest.raises(Exception) as refused:
        BlobServiceClient.from_connection_string(cs, retry_total=0).get_container_client(name).get_container_properties()
    assert "CERTIFICATE_VERIFY_FAILED" in str(refused.value) or "certificate" in str(refused.value).lower()


def test_azseed_trusts_a_private_ca_only_when_told(azseed, https_emulator):
    e = https_emulator
    cs = e.connection_string.replace("DefaultEndpointsProtocol=http;", "DefaultEndpointsProtocol=https;")
    env = {k: v for k, v in os.environ.items() if k not in ("AZURE_STORAGE_CONNECTION_STRING", "SSL_CERT_FILE")}
    untrusted = run(azseed, "plan", "--connection-string", cs, *NOW, env=env)
    assert untrusted.returncode == 1
    errors = [line for line in untrusted.stderr.splitlines() if line.startswith("azseed: error: ")]
    assert len(errors) == 1 and "not trusted" in errors[0] and "--ca-file" in errors[0], untrusted.stderr
    applied = run(azseed, "apply", "--connection-string", cs, "--ca-file", e.ca, *NOW, env=env)
    assert applied.returncode == 0, applied.stderr
    assert "118 created" in applied.stdout
    verified = run(azseed, "verify", "--connection-string", cs, *NOW, env={**env, "SSL_CERT_FILE": e.ca})
    assert verified.returncode == 0, verified.stderr
    missing = run(azseed, "plan", "--connection-string", cs, "--ca-file", "/nonexistent/ca.pem", *NOW, env=env)
    assert missing.returncode == 64 and "--ca-file" in missing.stderr


def test_a_bad_certificate_file_stops_the_emulator_in_one_line(azseed, tmp_path):
    (tmp_path / "not.pem").write_text("hello")
    done = run(azseed, "emulator", "--in-memory", "--blob-port", "0", "--table-port", "0", "--cert", str(tmp_path / "not.pem"), "--key", str(tmp_path / "not.pem"))
    assert done.returncode == 1
    assert done.stderr.startswith("azseed: error: --cert ") and len(done.stderr.strip().splitlines()) == 1, done.stderr
    half = run(azseed, "emulator", "--in-memory", "--cert", str(tmp_path / "not.pem"))
    assert half.returncode == 64 and "--cert and --key go together" in half.stderr


def test_an_https_only_sas_works_over_https(https_emulator, name):
    import datetime as dt
    from azure.storage.blob import BlobClient, BlobSasPermissions, generate_blob_sas
    from conftest import ACCOUNT, KEY, register_secret
    e = https_emulator
    cs = e.connection_string.replace("DefaultEndpointsProtocol=http;", "DefaultEndpointsProtocol=https;")
    BlobServiceClient.from_connection_string(cs, connection_verify=e.ca).create_container(name).upload_blob("a.txt", b"tls only")
    sas = register_secret(generate_blob_sas(ACCOUNT, name, "a.txt", account_key=KEY, permission=BlobSasPermissions(read=True),
                                            expiry=dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1), protocol="https"))
    assert BlobClient(e.blob, name, "a.txt", credential=sas, connection_verify=e.ca, retry_total=0).download_blob().readall() == b"tls only"
