import AzureStorage
import Foundation

/// One migration file, `V<version>__<description>.yaml`, read and validated in full.
public struct Migration: Sendable {
    public var version: MigrationVersion
    /// The `description:` inside the file.
    public var description: String
    /// The file's name (`V2__rename_location.yaml`).
    public var script: String
    /// The file, for messages.
    public var file: String
    /// SHA-256 of the file's bytes, hex: any change to them, a comment included, is a new
    /// checksum (as Flyway's is).
    public var checksum: String
    public var operations: [MigrationOperation]
    /// Where each operation is in the file and what its mapping acknowledges, by index; empty
    /// for a migration made in code (``source(of:)`` then says nothing is acknowledged).
    public var sources: [OperationSource] = []

    /// Where operation `index` is in the file and what its mapping acknowledges.
    public func source(of index: Int) -> OperationSource {
        sources.indices.contains(index) ? sources[index] : OperationSource(line: nil, allowsDestructive: false)
    }
}

/// Where an operation is in its migration file, and whether its mapping acknowledges that it
/// is destructive (`allow-destructive: true` beside its keys).
public struct OperationSource: Sendable, Equatable {
    /// The line of the operation's name in the file (1-based), when known.
    public var line: Int?
    public var allowsDestructive: Bool

    public init(line: Int?, allowsDestructive: Bool) {
        self.line = line
        self.allowsDestructive = allowsDestructive
    }
}

/// The migrations of a folder, in version order.
public struct MigrationSet: Sendable {
    public var folder: URL
    public var migrations: [Migration]

    /// `migrations` (in version order) as read from `folder`.
    public init(folder: URL, migrations: [Migration]) {
        self.folder = folder
        self.migrations = migrations
    }

    /// The most migration files a folder may hold, the most bytes one file may have, and the
    /// most operations in one: a migration folder can come from anyone who may commit to it.
    public static let maxMigrations = 10_000
    public static let maxFileBytes = 1 << 20
    public static let maxOperations = 200

    /// Reads every `V<version>__<description>.yaml` (or `.yml`) in `folder` and validates
    /// each in full; any other YAML file there is refused (a misnamed migration would be
    /// skipped without a word). Files with other extensions are ignored.
    public static func load(_ folder: URL) throws(DatasetError) -> MigrationSet {
        let shown = folder.relativePathForMessages
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw DatasetError(
                file: shown, line: nil,
                "no migrations folder here; create it, or name the folder that holds the V<version>__<description>.yaml files with \(Setting.migrationsFolder) (or the dataset folder holding migrations/ with \(Setting.dataset))"
            )
        }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: folder.path) } catch {
            throw DatasetError(file: shown, line: nil, "cannot list the folder (\(FileProblem.describe(error)))")
        }
        let yaml = names.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        guard yaml.count <= maxMigrations else {
            throw DatasetError(file: shown, line: nil, "\(yaml.count) YAML files; at most \(maxMigrations) migrations are read from one folder")
        }
        var migrations: [Migration] = []
        var byVersion: [MigrationVersion: String] = [:]
        for name in yaml {
            let url = folder.appendingPathComponent(name)
            let file = url.relativePathForMessages
            guard let (version, _) = parseName(name) else {
                throw DatasetError(
                    file: file, line: nil,
                    "not a migration file name; name it V<version>__<description>.yaml (version: an integer or dotted integers, e.g. V2__rename_location.yaml)"
                )
            }
            if let other = byVersion[version] {
                throw DatasetError(file: file, line: nil, "version \(version.canonical) is also \(other); give each migration its own version")
            }
            byVersion[version] = name
            migrations.append(try MigrationParser.read(url, version: version))
        }
        migrations.sort { $0.version < $1.version }
        return MigrationSet(folder: folder, migrations: migrations)
    }

    /// The version and description a file name holds; nil when it is not `V<version>__<description>.y(a)ml`.
    public static func parseName(_ name: String) -> (MigrationVersion, String)? {
        guard name.hasPrefix("V") else { return nil }
        let stem = name.hasSuffix(".yaml") ? name.dropLast(5) : name.hasSuffix(".yml") ? name.dropLast(4) : nil
        guard let stem, let separator = stem.range(of: "__") else { return nil }
        let versionText = String(stem[stem.index(after: stem.startIndex)..<separator.lowerBound])
        let description = String(stem[separator.upperBound...])
        guard let version = MigrationVersion(versionText), !description.isEmpty else { return nil }
        return (version, description.replacingOccurrences(of: "_", with: " "))
    }
}
