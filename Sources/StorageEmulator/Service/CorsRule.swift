import Foundation
import StorageProtocol

/// One CORS rule of a service's properties, as Azure evaluates it: origins exact (or `*`),
/// methods, allowed and exposed headers literal or prefixed (`x-ms-meta-*`), max age.
struct CorsRule: Sendable, Equatable {
    var origins: [String]
    var methods: [String]
    var allowedHeaders: [String]
    var exposedHeaders: [String]
    var maxAge: Int

    static let methodsAllowed: Set<String> = ["DELETE", "GET", "HEAD", "MERGE", "POST", "OPTIONS", "PUT", "PATCH"]

    /// The rules of a `<Cors>` element; a ServiceError naming the problem when Azure would refuse them.
    static func rules(_ cors: XMLTree?) throws(ServiceError) -> [CorsRule] {
        guard let cors else { return [] }
        let rules = cors.children.filter { $0.name == "CorsRule" }
        guard rules.count <= 5 else { throw invalid("at most 5 CORS rules are allowed, not \(rules.count)") }
        var out: [CorsRule] = []
        for rule in rules {
            func list(_ name: String) -> [String] {
                (rule[name]?.text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            }
            let methods = list("AllowedMethods").map { $0.uppercased() }
            guard !methods.isEmpty, methods.allSatisfy(methodsAllowed.contains) else {
                throw invalid("AllowedMethods must list methods among \(methodsAllowed.sorted().joined(separator: ", "))")
            }
            let origins = list("AllowedOrigins")
            guard !origins.isEmpty else { throw invalid("AllowedOrigins is empty") }
            guard let maxAge = Int(rule["MaxAgeInSeconds"]?.text ?? "0"), maxAge >= 0 else { throw invalid("MaxAgeInSeconds is not a number") }
            out.append(
                CorsRule(
                    origins: origins, methods: methods, allowedHeaders: list("AllowedHeaders"),
                    exposedHeaders: list("ExposedHeaders"), maxAge: maxAge))
        }
        return out
    }

    private static func invalid(_ why: String) -> ServiceError {
        ServiceError(400, .invalidXmlNodeValue, "The value for one of the XML nodes is not in the correct format: \(why).")
    }

    func allows(origin: String) -> Bool { origins.contains("*") || origins.contains(origin) }

    /// Whether every header of `requested` is allowed, literally or by a `prefix*` entry.
    func allows(headers requested: [String]) -> Bool {
        requested.allSatisfy { header in
            let h = header.lowercased()
            return allowedHeaders.contains { allowed in
                let a = allowed.lowercased()
                if a == "*" { return true }
                if a.hasSuffix("*") { return h.hasPrefix(String(a.dropLast())) }
                return a == h
            }
        }
    }
}

/// Applying a service's CORS rules: the preflight answer and the headers of actual requests.
enum CorsPolicy {
    /// Answers an `OPTIONS` preflight: judged against the service's rules, no credentials.
    static func preflight(_ request: TransportRequest, rules: [CorsRule]) -> TransportResponse {
        guard let origin = request.headers["Origin"], let method = request.headers["Access-Control-Request-Method"] else {
            return TransportResponse(status: 400, headers: HeaderFields([("x-ms-error-code", AzureStorageError.Code.invalidHeaderValue.rawValue)]))
        }
        let requested = (request.headers["Access-Control-Request-Headers"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        // The first rule whose origin and method match decides; no later rule is consulted.
        guard let rule = rules.first(where: { $0.allows(origin: origin) && $0.methods.contains(method.uppercased()) }),
            rule.allows(headers: requested)
        else {
            return TransportResponse(
                status: 403, headers: HeaderFields([("x-ms-error-code", AzureStorageError.Code.corsPreflightFailure.rawValue)]),
                body: Data("CORS not enabled or no matching rule found for this request.".utf8))
        }
        var headers = HeaderFields([
            ("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Methods", method.uppercased()),
            ("Access-Control-Max-Age", String(rule.maxAge)), ("Access-Control-Allow-Credentials", "true"),
        ])
        if !requested.isEmpty { headers["Access-Control-Allow-Headers"] = requested.joined(separator: ",") }
        return TransportResponse(status: 200, headers: headers)
    }

    /// Adds the CORS headers to the answer of an actual request, as Azure does (see docs/).
    static func decorate(_ response: inout TransportResponse, request: TransportRequest, rules: [CorsRule]) {
        guard !rules.isEmpty else { return }
        let readsVary = request.method == "GET" || request.method == "HEAD"
        let origin = request.headers["Origin"]
        let matching = rules.first { rule in
            rule.methods.contains(request.method) && (rule.origins.contains("*") || (origin.map { rule.origins.contains($0) } ?? false))
        }
        guard let rule = matching else {
            if readsVary { response.headers["Vary"] = "Origin" }
            return
        }
        if rule.origins.contains("*") {
            response.headers["Access-Control-Allow-Origin"] = "*"
        } else if let origin {
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Allow-Credentials"] = "true"
            if readsVary { response.headers["Vary"] = "Origin" }
        }
        if !rule.exposedHeaders.isEmpty { response.headers["Access-Control-Expose-Headers"] = rule.exposedHeaders.joined(separator: ",") }
    }
}
