import Foundation
import SeedKit

/// Where migration files come from, one rule for every command — `azseed migrate …` and the
/// seeding commands (`plan`, `apply`, `verify`, `reset`, whose desired state follows the
/// migrations the target has had): `--migrations`, else `migrations/` in `--dataset`, else
/// `./migrations` when there is one, else the default dataset's. Before, the seeding commands
/// skipped `./migrations`: a user's own migration applied from there left `plan` comparing the
/// target with the built-in dataset's file of the same version ("bytes have changed").
enum MigrationsFolder {
    static func resolve(migrations: String?, dataset: String?) throws -> URL {
        if let migrations { return URL(fileURLWithPath: migrations) }
        if let dataset { return URL(fileURLWithPath: dataset).appendingPathComponent("migrations") }
        return try local ?? DatasetLocator.defaultDataset().appendingPathComponent("migrations")
    }

    /// `./migrations`, when there is one: what a command given no `--dataset` uses.
    static var local: URL? {
        let local = URL(fileURLWithPath: "migrations")
        return FileManager.default.fileExists(atPath: local.path) ? local : nil
    }
}
