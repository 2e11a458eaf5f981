import AzureStorage
import Foundation
import SeedKit

/// What `generate` wrote.
public struct GeneratedFixture: Sendable {
    public var dataset: String
    public var seed: UInt64
    public var window: ResolvedWindow
    public var summary: SnapshotSummary
    /// Seconds spent writing (generation included).
    public var seconds: Double
}

/// Writes a dataset as a snapshot folder with no storage at all (`azseed generate`): the
/// fixture a test loads, byte-identical for the same inputs. The folder must not overlap the
/// dataset's own folders. Loading, generating and writing block: on the blocking threads.
public func generateFixture(_ request: DatasetRequest, blobEndpoint: String, to folder: URL, force: Bool) async throws -> GeneratedFixture {
    let endpoint = blobEndpoint.hasSuffix("/") ? String(blobEndpoint.dropLast()) : blobEndpoint
    let options = request.options(blobEndpoint: endpoint)
    let directory = request.directory
    return try await BlockingPool.run {
        let dataset = try Dataset.load(directory: directory)
        try FolderOverlap.check(output: folder, inputs: dataset.inputFolders)
        try FolderOverlap.checkNoDataFolder(output: folder)
        let state = try GeneratedDataset.make(dataset, options: options)
        let started = Date()
        let summary = try SnapshotWriter.write(state, to: folder, force: force)
        return GeneratedFixture(
            dataset: dataset.name, seed: state.seed, window: state.window, summary: summary, seconds: Date().timeIntervalSince(started))
    }
}
