"""Append Block beside Put Block (issue 46): the same bytes, the same block size, one client
uploading one block at a time, through the official Python SDK.

    python append_blocks.py CONNECTION_STRING TOTAL_MIB BLOCK_MIB

Prints MiB/s for each way and the ratio append / put block."""
import os
import sys
import time
import uuid

from azure.storage.blob import BlobBlock, BlobServiceClient

connection, total_mib, block_mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
service = BlobServiceClient.from_connection_string(connection, max_single_put_size=64 << 20)
container = service.create_container("bench" + uuid.uuid4().hex[:8])
block = os.urandom(block_mib << 20)
count = total_mib // block_mib


def appended():
    blob = container.get_blob_client("appended")
    blob.create_append_blob()
    started = time.monotonic()
    for _ in range(count):
        blob.append_block(block)
    seconds = time.monotonic() - started
    assert blob.get_blob_properties().size == count * len(block)
    return seconds


def staged():
    blob = container.get_blob_client("staged")
    started = time.monotonic()
    ids = []
    for i in range(count):
        ids.append(BlobBlock(block_id=f"{i:08d}"))
        blob.stage_block(ids[-1].id, block)
    blob.commit_block_list(ids)
    seconds = time.monotonic() - started
    assert blob.get_blob_properties().size == count * len(block)
    return seconds


# One of each first (warm-up), then measured in turn.
staged(), appended()
put = min(staged() for _ in range(2))
append = min(appended() for _ in range(2))
print(f"put block + list   {total_mib} MiB in {block_mib} MiB blocks: {put:6.2f} s  {total_mib / put:7.1f} MiB/s")
print(f"append block       {total_mib} MiB in {block_mib} MiB blocks: {append:6.2f} s  {total_mib / append:7.1f} MiB/s")
print(f"append / put block rate: {put / append:.2f}")
