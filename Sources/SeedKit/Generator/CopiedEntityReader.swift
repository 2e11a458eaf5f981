import AzureStorage
import Foundation

/// Reads a copied kind's file (`entities: FILE`) a line at a time, each line checked as Azure
/// would check the entity and against the kind's partition; a line that fails is one error
/// naming `file:line`. Reads the file: call it from a thread that may block.
enum CopiedEntityReader {
    /// Calls `body` with each entity and its line number, up to line `last` when given.
    static func forEach(
        _ file: URL, kind spec: KindSpec, upTo last: Int? = nil, _ body: (TableEntity, Int) throws(GenerationError) -> Void
    ) throws(GenerationError) {
        let place = file.relativePathForMessages
        do {
            try LineReader(url: file).forEachLine { bytes, line in
                if let last, line > last { return }
                guard line <= KindEngine.maxEntities else {
                    throw GenerationError(
                        usage: true, "\(place):\(line): kind '\(spec.name)' copies more than \(KindEngine.maxEntities) entities; split the file")
                }
                try body(try entity(bytes, at: line, in: place, kind: spec), line)
            }
        } catch let error as GenerationError {
            throw error
        } catch let error as LineTooLong {
            throw GenerationError("\(place):\(error.line): \(error.description.dropFirst("line \(error.line) ".count)); a copied entity is one line")
        } catch {
            throw GenerationError("kind '\(spec.name)', entities \(place): cannot be read (\(FileProblem.describe(error)))")
        }
    }

    /// One line as an entity of the kind, or the error naming it.
    static func entity(_ bytes: [UInt8], at line: Int, in place: String, kind spec: KindSpec) throws(GenerationError) -> TableEntity {
        let entity: TableEntity
        do { entity = try EntityJSONReader.entity(bytes).entity } catch {
            throw GenerationError("\(place):\(line): not an entity (\(error)); each line is one entity in OData JSON")
        }
        guard entity.partitionKey.isExactly(spec.partition) else {
            throw GenerationError(
                "\(place):\(line): the entity's PartitionKey is '\(Printable.escaped(entity.partitionKey, quotes: false))', not '\(Printable.escaped(spec.partition, quotes: false))', the partition of kind '\(spec.name)'"
            )
        }
        if let problem = StorageNames.entityProblem(entity) { throw GenerationError("\(place):\(line): the entity \(problem)") }
        return entity
    }

    static func twice(_ rowKey: String, at line: Int, first: Int, file: URL) -> GenerationError {
        GenerationError(
            "\(file.relativePathForMessages):\(line): RowKey '\(Printable.escaped(rowKey, quotes: false))' is copied twice (first at line \(first))")
    }

    /// The entity in the generator's form: names in byte order, values aligned.
    static func generated(_ entity: TableEntity) -> GeneratedEntity {
        let names = entity.properties.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return GeneratedEntity(partitionKey: entity.partitionKey, rowKey: entity.rowKey, names: names, values: names.map { entity.properties[$0]! })
    }
}

/// A copied kind's entities from its file, in order, a line at a time (``SnapshotTableCursor``
/// reads the lines; each is checked again, as the file could have changed since).
struct CopiedEntityCursor: EntityCursor {
    var lines: SnapshotTableCursor
    let spec: KindSpec

    mutating func next() async throws -> TableEntity? {
        guard let entity = try await lines.next() else { return nil }
        guard entity.partitionKey.isExactly(spec.partition), StorageNames.entityProblem(entity) == nil else {
            throw GenerationError("kind '\(spec.name)': its entities file changed while it was read; run again")
        }
        return entity
    }
}
