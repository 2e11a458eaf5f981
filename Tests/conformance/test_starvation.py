"""The concurrency core's regression guard: `azseed apply` on the embedded storage (what
`make seed` runs) must be faster at the default --concurrency than at --concurrency 1.

It was 6x slower: the transport blocked a Dispatch thread per request in flight, and the
in-process emulator's database writer queued behind them until libdispatch added a thread,
about one a second (7.1 s for 118 entities). The guard asserts a ratio of two runs on the same
machine, not a time."""
import time

from conftest import run
from test_seeding import NOW


def timed_apply(azseed, data_dir, *extra):
    """Seconds for one apply into a fresh embedded storage folder."""
    started = time.monotonic()
    applied = run(azseed, "apply", "--data-dir", str(data_dir), *NOW, *extra, timeout=300)
    elapsed = time.monotonic() - started
    assert applied.returncode == 0, applied.stderr
    return elapsed


def test_default_concurrency_is_not_starved(azseed, tmp_path):
    # Best of two for each setting, interleaved, so a busy moment of the machine hits both.
    serial, parallel = [], []
    for trial in range(2):
        serial.append(timed_apply(azseed, tmp_path / f"serial{trial}", "--events", "3000", "--concurrency", "1"))
        parallel.append(timed_apply(azseed, tmp_path / f"parallel{trial}", "--events", "3000"))
    ratio = min(serial) / min(parallel)
    # The release build measures about 1.5-1.9x (Benchmarks/RESULTS.md); a debug build under a
    # loaded CI machine keeps above 1.1x. The starved transport measured 0.24x here (debug
    # build, 3,000 events) and failed this.
    assert ratio >= 1.1, f"--concurrency 1 took {min(serial):.2f} s, the default {min(parallel):.2f} s (x{ratio:.2f})"


def test_the_small_default_dataset_is_not_starved(azseed, tmp_path):
    # 118 entities took 7.1 s at the default concurrency and 0.1 s serially.
    serial = min(timed_apply(azseed, tmp_path / f"serial{t}", "--concurrency", "1") for t in range(2))
    parallel = min(timed_apply(azseed, tmp_path / f"parallel{t}") for t in range(2))
    assert parallel <= serial * 1.5 + 0.2, f"--concurrency 1 took {serial:.2f} s, the default {parallel:.2f} s"
