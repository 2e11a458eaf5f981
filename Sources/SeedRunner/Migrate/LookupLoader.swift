import AzureStorage
import Foundation
import SeedKit

/// Reads a `lookup` step's table before the step runs: its keys and the one property, at most
/// ``LookupValues/maxEntities`` entities.
enum LookupLoader {
    /// `step` with its lookup's table read from the target (unchanged when it is no lookup).
    static func prepared(_ step: EntityStep, tables: TableClient) async throws -> EntityStep {
        guard let spec = step.lookup else { return step }
        var entries: [(partitionKey: String, rowKey: String, value: EdmValue)] = []
        do {
            for try await page in tables.query(spec.fromTable, select: ["PartitionKey", "RowKey", spec.property], fullMetadata: true) {
                for queried in page {
                    if let value = queried.entity[spec.property] { entries.append((queried.entity.partitionKey, queried.entity.rowKey, value)) }
                }
                try check(entries.count, spec)
            }
        } catch let error as AzureStorageError where error.status == 404 && error.operation == "Query Entities" {
            throw RunError("lookup: table \(spec.fromTable) does not exist; create it first or name the right table")
        } catch let error as RunError {
            throw error
        } catch {
            throw RunError.explaining(error, while: "reading table \(spec.fromTable) for lookup")
        }
        return step.withLookup(LookupValues(entries))
    }

    /// The migrations with each lookup whose table the dataset does not hold read from the
    /// target (as the target holds it now): the seeding commands' desired state
    /// (``DesiredStorage/migrated(by:)``) reads the dataset's own tables itself.
    static func prepared(_ migrations: [Migration], outside desired: DesiredStorage, tables: TableClient) async throws -> [Migration] {
        var out: [Migration] = []
        for var migration in migrations {
            for (i, operation) in migration.operations.enumerated() {
                guard case .entities(let step) = operation, let spec = step.lookup,
                    !desired.tables.contains(where: { $0.name.lowercased() == spec.fromTable.lowercased() })
                else { continue }
                migration.operations[i] = .entities(try await prepared(step, tables: tables))
            }
            out.append(migration)
        }
        return out
    }

    static func check(_ count: Int, _ spec: LookupSpec) throws {
        guard count <= LookupValues.maxEntities else {
            throw RunError(
                "lookup: table \(spec.fromTable) holds more than \(LookupValues.maxEntities) entities with \(spec.property); a lookup reads its table whole, so it is refused — use a smaller table"
            )
        }
    }
}
