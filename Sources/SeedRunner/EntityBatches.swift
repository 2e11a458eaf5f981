import AzureStorage
import SeedKit

/// Splits entity actions into entity group transactions: one partition each, at most 100
/// operations and comfortably under the 4 MiB body limit.
enum EntityBatches {
    /// Headroom for each operation's MIME headers and request line inside the batch body.
    static let perOperationOverhead = 512
    /// The body budget: 4 MiB less room for the batch's own framing.
    static let bodyBudget = TableBatchCodec.maxBodyBytes - 64 * 1024

    static func make(_ actions: [EntityAction]) -> [[TableBatchOperation]] {
        // Partitions by bytes: two keys Azure tells apart never share a batch.
        var byPartition: [ExactString: [TableBatchOperation]] = [:]
        var order: [ExactString] = []
        for action in actions {
            guard let op = operation(action) else { continue }
            let partition = ExactString(action.partitionKey)
            if byPartition[partition] == nil { order.append(partition) }
            byPartition[partition, default: []].append(op)
        }
        var batches: [[TableBatchOperation]] = []
        for partition in order {
            var current: [TableBatchOperation] = []
            var bytes = 0
            for op in byPartition[partition]! {
                let size = estimatedSize(op)
                if !current.isEmpty && (current.count == TableBatchCodec.maxOperations || bytes + size > bodyBudget) {
                    batches.append(current)
                    current = []
                    bytes = 0
                }
                current.append(op)
                bytes += size
            }
            if !current.isEmpty { batches.append(current) }
        }
        return batches
    }

    /// Inserts where the plan knows the entity is absent; for updates, whole-entity replaces
    /// (the entity must end up exactly as the dataset says) and deletes, each only over the
    /// entity the plan read (`If-Match` its ETag): one someone else wrote since is never
    /// replaced or deleted. An entity read without an ETag is written unconditionally.
    static func operation(_ action: EntityAction) -> TableBatchOperation? {
        switch action.change {
        case .create: return action.entity.map(TableBatchOperation.insert)
        case .update:
            guard let entity = action.entity else { return nil }
            return action.etag.map { .update(entity, etag: $0) } ?? .upsertReplace(entity)
        case .delete: return .delete(partitionKey: action.partitionKey, rowKey: action.rowKey, etag: action.etag ?? "*")
        case .unchanged: return nil
        }
    }

    static func estimatedSize(_ op: TableBatchOperation) -> Int {
        switch op {
        case .insert(let e), .upsertReplace(let e), .upsertMerge(let e), .update(let e, _), .merge(let e, _):
            return EntityJSONEncoder.encodedLengthBound(e) + perOperationOverhead + 2 * (e.partitionKey.utf8.count + e.rowKey.utf8.count)
        case .delete(let pk, let rk, _):
            return perOperationOverhead + 3 * (pk.utf8.count + rk.utf8.count)
        }
    }
}
