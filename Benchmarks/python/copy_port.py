"""Account-to-account copy written straight against the official Python SDKs: what a user
writes instead of `azseed copy`. Every container (with its access level) and blob — downloaded
and uploaded, since that is what the simple script does — and every table, queried page by
page and written with `submit_transaction` in chunks of 100 entities of one partition (the
limit of an entity group transaction) from `--threads N` threads.

Prints one JSON line: what was copied, how long it took and the rate.
"""
import argparse
import json
import time
from concurrent.futures import ThreadPoolExecutor
from itertools import groupby

from azure.data.tables import TableServiceClient, UpdateMode
from azure.storage.blob import BlobServiceClient, ContentSettings


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--from", dest="source", required=True)
    parser.add_argument("--to", dest="target", required=True)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    started = time.monotonic()
    blobs_from, blobs_to = (BlobServiceClient.from_connection_string(c) for c in (args.source, args.target))
    tables_from, tables_to = (TableServiceClient.from_connection_string(c) for c in (args.source, args.target))
    blob_count = blob_bytes = entities = 0
    with ThreadPoolExecutor(args.threads) as pool:
        for container in blobs_from.list_containers():
            source = blobs_from.get_container_client(container.name)
            access = source.get_container_access_policy()["public_access"]
            target = blobs_to.get_container_client(container.name)
            if not target.exists():
                target.create_container(public_access=access)

            def copy_blob(blob, source=source, target=target):
                data = source.download_blob(blob.name).readall()
                target.upload_blob(blob.name, data, overwrite=True,
                                   content_settings=ContentSettings(content_type=blob.content_settings.content_type))
                return len(data)

            for size in pool.map(copy_blob, list(source.list_blobs())):
                blob_count += 1
                blob_bytes += size
        for table in tables_from.list_tables():
            target = tables_to.create_table_if_not_exists(table.name)
            rows = tables_from.get_table_client(table.name).list_entities()
            chunks = []
            for _, partition in groupby(rows, key=lambda e: e["PartitionKey"]):
                chunk = []
                for entity in partition:
                    chunk.append(("upsert", entity, {"mode": UpdateMode.REPLACE}))
                    if len(chunk) == 100:
                        chunks.append(chunk)
                        chunk = []
                if chunk:
                    chunks.append(chunk)
            for done in pool.map(target.submit_transaction, chunks):
                entities += len(done)
    seconds = time.monotonic() - started
    print(json.dumps({"blobs": blob_count, "blobBytes": blob_bytes, "entities": entities, "seconds": round(seconds, 2),
                      "entitiesPerSecond": round(entities / seconds)}))


if __name__ == "__main__":
    main()
