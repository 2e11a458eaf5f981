/// Names azseed keeps for itself in a target.
public enum ReservedNames {
    /// The table of azseed's ledger: what each apply was made from (``ledgerTable`` holds
    /// other records later, such as migration history).
    public static let ledgerTable = "azseedledger"

    /// Why a dataset, snapshot, export, scan or copy may not name the table `name`; nil when
    /// it may. Table names are compared as Azure does, without regard to case.
    public static func tableProblem(_ name: String) -> String? {
        guard name.lowercased() == ledgerTable else { return nil }
        return "'\(ledgerTable)' is azseed's ledger of applies, kept out of datasets, snapshots, scans and copies"
    }

    /// Whether `name` is the ledger's table: left out when every table is listed.
    public static func isLedger(_ name: String) -> Bool { name.lowercased() == ledgerTable }
}
