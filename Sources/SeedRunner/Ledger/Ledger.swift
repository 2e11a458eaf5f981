import AzureStorage
import Foundation
import SeedKit

/// azseed's ledger in a target: one table (``ReservedNames/ledgerTable``) of records about
/// what was done to the target, so that a later run can make the same desired state.
/// Datasets, snapshots, scans and copies never read or write it, and a plan's diff never
/// shows it.
public struct Ledger: Sendable {
    let tables: TableClient

    public init(tables: TableClient) { self.tables = tables }

    /// What reading or writing the ledger came to.
    public enum Access: Sendable {
        case available
        /// The credential cannot reach the ledger's table (a SAS scoped to other tables, or
        /// without the permission): why, in a few words.
        case unavailable(String)
    }

    /// The record of the latest apply of `dataset`; nil when there is none (or no ledger).
    /// A credential that cannot read the ledger's table gives `.unavailable`.
    public func applyRecord(dataset: String) async throws -> (ApplyRecord?, Access) {
        let entity: QueriedEntity?
        do {
            entity = try await tables.get(
                partitionKey: ApplyRecord.partition, rowKey: ApplyRecord.rowKey(dataset: dataset), from: ReservedNames.ledgerTable)
        } catch let error as AzureStorageError where error.status == 404 {
            return (nil, .available)  // no ledger table yet
        } catch let error as AzureStorageError where error.status == 403 && error.code != .authenticationFailed {
            // A credential scoped away from the ledger's table (a SAS for other tables): the run
            // goes on without it. A credential that fails to authenticate at all (a wrong key)
            // fails every request: that is the run's one error, not a note before it.
            return (nil, .unavailable(Self.refusal(error)))
        } catch {
            throw RunError.explaining(error, while: "reading azseed's ledger (table \(ReservedNames.ledgerTable))")
        }
        guard let entity else { return (nil, .available) }
        let record = try ApplyRecord(entity.entity)
        // Two names could share a key only through the digest form; the name itself decides.
        guard record.dataset.utf8.elementsEqual(dataset.utf8) else { return (nil, .available) }
        return (record, .available)
    }

    /// Records an apply, creating the ledger's table on first use.
    public func write(_ record: ApplyRecord) async throws -> Access {
        do {
            _ = try await tables.ensureTable(ReservedNames.ledgerTable)
            _ = try await tables.upsert(record.entity, into: ReservedNames.ledgerTable)
            return .available
        } catch let error as AzureStorageError where error.status == 403 {
            return .unavailable(Self.refusal(error))
        } catch {
            throw RunError.explaining(error, while: "recording the apply in azseed's ledger (table \(ReservedNames.ledgerTable))")
        }
    }

    private static func refusal(_ error: AzureStorageError) -> String {
        "the credential may not use table \(ReservedNames.ledgerTable): \(error.code?.rawValue ?? "403")"
    }
}
