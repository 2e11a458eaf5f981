"""The original SpeakEasyStorageSetup program, ported straight to the official Python SDKs.

The peer azseed is measured against (Benchmarks/compare.sh): the same steps as the C#
program — create the public `speakers` container and upload the photos, create the `events`
table, insert the speakers, then generate random events and insert them — with
azure-storage-blob uploads and azure-data-tables `submit_transaction` in chunks of 100 (the
limit of an entity group transaction). `--threads N` sends the chunks (and uploads) from N
threads, as a user would speed the port up.

Two deliberate departures from the C# original, both in the port's favour: the duplicate
check uses a set instead of scanning the list (the original's check is quadratic and
compares EventLocation with itself), and the event count and image folder are parameters.

Prints one JSON line: what was done, how long it took and the rate.
"""
import argparse
import datetime
import json
import os
import random
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from azure.core.exceptions import ResourceExistsError
from azure.data.tables import TableServiceClient
from azure.storage.blob import BlobServiceClient, ContentSettings

NAMES = ["Bart Tubalinal", "Bert Johnson", "Travis Nielsen", "Matt Morse", "Mo Omar", "Darya Orlova", "Callie Jones", "Ela Gardner"]
TITLES = ["Solutions Architect", "Solutions Architect", "Principal Consultant", "Practice Manager",
          "Principal Consultant", "Consultant", "Consultant", "Consultant"]
IMAGES = ["BTubalinal.jpg", "BJohnson.jpg", "TNielsen.jpg", "MMorse.jpg", "MOmar.jpg", "DOrlova.jpg", "CJones.jpg", "EGardner.jpg"]
EVENT_NAMES = ["Mobile Mondays", "iOS Meetup", "Windows Phone Meetup", "Android Meetup", "HTML5 Meetup", "SharePoint Saturdays"]
LOCATIONS = ["Chicago, IL", "Milwaukee, WI", "Madison, WI", "Boston, MA", "Washington, DC", "Los Angeles, CA",
             "Las Vegas, NV", "New York City, NY"]
DESCRIPTION = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit. In commodo fermentum adipiscing. Maecenas id "
               "dolor velit, sit amet commodo ipsum. Cras lacus dui, bibendum et commodo at, scelerisque ac enim. Mauris "
               "nec purus ante. Vestibulum ante ipsum primis in faucibus orci luctus et ultrices posuere cubilia Curae; "
               "Praesent ut lobortis lorem. Nullam tempor, erat dignissim sodales blandit, turpis velit fringilla augue, "
               "posuere ultricies augue augue quis quam. Quisque sed felis augue. Nam sit amet enim tortor. Aenean ut "
               "fringilla leo. Phasellus tincidunt turpis ut diam dictum id ullamcorper nunc faucibus. Nunc semper dapibus "
               "orci sit amet suscipit. Maecenas viverra est volutpat lectus lacinia suscipit. Nullam sapien elit, "
               "fermentum et pretium vitae, sodales quis eros. Ut et nulla urna. Nunc congue viverra nisi, eget porta est "
               "lobortis non. Cras in turpis urna, sed porta ipsum. In suscipit purus a nibh facilisis eget pharetra odio "
               "rhoncus. Morbi faucibus blandit mattis.")


def upload_images(blob_service, container, folder, threads):
    """Creates the public container and uploads every file of `folder`; returns (files, bytes)."""
    client = blob_service.get_container_client(container)
    try:
        client.create_container(public_access="container")
    except ResourceExistsError:
        pass
    names = sorted(n for n in os.listdir(folder) if n.endswith(".jpg"))

    def upload(name):
        with open(os.path.join(folder, name), "rb") as f:
            data = f.read()
        client.upload_blob(name, data, overwrite=True, content_settings=ContentSettings(content_type="image/jpeg"))
        return len(data)

    if threads > 1:
        with ThreadPoolExecutor(threads) as pool:
            sizes = list(pool.map(upload, names))
    else:
        sizes = [upload(n) for n in names]
    return len(names), sum(sizes)


def make_events(count, speakers, rng, start, end):
    """Random events as the original makes them (a set stands in for its quadratic check)."""
    seen, events = set(), []
    span = (end - start).total_seconds()
    while len(events) < count:
        name = EVENT_NAMES[rng.randrange(len(EVENT_NAMES))]
        location = LOCATIONS[rng.randrange(len(LOCATIONS))]
        speaker = speakers[rng.randrange(len(speakers))]
        date = start + datetime.timedelta(seconds=int(span * rng.random()))
        key = (name, location, speaker["RowKey"], date)
        if key in seen:
            continue
        seen.add(key)
        events.append({
            "PartitionKey": "Events", "RowKey": str(uuid.uuid4()), "EventDate": date, "EventName": name,
            "EventLocation": location, "EventDescription": f"{name} in {location} with {speaker['Name']}. {DESCRIPTION}",
            "SpeakerKey": speaker["RowKey"], "SpeakerName": speaker["Name"],
        })
    return events


def insert_chunks(table_service, table, entities, threads):
    """submit_transaction in chunks of 100, from `threads` threads."""
    chunks = [entities[i:i + 100] for i in range(0, len(entities), 100)]

    def send(chunk):
        table_service.get_table_client(table).submit_transaction([("create", e) for e in chunk])

    if threads > 1:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(send, chunks))
    else:
        for chunk in chunks:
            send(chunk)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connection-string", default=os.environ.get("AZURE_STORAGE_CONNECTION_STRING"))
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--images", required=True, help="the folder of .jpg files to upload")
    parser.add_argument("--container", default="speakers")
    parser.add_argument("--only", choices=["all", "blobs", "tables"], default="all")
    args = parser.parse_args()
    if not args.connection_string:
        sys.exit("speakeasy_port: give --connection-string or set AZURE_STORAGE_CONNECTION_STRING")

    blob_service = BlobServiceClient.from_connection_string(args.connection_string)
    table_service = TableServiceClient.from_connection_string(args.connection_string)
    result = {"port": "python-sdk", "threads": args.threads}
    started = time.perf_counter()
    if args.only in ("all", "blobs"):
        t = time.perf_counter()
        files, size = upload_images(blob_service, args.container, args.images, args.threads)
        seconds = time.perf_counter() - t
        result.update(blobs=files, blobBytes=size, blobSeconds=round(seconds, 3), blobsPerSecond=round(files / seconds, 1))
    if args.only in ("all", "tables"):
        t = time.perf_counter()
        try:
            table_service.create_table("events")
        except ResourceExistsError:
            pass
        base = blob_service.get_container_client(args.container).url
        speakers = [{"PartitionKey": "speakers", "RowKey": str(uuid.uuid4()), "Name": n, "Title": t_,
                     "Bio": f"{n} is a {t_} in the {DESCRIPTION}", "ImageUrl": f"{base}/{img}"}
                    for n, t_, img in zip(NAMES, TITLES, IMAGES)]
        table_service.get_table_client("events").submit_transaction([("create", s) for s in speakers])
        rng = random.Random(2012)
        start = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
        events = make_events(args.events, speakers, rng, start, start + datetime.timedelta(days=365))
        insert_chunks(table_service, "events", events, args.threads)
        seconds = time.perf_counter() - t
        entities = len(speakers) + len(events)
        result.update(entities=entities, entitySeconds=round(seconds, 3), entitiesPerSecond=round(entities / seconds, 1))
    result["seconds"] = round(time.perf_counter() - started, 3)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
