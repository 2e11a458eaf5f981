"""Microsoft Entra ID end to end, with a local identity provider standing in for Entra
(identity_provider.py: HTTPS from a test CA, OpenID configuration, JWKS, a client-credentials
token endpoint, an App Service managed-identity endpoint). The emulator, started with
--oauth-authority and --cert/--key, checks each token's signature against the provider's
published keys; the official azure-identity credential and SDKs, and `azseed --auth-mode
login` with each credential of its chain, work against it; forged, misaddressed and expired
tokens are refused as Azure refuses them."""
import os
import stat
import time

import pytest
import requests
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError
from azure.data.tables import TableServiceClient
from azure.identity import ClientSecretCredential
from azure.storage.blob import BlobServiceClient

import identity_provider as idp
from conftest import register_secret, run, start_emulator, stop_emulator
from test_tls import make_ca_and_server_certificate

NOW = ["--now", "2026-11-21", "--from", "2026-01-01", "--to", "2027-01-01"]
for secret in (idp.CLIENT_SECRET, idp.FEDERATED_TOKEN, idp.IDENTITY_HEADER):
    register_secret(secret)


@pytest.fixture(scope="module")
def entra(azseed, tmp_path_factory):
    folder = tmp_path_factory.mktemp("entra")
    ca, cert, key = make_ca_and_server_certificate(folder)
    provider = idp.IdentityProvider().start(cert, key)
    emulator = start_emulator(azseed, "--in-memory", "--cert", str(cert), "--key", str(key),
                              "--oauth-authority", provider.authority, "--oauth-tenant", idp.TENANT, "--ca-file", str(ca))
    provider.ca, provider.folder, provider.emulator = str(ca), folder, emulator
    yield provider
    stop_emulator(emulator)
    provider.stop()


def login_env(entra, **extra):
    """A clean environment for `azseed --auth-mode login`: no Azure variables but those given,
    the test CA trusted, and the instance metadata service pointed at a closed local port, so
    no test ever reaches for 169.254.169.254."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "IDENTITY_", "MSI_"))}
    env.update({"SSL_CERT_FILE": entra.ca, "AZURE_POD_IDENTITY_AUTHORITY_HOST": "http://127.0.0.1:9", "PATH": "/usr/bin:/bin"})
    env.update(extra)
    return env


def endpoints(entra):
    return ["--blob-endpoint", entra.emulator.blob, "--table-endpoint", entra.emulator.table]


def secret_env(entra, **extra):
    return login_env(entra, **{"AZURE_TENANT_ID": idp.TENANT, "AZURE_CLIENT_ID": idp.CLIENT_ID, "AZURE_CLIENT_SECRET": idp.CLIENT_SECRET,
                               "AZURE_AUTHORITY_HOST": entra.authority, **extra})


def test_the_sdks_work_with_an_azure_identity_credential(entra, name, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", entra.ca)
    credential = ClientSecretCredential(idp.TENANT, idp.CLIENT_ID, idp.CLIENT_SECRET, authority=entra.authority,
                                        disable_instance_discovery=True, connection_verify=entra.ca)
    blobs = BlobServiceClient(entra.emulator.blob, credential=credential, connection_verify=entra.ca, retry_total=0)
    container = blobs.create_container(name)
    container.upload_blob("hello.txt", b"signed in")
    assert container.download_blob("hello.txt").readall() == b"signed in"
    tables = TableServiceClient(entra.emulator.table, credential=credential, connection_verify=entra.ca, retry_total=0)
    table = tables.create_table(name)
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "N": 7})
    assert [e["N"] for e in table.list_entities()] == [7]
    # A wrong secret is refused by the provider, before the emulator sees anything.
    wrong = ClientSecretCredential(idp.TENANT, idp.CLIENT_ID, "not-the-secret", authority=entra.authority,
                                   disable_instance_discovery=True, connection_verify=entra.ca)
    with pytest.raises(ClientAuthenticationError):
        BlobServiceClient(entra.emulator.blob, credential=wrong, connection_verify=entra.ca, retry_total=0).get_container_client(name).get_container_properties()


def bearer(entra, token, url=None, version="2025-11-05"):
    return requests.get(url or entra.emulator.blob + "?comp=list", verify=entra.ca, timeout=10,
                        headers={"Authorization": f"Bearer {token}", "x-ms-version": version, "x-ms-date": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())})


def test_tokens_azure_would_refuse_are_refused(entra):
    assert bearer(entra, entra.token()).status_code == 200
    # The v1 issuer form and the account's own endpoint as audience are accepted too.
    assert bearer(entra, entra.token(issuer=f"{entra.authority}/{idp.TENANT}/", audience="https://storage.azure.com/")).status_code == 200
    assert bearer(entra, entra.token(audience="https://devstoreaccount1.blob.core.windows.net")).status_code == 200
    forged = entra.token(key=idp.new_rsa_key())
    unknown_key = entra.token(key=idp.new_rsa_key(), kid="not-published")
    cases = {
        "signed by another key": (forged, "Signature validation failed"),
        "a key the authority does not publish": (unknown_key, "publishes no key"),
        "for another audience": (entra.token(audience="https://vault.azure.net"), "Audience validation failed"),
        "expired": (entra.token(expires_in=-3600), "The token is expired"),
        "not yet valid": (entra.token(not_before=int(time.time()) + 3600), "not yet valid"),
        "from another issuer": (entra.token(issuer="https://evil.example/" + idp.TENANT + "/v2.0"), "Issuer validation failed"),
        "not a JWT": ("not-a-token", "malformed"),
        # Entra signs every tenant's tokens with the same keys: only the emulator's tenant is accepted.
        "from another tenant": (entra.token(tenant="11111111-2222-3333-4444-555555555555"), "not the tenant of this emulator"),
        # An audience is never taken from the request's Host header.
        "for the emulator's own host": (entra.token(audience=entra.emulator.blob.rsplit("/", 1)[0]), "Audience validation failed"),
    }
    for case, (token, detail) in cases.items():
        r = bearer(entra, token)
        assert r.status_code == 401, case
        assert r.headers.get("x-ms-error-code") == "InvalidAuthenticationInfo", case
        challenge = r.headers.get("WWW-Authenticate", "")
        assert challenge.startswith(f"Bearer authorization_uri={entra.authority}/") and "resource_id=https://storage.azure.com" in challenge, case
        assert detail in r.text, (case, r.text)
    # The Table service answers the same way, in its own error shape.
    r = bearer(entra, forged, url=entra.emulator.table + "/Tables")
    assert r.status_code == 401 and r.headers.get("x-ms-error-code") == "InvalidAuthenticationInfo" and "odata.error" in r.text
    # A version older than bearer support.
    r = bearer(entra, entra.token(), version="2017-04-17")
    assert r.status_code == 400


def test_a_bearer_token_over_plain_http_is_refused(azseed, entra):
    plain = start_emulator(azseed, "--in-memory", "--oauth-authority", entra.authority, "--oauth-tenant", idp.TENANT, "--ca-file", entra.ca)
    try:
        r = requests.get(plain.blob + "?comp=list", timeout=10, headers={"Authorization": f"Bearer {entra.token()}", "x-ms-version": "2025-11-05"})
        assert r.status_code == 403 and r.headers.get("x-ms-error-code") == "AuthenticationFailed"
        assert "Bearer is not allowed with HTTP" in r.text
    finally:
        stop_emulator(plain)


def test_without_an_authority_the_emulator_refuses_bearer_tokens(azseed, emulator, entra):
    r = requests.get(emulator.blob + "?comp=list", timeout=10, headers={"Authorization": f"Bearer {entra.token()}", "x-ms-version": "2025-11-05"})
    assert r.status_code == 403 and "--oauth-authority" in r.text
    # An authority without its tenant would take any tenant's tokens: refused at start.
    done = run(azseed, "emulator", "--in-memory", "--oauth-authority", entra.authority)
    assert done.returncode == 64 and "needs --oauth-tenant" in done.stderr


def test_azseed_apply_signs_in_with_a_client_secret(azseed, entra):
    before = entra.issued.get("secret", 0)
    applied = run(azseed, "apply", "--auth-mode", "login", *endpoints(entra), *NOW, env=secret_env(entra))
    assert applied.returncode == 0, applied.stderr
    assert "118 created" in applied.stdout
    # One token served the whole run (about 30 requests): the cache works.
    assert entra.issued["secret"] - before == 1
    verified = run(azseed, "verify", "--auth-mode", "login", *endpoints(entra), *NOW, env=secret_env(entra))
    assert verified.returncode == 0, verified.stderr
    # AZURE_STORAGE_AUTH_MODE, as az reads it, and a connection string holding only endpoints.
    cs = f"BlobEndpoint={entra.emulator.blob};TableEndpoint={entra.emulator.table}"
    planned = run(azseed, "plan", *NOW, env=secret_env(entra, AZURE_STORAGE_AUTH_MODE="login", AZURE_STORAGE_CONNECTION_STRING=cs))
    assert planned.returncode == 0 and "No changes" in planned.stdout, planned.stderr


def test_azseed_signs_in_with_a_certificate_a_federated_token_and_a_managed_identity(azseed, entra, tmp_path):
    pem = entra.register_certificate(tmp_path)
    certificate = login_env(entra, AZURE_TENANT_ID=idp.TENANT, AZURE_CLIENT_ID=idp.CLIENT_ID, AZURE_CLIENT_CERTIFICATE_PATH=str(pem),
                            AZURE_AUTHORITY_HOST=entra.authority)
    before = dict(entra.issued)
    done = run(azseed, "plan", "--auth-mode", "login", *endpoints(entra), *NOW, env=certificate)
    assert done.returncode == 0, done.stderr
    assert entra.issued.get("certificate", 0) == before.get("certificate", 0) + 1

    token_file = tmp_path / "federated-token"
    token_file.write_text(idp.FEDERATED_TOKEN)
    workload = login_env(entra, AZURE_TENANT_ID=idp.TENANT, AZURE_CLIENT_ID=idp.CLIENT_ID, AZURE_FEDERATED_TOKEN_FILE=str(token_file),
                         AZURE_AUTHORITY_HOST=entra.authority)
    done = run(azseed, "plan", "--auth-mode", "login", *endpoints(entra), *NOW, env=workload)
    assert done.returncode == 0, done.stderr
    assert entra.issued.get("federated", 0) == before.get("federated", 0) + 1

    managed = login_env(entra, IDENTITY_ENDPOINT=entra.identity_endpoint, IDENTITY_HEADER=idp.IDENTITY_HEADER)
    done = run(azseed, "verify", "--auth-mode", "login", *endpoints(entra), *NOW, env=managed)
    assert done.returncode in (0, 2), done.stderr
    assert entra.issued.get("managed identity", 0) == before.get("managed identity", 0) + 1


def fake_az(folder, script):
    path = folder / "az"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(folder)


def test_azseed_signs_in_through_the_azure_cli(azseed, entra, tmp_path):
    token = entra.token()
    (tmp_path / "token.json").write_text('{"accessToken": "%s", "expiresOn": "2099-01-01 00:00:00.000000", "expires_on": %d, '
                                         '"subscription": "x", "tenant": "%s", "tokenType": "Bearer"}' % (token, int(time.time()) + 3600, idp.TENANT))
    (tmp_path / "args").write_text("")
    bin_dir = fake_az(tmp_path, f'echo "$@" > {tmp_path}/args\ncat {tmp_path}/token.json\n')
    env = login_env(entra, PATH=f"{bin_dir}:/usr/bin:/bin")
    done = run(azseed, "plan", "--auth-mode", "login", *endpoints(entra), *NOW, env=env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "args").read_text().split() == ["account", "get-access-token", "--output", "json", "--resource", "https://storage.azure.com"]


def test_no_credential_and_a_refused_one_are_one_line_each(azseed, entra, tmp_path):
    logged_out = fake_az(tmp_path, "echo \"ERROR: Please run 'az login' to setup account.\" >&2\nexit 1\n")
    done = run(azseed, "plan", "--auth-mode", "login", *endpoints(entra), *NOW, env=login_env(entra, PATH=f"{logged_out}:/usr/bin:/bin"))
    assert done.returncode == 1
    errors = [l for l in done.stderr.splitlines() if l.startswith("azseed: error: ")]
    assert len(errors) == 1 and "no credential is configured" in errors[0] and "az login" in errors[0], done.stderr
    assert "instance metadata" in errors[0]

    wrong = secret_env(entra, AZURE_CLIENT_SECRET=register_secret("wrong-secret-value-123"))
    done = run(azseed, "apply", "--auth-mode", "login", *endpoints(entra), *NOW, env=wrong)
    assert done.returncode == 1
    errors = [l for l in done.stderr.splitlines() if l.startswith("azseed: error: ")]
    assert len(errors) == 1 and "401" in errors[0] and "AADSTS7000215" in errors[0], done.stderr


def test_login_refuses_plain_http_and_a_key_beside_it(azseed, entra, emulator):
    done = run(azseed, "plan", "--auth-mode", "login", "--blob-endpoint", emulator.blob, "--table-endpoint", emulator.table, *NOW,
               env=secret_env(entra))
    assert done.returncode == 64 and "needs https endpoints" in done.stderr
    done = run(azseed, "plan", "--auth-mode", "login", "--connection-string", emulator.connection_string, *NOW, env=secret_env(entra))
    assert done.returncode == 64 and "AccountKey would go unused" in done.stderr
