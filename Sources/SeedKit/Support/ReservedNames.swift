/// Names azseed keeps for itself in a target.
public enum ReservedNames {
    /// The table of azseed's ledger: what each apply was made from, and the migration history.
    public static let ledgerTable = "azseedledger"
    /// The container of azseed's own blobs (the migrate lock), named as the ledger is.
    public static let ledgerContainer = "azseedledger"

    /// Why a dataset, snapshot, export, scan or copy may not name the table `name`; nil when
    /// it may. Table names are compared as Azure does, without regard to case.
    public static func tableProblem(_ name: String) -> String? {
        guard name.lowercased() == ledgerTable else { return nil }
        return "'\(ledgerTable)' is azseed's ledger of applies, kept out of datasets, snapshots, scans and copies"
    }

    /// Why a dataset, snapshot, export, scan or copy may not name the container `name`.
    public static func containerProblem(_ name: String) -> String? {
        guard name.utf8.elementsEqual(ledgerContainer.utf8) else { return nil }
        return "'\(ledgerContainer)' is azseed's own container (the migrate lock), kept out of datasets, snapshots, scans and copies"
    }

    /// Whether `name` is the ledger's table: left out when every table is listed.
    public static func isLedger(_ name: String) -> Bool { name.lowercased() == ledgerTable }

    /// Whether `name` is azseed's container: left out when every container is listed.
    public static func isLedgerContainer(_ name: String) -> Bool { name.utf8.elementsEqual(ledgerContainer.utf8) }
}
