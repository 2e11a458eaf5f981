"""Small entities through a real emulator folder: N entities of ~80 bytes of JSON written with the
official SDK (transactions of 100), the emulator stopped (its WAL checkpointed), then storage.sqlite
beside the entities' JSON as `azseed export` writes it. Prints one line.

    python Benchmarks/python/small_entities.py AZSEED N
"""
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from azure.data.tables import TableServiceClient
from azure.storage.blob import BlobServiceClient

KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def main():
    azseed, count = sys.argv[1], int(sys.argv[2])
    with tempfile.TemporaryDirectory() as work:
        folder = os.path.join(work, "data")
        emulator = subprocess.Popen([azseed, "emulator", "--blob-port", "0", "--table-port", "0", "--data-dir", folder],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        blob = table = None
        while blob is None or table is None:
            line = emulator.stdout.readline()
            blob = (m := re.match(r"\s+blob:\s+(\S+)", line)) and m.group(1) or blob
            table = (m := re.match(r"\s+table:\s+(\S+)", line)) and m.group(1) or table
        cs = f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={KEY};BlobEndpoint={blob};TableEndpoint={table}"
        client = TableServiceClient.from_connection_string(cs).create_table("small")
        BlobServiceClient.from_connection_string(cs).create_container("small")  # export takes a container too
        chunks = [[("upsert", {"PartitionKey": f"p{(start // 100) % 100:03d}", "RowKey": f"{i:08d}", "Value": i, "Name": f"name-{i}"})
                   for i in range(start, min(start + 100, count))] for start in range(0, count, 100)]
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(client.submit_transaction, chunks))
        done = subprocess.run([azseed, "export", "--connection-string", cs, "--table", "small", "--container", "small", "--out", os.path.join(work, "snap")],
                              capture_output=True, text=True)
        emulator.terminate()
        emulator.wait()
        assert done.returncode == 0, done.stderr
        json_bytes = os.path.getsize(os.path.join(work, "snap", "tables", "small.jsonl"))
        db = os.path.getsize(os.path.join(folder, "storage.sqlite"))
        print(f"{count} small entities: JSON {json_bytes / 1e6:.1f} MB, storage.sqlite {db / 1e6:.1f} MB: {db / json_bytes:.2f}x")


if __name__ == "__main__":
    main()
