"""One client's Put Block Lists beside another client's small writes (issue 45, item 3).

Four clients each stage one 1 MiB block and commit a block list naming it REPEATS times (a
short body asking the emulator to write REPEATS MiB), all at once; meanwhile another client
uploads a 1 KiB blob and reads it back, again and again. Prints how long those small round
trips took while the commits ran (median, 99th percentile, worst), and before and after them.

    python Benchmarks/python/fairness.py CONNECTION_STRING [REPEATS]
"""
import statistics
import sys
import threading
import time

from azure.storage.blob import BlobBlock, BlobServiceClient


def main():
    service = BlobServiceClient.from_connection_string(sys.argv[1])
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    container = service.create_container("fairness")
    block = "YmxvY2stMA=="
    for i in range(4):
        container.get_blob_client(f"hostile-{i}").stage_block(block, b"\x07" * (1 << 20))

    def small(label, seconds=None, until=None):
        times = []
        started = time.monotonic()
        i = 0
        while (until is None and time.monotonic() - started < seconds) or (until is not None and not until.is_set()):
            blob = container.get_blob_client(f"small-{label}-{i}")
            t0 = time.monotonic()
            blob.upload_blob(b"\x01" * 1024, overwrite=True)
            blob.download_blob().readall()
            times.append(time.monotonic() - t0)
            i += 1
        return times

    def report(label, times):
        ms = sorted(t * 1000 for t in times)
        p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
        print(f"{label:<38} {len(ms):5d} round trips  median {statistics.median(ms):7.1f} ms  p99 {p99:7.1f} ms  worst {ms[-1]:7.1f} ms")

    report("1 KiB upload + read, alone", small("alone", seconds=2))
    done = threading.Event()
    commits = []

    def commit(i):
        t0 = time.monotonic()
        container.get_blob_client(f"hostile-{i}").commit_block_list([BlobBlock(block_id=block)] * repeats)
        commits.append(time.monotonic() - t0)

    threads = [threading.Thread(target=commit, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    watcher = threading.Thread(target=lambda: ([t.join() for t in threads], done.set()))
    watcher.start()
    during = small("during", until=done)
    watcher.join()
    report(f"same, beside 4 commits of {repeats} MiB", during)
    print(f"the 4 commits took {min(commits):.2f}-{max(commits):.2f} s "
          f"({4 * repeats / max(commits):.0f} MiB/s written in all)")


if __name__ == "__main__":
    main()
