"""Issue 51, "pictures": `make bench` (Benchmarks/curves.sh) measures apply, a cold plan and the
official-SDK port at each size, writes Benchmarks/curves.tsv, and Benchmarks/python/charts.py
draws docs/images/bench-*.svg from it and the curves table in Benchmarks/RESULTS.md. The README
shows the pictures. Here: the checked-in pictures and table are exactly what the checked-in data
gives (so they are the measured data's, never drawn by hand); every measured figure is a point
of a chart; each chart renders in headless Chromium to a picture with its curves' colours."""
import shutil
import subprocess
import sys

from conftest import ROOT
from test_scan_pictures import CHROMIUM, near, pixels

DATA = ROOT / "Benchmarks" / "curves.tsv"
IMAGES = ROOT / "docs" / "images"
APPLY, PLAN, PORT = (0x2F, 0x6D, 0xB5), (0xE0, 0x78, 0x2F), (0x5A, 0x9E, 0x4B)


def drawn(tmp_path):
    """The pictures and RESULTS.md the checked-in data gives, drawn afresh."""
    out = tmp_path / "images"
    out.mkdir()
    results = tmp_path / "RESULTS.md"
    shutil.copy(ROOT / "Benchmarks" / "RESULTS.md", results)
    done = subprocess.run([sys.executable, str(ROOT / "Benchmarks" / "python" / "charts.py"), str(DATA), str(out), str(results)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out, results


def test_the_pictures_and_the_table_are_the_measured_data(tmp_path):
    out, results = drawn(tmp_path)
    for name in ("bench-ratio.svg", "bench-rate.svg", "bench-memory.svg"):
        assert (out / name).read_text() == (IMAGES / name).read_text(), f"{name} is not what {DATA.name} gives: run Benchmarks/curves.sh"
    assert results.read_text() == (ROOT / "Benchmarks" / "RESULTS.md").read_text(), "RESULTS.md's curves table is not the data's"
    readme = (ROOT / "README.md").read_text()
    for name in ("bench-ratio.svg", "bench-rate.svg", "bench-memory.svg"):
        assert f"docs/images/{name}" in readme


def test_every_measured_figure_is_a_point(tmp_path):
    rows = [line.split("\t") for line in DATA.read_text().splitlines() if line and not line.startswith("#")][1:]
    assert len(rows) >= 3
    memory = (IMAGES / "bench-memory.svg").read_text()
    rate = (IMAGES / "bench-rate.svg").read_text()
    ratio = (IMAGES / "bench-ratio.svg").read_text()
    for events, apply_s, apply_mb, plan_s, plan_mb, port_s in rows:
        n = int(events)
        label = f"{n / 1_000_000:g}M" if n >= 1_000_000 else f"{n / 1000:g}k"
        assert f"azseed apply at {label}: {int(apply_mb)} MB" in memory.replace(",", "")
        assert f"azseed plan (cold) at {label}: {int(plan_mb)} MB" in memory.replace(",", "")
        assert f"azseed apply at {label}: {round((n + 8) / float(apply_s)):,} entities/s" in rate
        if port_s != "-":
            assert f"azseed apply at {label}:" in ratio and f"Python SDK port, 8 thr. at {label}:" in rate


def test_each_picture_renders(tmp_path):
    assert CHROMIUM, "no chromium on PATH: make test installs Debian's chromium package (make test-deps)"
    for name, colours in (("bench-ratio.svg", [APPLY]), ("bench-rate.svg", [APPLY, PLAN, PORT]), ("bench-memory.svg", [APPLY, PLAN])):
        page = tmp_path / (name + ".html")
        page.write_text("<!DOCTYPE html><body style='margin:0;overflow:hidden'>" + (IMAGES / name).read_text())
        shot = tmp_path / (name + ".png")
        taken = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                                f"--screenshot={shot}", "--window-size=640,340", page.as_uri()], capture_output=True, text=True, timeout=120)
        assert shot.exists(), taken.stderr[-2000:]
        seen = pixels(shot)
        for colour in colours:
            assert sum(near(p, colour) for p in seen) > 150, (name, colour)
        assert sum(p == (255, 255, 255) for p in seen) < len(seen) * 0.97, name


def test_the_readmes_figures_are_the_datas():
    """README's "How fast" quotes the curves: its figures must be what curves.tsv holds."""
    rows = [dict(zip(["events", "apply_s", "apply_mb", "plan_s", "plan_mb", "port_s"], map(str.strip, line.split("\t"))))
            for line in DATA.read_text().splitlines() if line and not line.startswith("#")][1:]
    ratios = [float(r["port_s"]) / float(r["apply_s"]) for r in rows if r["port_s"] != "-"]
    largest = max(rows, key=lambda r: int(r["events"]))
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"is {min(ratios):.1f}–{max(ratios):.1f}× the port's 8 threads" in readme
    assert f"{int(largest['apply_mb']):,} MB at {int(largest['events']):,}" in readme
    assert f"stays under {(max(int(r['plan_mb']) for r in rows) // 5 + 1) * 5} MB up to {int(largest['events']):,} events" in readme
    at100k = next(r for r in rows if r["events"] == "100000")
    assert f"a cold `plan` takes {float(at100k['plan_s']):.2f} s over 100,000 entities" in readme
