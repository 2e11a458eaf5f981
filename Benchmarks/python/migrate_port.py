"""The hand-written migration azseed replaces: rename property Place to Venue across a table with
the official azure-data-tables SDK — list every entity, and write the changed ones back in
`submit_transaction` batches of 100 per partition, each an update conditional on the ETag read
(so it is as safe as azseed's against concurrent writers). It records nothing, cannot resume,
has no dry run and takes no lock; `--threads N` sends batches from N threads.

Prints one JSON line: how many entities it changed, how long it took and the rate.
"""
import argparse
import json
import time
from concurrent.futures import ThreadPoolExecutor

from azure.core import MatchConditions
from azure.data.tables import TableServiceClient, UpdateMode


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--connection-string", required=True)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    started = time.monotonic()
    table = TableServiceClient.from_connection_string(args.connection_string).get_table_client("events")
    batches, current = [], []
    for entity in table.list_entities():
        if "Place" not in entity:
            continue
        changed = dict(entity)
        changed["Venue"] = changed.pop("Place")
        if current and current[0][1]["PartitionKey"] != entity["PartitionKey"] or len(current) == 100:
            batches.append(current)
            current = []
        current.append(("update", changed, {"mode": UpdateMode.REPLACE, "etag": entity.metadata["etag"], "match_condition": MatchConditions.IfNotModified}))
    if current:
        batches.append(current)
    with ThreadPoolExecutor(args.threads) as pool:
        list(pool.map(table.submit_transaction, batches))
    seconds = time.monotonic() - started
    changed = sum(len(b) for b in batches)
    print(json.dumps({"changed": changed, "seconds": round(seconds, 2), "rate": round(changed / seconds)}))


if __name__ == "__main__":
    main()
