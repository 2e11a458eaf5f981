import Foundation

/// Something that obtains Microsoft Entra ID access tokens: a service principal's secret or
/// certificate, a federated workload identity, a managed identity, the Azure CLI's sign-in —
/// or ``DefaultAzureCredential``, the first of those that is configured.
public protocol TokenCredential: Sendable {
    /// What it is, for messages ("environment (client secret)", "Azure CLI").
    var name: String { get }
    /// A token for `scope` (`https://storage.azure.com/.default`). Throws
    /// ``AzureStorageError`` of kind ``AzureStorageError/Kind/credential``; a credential that
    /// is not set up on this machine throws ``CredentialUnavailable`` so a chain can go on.
    func token(scope: String) async throws -> AccessToken
}

/// A credential that cannot be used here at all (nothing configured, no `az` on `PATH`, no
/// managed identity endpoint): ``DefaultAzureCredential`` tries the next one.
public struct CredentialUnavailable: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension AzureStorageError {
    /// A credential that is set up but could not get a token.
    static func credential(_ name: String, url: String = "", status: Int? = nil, _ message: String) -> AzureStorageError {
        AzureStorageError(
            kind: .credential, operation: "Get a token (\(name))", url: url, status: status,
            message: SecretRedaction.redact(message))
    }
}

/// The scope of Azure Storage's data plane, and the resource managed identity and the CLI
/// take (the scope without `/.default`).
public enum StorageScope {
    public static let `default` = "https://storage.azure.com/.default"

    static func resource(of scope: String) -> String {
        scope.hasSuffix("/.default") ? String(scope.dropLast("/.default".count)) : scope
    }
}
