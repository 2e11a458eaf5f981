/// Built-in vocabularies for `fake:` fields: people's names, e-mail addresses and phone
/// numbers that look real and belong to no one — fixed forever (changing a list changes every
/// dataset that draws from it). Phone numbers use the 555 exchange, addresses `example.com`
/// (reserved for examples, RFC 2606) unless a dataset names its own domain.
public enum Vocabulary {
    public static let givenNames = [
        "Ada", "Alan", "Amara", "Ana", "Ben", "Bruno", "Carla", "Chen", "Dara", "David", "Elena", "Emil", "Farah", "Femi", "Grace", "Hana",
        "Hugo", "Ines", "Ivan", "Jamal", "Jonas", "Kai", "Kofi", "Lea", "Leo", "Lina", "Luca", "Maya", "Mei", "Mila", "Nadia", "Noah",
        "Omar", "Priya", "Rafael", "Rosa", "Sami", "Sara", "Sofia", "Tariq", "Theo", "Uma", "Vera", "Wei", "Yara", "Yusuf", "Zara", "Zoe",
    ]
    public static let familyNames = [
        "Abbott", "Alvarez", "Bauer", "Berg", "Castro", "Chen", "Costa", "Dahl", "Diaz", "Eriksen", "Fischer", "Garcia", "Haddad", "Hansen",
        "Ito", "Jensen", "Kaur", "Khan", "Kim", "Kowalski", "Larsen", "Lopez", "Mehta", "Moreau", "Murphy", "Nakamura", "Novak", "Okafor",
        "Olsen", "Patel", "Perez", "Quinn", "Rossi", "Sato", "Schmidt", "Silva", "Singh", "Sousa", "Tanaka", "Torres", "Varga", "Vogel",
        "Wagner", "Wong", "Yamada", "Young", "Zhang", "Ziegler",
    ]

    /// Every full name, given name first, in a fixed order: `index` ↦ a name (2,304 of them).
    public static let nameCount = givenNames.count * familyNames.count
    public static func name(_ index: Int) -> String {
        "\(givenNames[index % givenNames.count]) \(familyNames[index / givenNames.count])"
    }

    /// An address made of a name: lower-case letters and digits, words joined by dots.
    public static func email(of text: String, domain: String) -> String {
        var local = ""
        var pendingDot = false
        for scalar in text.unicodeScalars {
            if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                if pendingDot, !local.isEmpty { local += "." }
                pendingDot = false
                local += String(scalar).lowercased()
            } else {
                pendingDot = true
            }
        }
        return (local.isEmpty ? "user" : local) + "@" + domain
    }

    /// How many phone numbers there are: `+1 555` and seven digits.
    public static let phoneCount = 10_000_000
    public static func phone(_ index: Int) -> String {
        let digits = String(index)
        let padded = String(repeating: "0", count: max(0, 7 - digits.count)) + digits
        return "+1 555 \(padded.prefix(3)) \(padded.suffix(4))"
    }
}
