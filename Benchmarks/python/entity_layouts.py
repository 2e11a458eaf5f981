"""How much disk an emulator table takes under different SQLite layouts, measured on the same
entities: the choice behind StorageEmulator's `entities` table (Benchmarks/RESULTS.md, issue 21).

Reads a snapshot table file (`tables/<t>.jsonl`, one entity's JSON a line, as `azseed generate`
or `export` writes it), optionally repeated with fresh RowKeys up to --count entities, or makes
small entities (--small N, ~78 bytes of JSON) or large ones (--large N, ~20 KB). Each layout is built in a fresh file with the system SQLite — the
library the emulator links — in transactions of 100 rows (an entity group transaction), then
read back a partition at a time in pages of 1,000 in key order (a query). Prints one JSON line
per layout: file bytes, file bytes / JSON bytes, ingest and query seconds.
"""
import argparse
import json
import os
import sqlite3
import tempfile
import time
import zlib

LAYOUTS = {
    # name: (page size, schema, body transform)
    "without-rowid-4k (before)": (4096, "CREATE TABLE entities (tableKey TEXT NOT NULL, pk TEXT NOT NULL, rk TEXT NOT NULL, timestamp INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (tableKey, pk, rk)) WITHOUT ROWID", "json"),
    "without-rowid-16k": (16384, "CREATE TABLE entities (tableKey TEXT NOT NULL, pk TEXT NOT NULL, rk TEXT NOT NULL, timestamp INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (tableKey, pk, rk)) WITHOUT ROWID", "json"),
    "without-rowid-64k": (65536, "CREATE TABLE entities (tableKey TEXT NOT NULL, pk TEXT NOT NULL, rk TEXT NOT NULL, timestamp INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (tableKey, pk, rk)) WITHOUT ROWID", "json"),
    "rowid+index-4k": (4096, "CREATE TABLE entities (id INTEGER PRIMARY KEY, tableKey TEXT NOT NULL, pk TEXT NOT NULL, rk TEXT NOT NULL, timestamp INTEGER NOT NULL, body BLOB NOT NULL); CREATE UNIQUE INDEX entities_key ON entities (tableKey, pk, rk)", "json"),
    "rowid+index-4k, body without keys": (4096, "CREATE TABLE entities (id INTEGER PRIMARY KEY, tableKey TEXT NOT NULL, pk TEXT NOT NULL, rk TEXT NOT NULL, timestamp INTEGER NOT NULL, body BLOB NOT NULL); CREATE UNIQUE INDEX entities_key ON entities (tableKey, pk, rk)", "nokeys"),
    "rowid+index-16k": (16384, "CREATE TABLE entities (id INTEGER PRIMARY KEY, tableKey TEXT NOT NULL, pk TEXT NOT NULL, rk TEXT NOT NULL, timestamp INTEGER NOT NULL, body BLOB NOT NULL); CREATE UNIQUE INDEX entities_key ON entities (tableKey, pk, rk)", "json"),
    "rowid+index-4k, zlib body": (4096, "CREATE TABLE entities (id INTEGER PRIMARY KEY, tableKey TEXT NOT NULL, pk TEXT NOT NULL, rk TEXT NOT NULL, timestamp INTEGER NOT NULL, body BLOB NOT NULL); CREATE UNIQUE INDEX entities_key ON entities (tableKey, pk, rk)", "zlib"),
    "without-rowid-16k, body without keys": (16384, "CREATE TABLE entities (tableKey TEXT NOT NULL, pk TEXT NOT NULL, rk TEXT NOT NULL, timestamp INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (tableKey, pk, rk)) WITHOUT ROWID", "nokeys"),
}


def entities(args):
    if args.large:
        for i in range(args.large):
            entity = {"PartitionKey": f"p{i % 10}", "RowKey": f"{i:08d}", "Notes": ("lorem ipsum dolor sit amet " * 800)[:20000] + str(i)}
            yield json.dumps(entity, separators=(",", ":")).encode()
        return
    if args.small:
        for i in range(args.small):
            entity = {"PartitionKey": f"p{i % 100:03d}", "RowKey": f"{i:08d}", "Value": i, "Name": f"name-{i}"}
            yield json.dumps(entity, separators=(",", ":")).encode()
        return
    with open(args.jsonl, "rb") as f:
        lines = [line.rstrip(b"\n") for line in f if line.strip()]
    made = 0
    round_ = 0
    while made < (args.count or len(lines)):
        for line in lines:
            if made >= (args.count or len(lines)):
                break
            if round_:
                entity = json.loads(line)
                entity["RowKey"] = f"{round_:04d}-{entity['RowKey']}"
                line = json.dumps(entity, separators=(",", ":"), ensure_ascii=False).encode()
            made += 1
            yield line
        round_ += 1


def body(line, kind):
    if kind == "json":
        return line
    entity = json.loads(line)
    if kind == "nokeys":
        del entity["PartitionKey"], entity["RowKey"]
        return json.dumps(entity, separators=(",", ":"), ensure_ascii=False).encode()
    return zlib.compress(line, 6)


def measure(name, page, schema, kind, rows, folder):
    path = os.path.join(folder, "layout.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(f"PRAGMA page_size = {page}")
    db.execute("PRAGMA journal_mode = WAL")
    db.executescript(schema)
    started = time.monotonic()
    for i in range(0, len(rows), 100):
        db.execute("BEGIN")
        for pk, rk, line in rows[i:i + 100]:
            db.execute("INSERT OR REPLACE INTO entities (tableKey, pk, rk, timestamp, body) VALUES (?, ?, ?, ?, ?)",
                       ("events", pk, rk, 638_000_000_000_000_000 + i, body(line, kind)))
        db.execute("COMMIT")
    ingest = time.monotonic() - started
    json_bytes = sum(len(line) + 1 for _, _, line in rows)
    started = time.monotonic()
    read = 0
    for (pk,) in db.execute("SELECT DISTINCT pk FROM entities WHERE tableKey = 'events'").fetchall():
        after = ""
        while True:
            page_rows = db.execute("SELECT rk, timestamp, body FROM entities WHERE tableKey = ? AND pk = ? AND rk > ? ORDER BY pk, rk LIMIT 1000",
                                   ("events", pk, after)).fetchall()
            if not page_rows:
                break
            read += len(page_rows)
            after = page_rows[-1][0]
    query = time.monotonic() - started
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    size = os.path.getsize(path)
    print(json.dumps({"layout": name, "entities": len(rows), "jsonBytes": json_bytes, "fileBytes": size,
                      "ratio": round(size / json_bytes, 2), "ingestSeconds": round(ingest, 2), "querySeconds": round(query, 2), "read": read}), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jsonl")
    parser.add_argument("--count", type=int)
    parser.add_argument("--small", type=int)
    parser.add_argument("--large", type=int)
    parser.add_argument("--layouts", nargs="*")
    args = parser.parse_args()
    rows = []
    for line in entities(args):
        entity = json.loads(line)
        rows.append((entity["PartitionKey"], entity["RowKey"], line))
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as folder:
        for name, (page, schema, kind) in LAYOUTS.items():
            if args.layouts and name not in args.layouts:
                continue
            measure(name, page, schema, kind, rows, folder)


if __name__ == "__main__":
    main()
