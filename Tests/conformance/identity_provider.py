"""A local stand-in for Microsoft Entra ID, for the tests: an HTTPS server (certificate from a
test CA) publishing an OpenID configuration and a JWKS per tenant, and a token endpoint for the
client-credentials grant that checks a client secret, a certificate's signed assertion or a
federated token, then issues RS256 access tokens for Azure Storage. Beside it a plain-HTTP
managed-identity endpoint as App Service publishes one (IDENTITY_ENDPOINT/IDENTITY_HEADER).

Everything listens on 127.0.0.1 only."""
import base64
import hashlib
import http.server
import json
import ssl
import threading
import time
import urllib.parse
import uuid

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa

TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
CLIENT_ID = "0b6f5c3e-1d2a-4c8e-9f7a-3e5d6c7b8a91"
CLIENT_SECRET = "test-client-secret-9Q~Xy7Z"
FEDERATED_TOKEN = "federated.kubernetes.service-account-token"
IDENTITY_HEADER = "test-identity-header-secret"
STORAGE = "https://storage.azure.com"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def new_rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def private_pem(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def send_json(handler, status, body):
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def jwk(key, kid):
    numbers = key.public_key().public_numbers()
    return {"kty": "RSA", "use": "sig", "kid": kid, "n": b64url(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
            "e": b64url(numbers.e.to_bytes(3, "big"))}


class IdentityProvider:
    """Start with `start(cert, key)`; `authority` is its base URL. `issued` counts tokens per grant."""

    def __init__(self):
        self.signing_key = new_rsa_key()
        self.kid = "test-key-1"
        self.client_certificate = None  # (cert PEM bytes, thumbprint) registered for CLIENT_ID
        self.issued = {}
        self.lifetime = 3600
        # How the key set is served: None (as Entra does), "drip" (two bytes a second) or "huge"
        # (64 MiB); key_reads counts the reads of it.
        self.keys_mode = None
        self.key_reads = 0

    def token(self, audience=STORAGE, issuer=None, expires_in=None, key=None, kid=None, tenant=TENANT, not_before=None, extra=None):
        """An access token as Entra issues one for Storage (v2 issuer unless given)."""
        now = int(time.time())
        claims = {"aud": audience, "iss": issuer or f"{self.authority}/{tenant}/v2.0", "tid": tenant, "oid": str(uuid.uuid4()),
                  "sub": CLIENT_ID, "appid": CLIENT_ID, "iat": now - 10, "nbf": not_before if not_before is not None else now - 10,
                  "exp": now + (expires_in if expires_in is not None else self.lifetime), "ver": "2.0"}
        claims.update(extra or {})
        return jwt.encode(claims, private_pem(key or self.signing_key), algorithm="RS256", headers={"kid": kid or self.kid})

    def register_certificate(self, folder):
        """Makes a self-signed client certificate for CLIENT_ID; returns the PEM path (cert + key)."""
        key = new_rsa_key()
        name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "azseed test client")])
        now = time.time()
        import datetime as dt
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(dt.datetime.fromtimestamp(now - 60, dt.timezone.utc))
                .not_valid_after(dt.datetime.fromtimestamp(now + 86400, dt.timezone.utc)).sign(key, hashes.SHA256()))
        der = cert.public_bytes(serialization.Encoding.DER)
        self.client_certificate = (cert, b64url(hashlib.sha1(der).digest()))
        path = folder / "client.pem"
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM) + private_pem(key))
        return path

    # --- serving ----------------------------------------------------------------------

    def start(self, certificate, key):
        provider = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, status, body):
                send_json(self, status, body)

            def do_GET(self):
                path = urllib.parse.urlsplit(self.path).path
                parts = path.strip("/").split("/")
                tenant = parts[0]
                if path.endswith("/v2.0/.well-known/openid-configuration"):
                    base = f"{provider.authority}/{tenant}"
                    return self.reply(200, {"issuer": f"{provider.authority}/{{tenantid}}/v2.0", "jwks_uri": f"{base}/discovery/v2.0/keys",
                                            "token_endpoint": f"{base}/oauth2/v2.0/token", "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                                            "device_authorization_endpoint": f"{base}/oauth2/v2.0/devicecode",
                                            "response_types_supported": ["code", "id_token", "token"], "id_token_signing_alg_values_supported": ["RS256"],
                                            "subject_types_supported": ["pairwise"], "tenant_region_scope": "NA"})
                if path.endswith("/discovery/v2.0/keys"):
                    provider.key_reads += 1
                    if provider.keys_mode == "drip":
                        self.send_response(200)
                        self.send_header("Content-Length", "100000")
                        self.end_headers()
                        try:
                            for _ in range(120):
                                self.wfile.write(b"  ")
                                self.wfile.flush()
                                time.sleep(1)
                        except OSError:
                            pass
                        return
                    if provider.keys_mode == "huge":
                        self.send_response(200)
                        self.send_header("Content-Length", str(64 << 20))
                        self.end_headers()
                        try:
                            self.wfile.write(b'{"keys": [' + b" " * ((64 << 20) - 12) + b"]}")
                        except OSError:
                            pass
                        return
                    time.sleep(0.5)  # slow enough that concurrent tokens would each start a read
                    return self.reply(200, {"keys": [jwk(provider.signing_key, provider.kid)]})
                self.reply(404, {"error": "not_found"})

            def do_POST(self):
                path = urllib.parse.urlsplit(self.path).path
                length = int(self.headers.get("Content-Length", "0"))
                form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                if not path.endswith("/oauth2/v2.0/token"):
                    return self.reply(404, {"error": "not_found"})
                tenant = path.strip("/").split("/")[0]
                if form.get("grant_type") != "client_credentials" or form.get("client_id") != CLIENT_ID:
                    return self.reply(400, {"error": "unauthorized_client", "error_description": "AADSTS700016: Application not found in the directory."})
                if form.get("scope") != STORAGE + "/.default":
                    return self.reply(400, {"error": "invalid_scope", "error_description": f"AADSTS70011: The provided scope is not valid: {form.get('scope')}"})
                grant = provider.check_client(form, f"{provider.authority}{path}")
                if grant is None:
                    return self.reply(401, {"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value."})
                provider.issued[grant] = provider.issued.get(grant, 0) + 1
                self.reply(200, {"token_type": "Bearer", "expires_in": provider.lifetime, "ext_expires_in": provider.lifetime,
                                 "access_token": provider.token(tenant=tenant)})

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(certificate), str(key))
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.authority = f"https://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

        class Identity(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
                if self.headers.get("X-IDENTITY-HEADER") != IDENTITY_HEADER or query.get("api-version") != "2019-08-01":
                    status, body = 400, {"error": "invalid_request", "error_description": "X-IDENTITY-HEADER or api-version is wrong"}
                elif query.get("resource") != STORAGE:
                    status, body = 400, {"error": "invalid_resource", "error_description": f"resource {query.get('resource')}"}
                else:
                    provider.issued["managed identity"] = provider.issued.get("managed identity", 0) + 1
                    status, body = 200, {"access_token": provider.token(), "expires_on": str(int(time.time()) + provider.lifetime),
                                         "resource": STORAGE, "token_type": "Bearer", "client_id": CLIENT_ID}
                send_json(self, status, body)

        self.identity_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Identity)
        self.identity_endpoint = f"http://127.0.0.1:{self.identity_server.server_address[1]}/msi/token"
        threading.Thread(target=self.identity_server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self.server.shutdown()
        self.identity_server.shutdown()

    def check_client(self, form, token_endpoint):
        """The grant the client proved (secret, certificate, federated), or None."""
        if "client_secret" in form:
            return "secret" if form["client_secret"] == CLIENT_SECRET else None
        if form.get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
            return None
        assertion = form.get("client_assertion", "")
        if assertion == FEDERATED_TOKEN:
            return "federated"
        if self.client_certificate is None:
            return None
        cert, thumbprint = self.client_certificate
        try:
            header = jwt.get_unverified_header(assertion)
            if header.get("x5t") != thumbprint:
                return None
            claims = jwt.decode(assertion, cert.public_key(), algorithms=["RS256"], audience=token_endpoint)
        except jwt.PyJWTError:
            return None
        return "certificate" if claims.get("iss") == CLIENT_ID and claims.get("sub") == CLIENT_ID else None
