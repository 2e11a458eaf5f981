import Foundation

/// Runs one piece of work per target, `parallel` at a time, each failure kept to its target:
/// the results in the targets' order.
public enum ManyTargets {
    public static func run<T: Sendable>(
        _ names: [String], parallel: Int, _ work: @escaping @Sendable (Int) async throws -> T
    ) async -> [(name: String, result: Result<T, any Error>)] {
        var results: [Result<T, any Error>?] = Array(repeating: nil, count: names.count)
        await withTaskGroup(of: (Int, Result<T, any Error>).self) { group in
            var next = 0
            func start() {
                let index = next
                next += 1
                group.addTask {
                    do { return (index, .success(try await work(index))) } catch { return (index, .failure(error)) }
                }
            }
            while next < names.count && next < max(1, parallel) { start() }
            while let (index, result) = await group.next() {
                results[index] = result
                if next < names.count { start() }
            }
        }
        return names.indices.map { (names[$0], results[$0]!) }
    }
}
