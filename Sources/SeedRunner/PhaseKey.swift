import AzureStorage
import SeedKit

/// An apply's entity phase: a table's kind, or its deletes.
struct PhaseKey: Hashable {
    var table: ExactString
    var kind: ExactString?
    var deletes: Bool

    init(table: String, kind: String?, deletes: Bool) {
        self.table = ExactString(table)
        self.kind = kind.map { ExactString($0) }
        self.deletes = deletes
    }

    init(_ action: EntityAction) { self.init(table: action.table, kind: action.kind, deletes: action.change == .delete) }

    /// "events/Event", "events deletes", or a snapshot's table.
    var name: String { deletes ? "\(table.string) deletes" : kind.map { "\(table.string)/\($0.string)" } ?? table.string }
}
