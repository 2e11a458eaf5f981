import Foundation
import GRDB
import StorageProtocol

/// Get and Set Blob/Table Service Properties (`restype=service&comp=properties`): the
/// document is kept per service; a Set replaces the root elements it names (Logging,
/// HourMetrics, MinuteMetrics, Cors, DefaultServiceVersion, DeleteRetentionPolicy,
/// StaticWebsite) and keeps the others. Its CORS rules are what `CorsPolicy` applies.
enum ServiceProperties {
    static func defaultDocument(_ service: EmulatorServiceKind) -> XMLTree {
        func off(_ name: String) -> XMLTree {
            XMLTree(
                name: name,
                children: [
                    XMLTree(name: "Version", text: "1.0"), XMLTree(name: "Enabled", text: "false"),
                    XMLTree(name: "RetentionPolicy", children: [XMLTree(name: "Enabled", text: "false")]),
                ])
        }
        let logging = XMLTree(
            name: "Logging",
            children: [
                XMLTree(name: "Version", text: "1.0"), XMLTree(name: "Delete", text: "false"), XMLTree(name: "Read", text: "false"),
                XMLTree(name: "Write", text: "false"), XMLTree(name: "RetentionPolicy", children: [XMLTree(name: "Enabled", text: "false")]),
            ])
        var roots = [logging, off("HourMetrics"), off("MinuteMetrics"), XMLTree(name: "Cors")]
        if service == .blob { roots.append(XMLTree(name: "DeleteRetentionPolicy", children: [XMLTree(name: "Enabled", text: "false")])) }
        return XMLTree(name: "StorageServiceProperties", children: roots)
    }

    /// Checks the settings as Azure checks them: the soft delete policy (`DeleteRetentionPolicy`,
    /// Blob only), the static website (Blob only), analytics logging and metrics
    /// (``AnalyticsSettings/validate(_:)``).
    static func validate(_ sent: XMLTree, service: EmulatorServiceKind = .blob) throws(ServiceError) {
        func on(_ node: XMLTree?, _ flag: String) -> Bool { node?[flag]?.text.lowercased() == "true" }
        if let policy = sent["DeleteRetentionPolicy"] {
            guard service == .blob else {
                throw ServiceError(
                    400, .invalidXmlDocument, "XML specified is not syntactically valid: DeleteRetentionPolicy is a Blob service setting.")
            }
            if on(policy, "Enabled") {
                guard let days = policy["Days"].flatMap({ Int($0.text) }), (1...365).contains(days) else {
                    throw ServiceError(
                        400, .invalidXmlNodeValue,
                        "The value for one of the XML nodes is not in the correct format: DeleteRetentionPolicy needs Days, from 1 to 365.")
                }
            } else if policy["Days"] != nil {
                throw ServiceError(
                    400, .invalidXmlDocument, "XML specified is not syntactically valid: Days is given only with DeleteRetentionPolicy enabled.")
            }
        }
        if let website = sent["StaticWebsite"] {
            guard service == .blob else {
                throw ServiceError(400, .invalidXmlDocument, "XML specified is not syntactically valid: StaticWebsite is a Blob service setting.")
            }
            try StaticWebsite.validate(website)
        }
        try AnalyticsSettings.validate(sent)
    }

    static func key(_ service: EmulatorServiceKind) -> String { service == .blob ? "blob" : "table" }

    /// The current document of `service`.
    static func document(_ service: EmulatorServiceKind, in store: EmulatorStore) async throws -> XMLTree {
        let stored = try await store.read { db in
            try String.fetchOne(db, sql: "SELECT xml FROM service_properties WHERE service = ?", arguments: [key(service)])
        }
        return stored.flatMap { XMLTree.parse(Data($0.utf8)) } ?? defaultDocument(service)
    }

    /// The service's CORS rules (none by default).
    static func corsRules(_ service: EmulatorServiceKind, in store: EmulatorStore) async throws -> [CorsRule] {
        (try? CorsRule.rules(try await document(service, in: store)["Cors"])) ?? []
    }

    /// Get (200, the document) or Set (202) Service Properties; nil for any other request.
    static func respond(
        _ request: TransportRequest, service: EmulatorServiceKind, restype: String?, comp: String?,
        store: EmulatorStore
    ) async throws -> TransportResponse? {
        guard restype == "service", comp == "properties" else { return nil }
        switch request.method {
        case "GET":
            let body = try await document(service, in: store).document
            return TransportResponse(status: 200, headers: HeaderFields([("Content-Type", "application/xml")]), body: Data(body.utf8))
        case "PUT":
            guard let sent = XMLTree.parse(request.body), sent.name == "StorageServiceProperties" else {
                throw ServiceError(400, .invalidXmlDocument, "XML specified is not syntactically valid.")
            }
            _ = try CorsRule.rules(sent["Cors"])
            try validate(sent, service: service)
            var merged = try await document(service, in: store)
            for root in sent.children {
                if let at = merged.children.firstIndex(where: { $0.name == root.name }) {
                    merged.children[at] = root
                } else {
                    merged.children.append(root)
                }
            }
            let xml = merged.document
            try await store.write { db in
                try db.execute(sql: "INSERT OR REPLACE INTO service_properties (service, xml) VALUES (?, ?)", arguments: [key(service), xml])
            }
            return TransportResponse(status: 202)
        default:
            throw ServiceError.unsupportedVerb(request.method)
        }
    }
}
