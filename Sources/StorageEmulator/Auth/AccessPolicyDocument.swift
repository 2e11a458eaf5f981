import Foundation
import StorageProtocol

/// A container's or table's stored access policies (`<SignedIdentifiers>`), parsed from what a
/// client sends and served re-serialised: what is stored and handed to every reader of the ACL
/// is only identifiers, times and permission letters, never the document as sent (its markup,
/// declarations or other elements). At most five identifiers, ids of at most 64 characters, as
/// on Azure.
struct AccessPolicyDocument: Equatable {
    struct Identifier: Equatable {
        var id: String
        var start: String?
        var expiry: String?
        var permission: String?
    }

    var identifiers: [Identifier]

    static let empty = "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers />"

    /// Parses a Set ACL body (empty: no policies). Anything else than the documented shape is
    /// 400 InvalidXmlDocument, nothing stored.
    init(body: Data) throws(ServiceError) {
        guard !body.isEmpty else {
            identifiers = []
            return
        }
        guard let tree = XMLTree.parse(body), tree.name == "SignedIdentifiers" else { throw Self.invalid("it is not a <SignedIdentifiers> document") }
        var found: [Identifier] = []
        for element in tree.children {
            guard element.name == "SignedIdentifier" else { throw Self.invalid("<\(element.name)> is not a <SignedIdentifier>") }
            if let other = element.children.first(where: { $0.name != "Id" && $0.name != "AccessPolicy" }) {
                throw Self.invalid("<\(other.name)> is not part of a <SignedIdentifier>")
            }
            guard let id = element["Id"]?.text, !id.isEmpty, id.count <= 64 else {
                throw Self.invalid("a <SignedIdentifier> needs an <Id> of 1 to 64 characters")
            }
            var identifier = Identifier(id: id)
            if let policy = element["AccessPolicy"] {
                for field in policy.children {
                    switch field.name {
                    case "Start": identifier.start = field.text
                    case "Expiry": identifier.expiry = field.text
                    case "Permission": identifier.permission = field.text
                    default: throw Self.invalid("<\(field.name)> is not part of an <AccessPolicy>")
                    }
                }
            }
            for (name, value) in [("Start", identifier.start), ("Expiry", identifier.expiry)] {
                if let value, !value.isEmpty, EdmDateTime(iso8601: value) == nil {
                    throw Self.invalid("<\(name)> '\(value)' is not an ISO 8601 time")
                }
            }
            if let letters = identifier.permission, !letters.allSatisfy({ "racwdxltmeopiuf".contains($0) }) {
                throw Self.invalid("<Permission> '\(letters)' holds letters that are not permissions")
            }
            found.append(identifier)
        }
        guard found.count <= 5 else { throw Self.invalid("at most 5 signed identifiers") }
        identifiers = found
    }

    /// The stored document read back; one stored by an older emulator is re-read the same way,
    /// and one that no longer parses is served as no policies.
    init(stored: String) {
        identifiers = (try? AccessPolicyDocument(body: Data(stored.utf8)))?.identifiers ?? []
    }

    /// The document as stored (an identifier without start, expiry or permission keeps an
    /// empty `<AccessPolicy />`).
    var serialized: String { serialized(omittingEmptyPolicies: false) }

    /// The document as served when `omittingEmptyPolicies`: Azure's Get Container ACL and Get
    /// Table ACL leave out the `<AccessPolicy>` of an identifier that has none.
    func serialized(omittingEmptyPolicies: Bool) -> String {
        guard !identifiers.isEmpty else { return Self.empty }
        let children = identifiers.map { identifier in
            var policy: [XMLTree] = []
            if let start = identifier.start { policy.append(XMLTree(name: "Start", text: start)) }
            if let expiry = identifier.expiry { policy.append(XMLTree(name: "Expiry", text: expiry)) }
            if let permission = identifier.permission { policy.append(XMLTree(name: "Permission", text: permission)) }
            var fields = [XMLTree(name: "Id", text: identifier.id)]
            if !(omittingEmptyPolicies && policy.isEmpty) { fields.append(XMLTree(name: "AccessPolicy", children: policy)) }
            return XMLTree(name: "SignedIdentifier", children: fields)
        }
        return XMLTree(name: "SignedIdentifiers", children: children).document
    }

    static func invalid(_ detail: String) -> ServiceError {
        ServiceError(400, .invalidXmlDocument, "XML specified is not syntactically valid: \(detail).")
    }
}
