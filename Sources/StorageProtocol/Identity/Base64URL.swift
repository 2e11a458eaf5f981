import Foundation

/// Base64url without padding (RFC 4648 §5), as JSON Web Tokens and JWKs write bytes.
public enum Base64URL {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        guard text.utf8.allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: "=") && $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        if standard.count % 4 == 1 { return nil }
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { Array($0) }
    }
}
