// The protocol core is part of this library's API: EDM values, entities, errors, signing and the
// HTTP transport appear in the clients' signatures, so whoever imports AzureStorage sees them.
@_exported import StorageProtocol
