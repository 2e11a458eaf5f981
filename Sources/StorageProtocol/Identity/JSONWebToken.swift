import Foundation

/// A JSON Web Token in compact form (`header.claims.signature`, RFC 7519 / RFC 7515): what
/// Entra ID issues as an access token and what a client certificate signs as its assertion.
/// Parsing checks only the form; the emulator's verifier checks the signature and claims.
public struct JSONWebToken: Sendable {
    public let header: JSONValue
    public let claims: JSONValue
    /// `base64url(header) + "." + base64url(claims)`: the bytes the signature covers.
    public let signingInput: [UInt8]
    public let signature: [UInt8]

    /// Why a token is not a well-formed JWT; never quotes the token.
    public struct FormError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public init(compact text: String) throws(FormError) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw FormError(description: "the token is not a JWT (three base64url parts separated by dots)") }
        guard let headerBytes = Base64URL.decode(parts[0]), let claimBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else {
            throw FormError(description: "a part of the token is not base64url")
        }
        guard let header = try? JSONParser.parse(headerBytes), case .object = header,
            let claims = try? JSONParser.parse(claimBytes), case .object = claims
        else {
            throw FormError(description: "the token's header or claims are not a JSON object")
        }
        self.header = header
        self.claims = claims
        self.signingInput = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
        self.signature = signature
    }

    /// The compact form of `header` and `claims` signed by `sign` (which receives the signing input).
    public static func compact(header: JSONValue, claims: JSONValue, sign: ([UInt8]) throws -> [UInt8]) rethrows -> String {
        let input = Base64URL.encode(Array(header.compact().utf8)) + "." + Base64URL.encode(Array(claims.compact().utf8))
        return input + "." + Base64URL.encode(try sign(Array(input.utf8)))
    }

    /// A string claim or header member.
    public func string(_ name: String) -> String? { claims[name]?.stringValue }

    /// A NumericDate claim (`exp`, `nbf`, `iat`): seconds since 1970, an integer or a fraction.
    public func date(_ name: String) -> Date? {
        guard case .number(let text)? = claims[name], let seconds = Double(text) else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// The audience: one string, or an array of them.
    public var audiences: [String] {
        switch claims["aud"] {
        case .string(let one)?: [one]
        case .array(let many)?: many.compactMap(\.stringValue)
        default: []
        }
    }
}
