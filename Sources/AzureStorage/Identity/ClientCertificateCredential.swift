import Crypto
import CryptoExtras
import Foundation

/// A service principal proving itself with a certificate (`AZURE_CLIENT_CERTIFICATE_PATH`: a
/// PEM file holding the certificate and its unencrypted RSA private key). Each token request
/// carries a fresh assertion: a JWT signed RS256 whose header names the certificate by its
/// SHA-1 thumbprint (`x5t`), as azure-identity sends it (docs/PROTOCOL.md §12).
public struct ClientCertificateCredential: TokenCredential {
    public let name = "environment (client certificate)"
    static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

    let endpoint: TokenEndpoint
    let clientID: String
    let privateKey: _RSA.Signing.PrivateKey
    let thumbprint: String
    let now: @Sendable () -> Date

    /// Reads the certificate and key from `pem` (the file's text). Throws a credential error
    /// naming what is missing; never quotes the key.
    public init(
        tenantID: String, clientID: String, pem: String, authority: URL,
        transport: any HTTPTransport = CurlTransport(), now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        let name = "environment (client certificate)"
        guard let certificate = Self.block("CERTIFICATE", in: pem), let der = Data(base64Encoded: certificate, options: .ignoreUnknownCharacters)
        else {
            throw AzureStorageError.credential(
                name,
                "AZURE_CLIENT_CERTIFICATE_PATH holds no PEM certificate (-----BEGIN CERTIFICATE-----); give a PEM file with the certificate and its private key"
            )
        }
        guard let key = Self.block("PRIVATE KEY", in: pem) ?? Self.block("RSA PRIVATE KEY", in: pem) else {
            throw AzureStorageError.credential(
                name,
                "AZURE_CLIENT_CERTIFICATE_PATH holds no unencrypted private key (-----BEGIN PRIVATE KEY-----); PKCS#12 and encrypted keys are not read — convert with 'openssl pkcs12 -nodes'"
            )
        }
        let label = pem.contains("-----BEGIN RSA PRIVATE KEY-----") && Self.block("PRIVATE KEY", in: pem) == nil ? "RSA PRIVATE KEY" : "PRIVATE KEY"
        do {
            privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: "-----BEGIN \(label)-----\n\(key)\n-----END \(label)-----")
        } catch {
            throw AzureStorageError.credential(name, "the private key in AZURE_CLIENT_CERTIFICATE_PATH is not an RSA key of 2048 bits or more")
        }
        thumbprint = Base64URL.encode(Insecure.SHA1.hash(data: der))
        endpoint = TokenEndpoint(authority: authority, tenant: tenantID, transport: transport)
        self.clientID = clientID
        self.now = now
    }

    public func token(scope: String) async throws -> AccessToken {
        let issued = now()
        return try await endpoint.token(
            clientID: clientID, scope: scope,
            proof: [
                ("client_assertion_type", Self.assertionType), ("client_assertion", try assertion(issuedAt: issued)),
            ], credential: name, now: issued)
    }

    /// The signed assertion: audience the token endpoint, issuer and subject the client,
    /// valid ten minutes.
    func assertion(issuedAt issued: Date) throws -> String {
        let seconds = Int64(issued.timeIntervalSince1970)
        let header = JSONValue.object([("alg", .string("RS256")), ("typ", .string("JWT")), ("x5t", .string(thumbprint))])
        let claims = JSONValue.object([
            ("aud", .string(endpoint.url)), ("iss", .string(clientID)), ("sub", .string(clientID)),
            ("jti", .string(UUID().uuidString.lowercased())), ("iat", .int(seconds)), ("nbf", .int(seconds)), ("exp", .int(seconds + 600)),
        ])
        return try JSONWebToken.compact(header: header, claims: claims) { input in
            Array(try privateKey.signature(for: Data(input), padding: .insecurePKCS1v1_5).rawRepresentation)
        }
    }

    /// The base64 body of the first PEM block labelled `label`.
    static func block(_ label: String, in pem: String) -> String? {
        guard let begin = pem.range(of: "-----BEGIN \(label)-----"),
            let end = pem.range(of: "-----END \(label)-----", range: begin.upperBound..<pem.endIndex)
        else { return nil }
        return pem[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
    }
}
