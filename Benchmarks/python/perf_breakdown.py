"""Sums `perf script` call stacks (leaf first, demangled, stacks separated by blank lines) under
the functions that name where a migration's time goes, in CPU seconds at 199 samples/s. A
sample counts once for each function on its stack, so the rows overlap where one calls another.
Usage: perf script ... | swift demangle --simplified | perf_breakdown.py emulator|client"""
import sys

ROWS = {
    "emulator": [
        ("reading $batch bodies", "BatchRequestParser.parse"),
        ("entity paths", "TableResource.parse"),
        ("request bodies (entity JSON, rules)", "TableService.operation(method"),
        ("$batch responses", "batchResponse"),
        ("the writes (writer thread)", "GroupCommit.run()"),
        ("query pages", "queryEntities"),
        ("SQLite reads", "BlockingPool.work()"),
        ("NIO event loops", "SelectableEventLoop.run()"),
        ("authentication", "authenticate"),
    ],
    "client": [
        ("reading query pages", "TableQuery.AsyncIterator.next()"),
        ("the undo check", "UndoCheck.conflicts"),
        ("submitting batches", "TableClient.submit(_:to:entitiesChecked:)"),
        ("  encoding", "TableBatchCodec.encode"),
        ("  reading answers", "TableBatchCodec.decodeResponse"),
        ("curl's thread", "CurlEventLoop"),
    ],
}
RATE = 199

stacks = [block for block in sys.stdin.read().split("\n\n") if block.strip()]
print(f"  {'total':<40} {len(stacks) / RATE:6.2f} s")
for label, needle in ROWS[sys.argv[1]]:
    count = sum(1 for block in stacks if needle in block)
    print(f"  {label:<40} {count / RATE:6.2f} s  {100 * count / max(len(stacks), 1):5.1f} %")
