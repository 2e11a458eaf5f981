"""Issue 50, "the fidelity report in pictures": beside fidelity.md, scan writes fidelity.html — a
self-contained page (inline SVG, no script, nothing fetched) with the account and the
regenerated data side by side per column. Rendered in headless Chromium (Debian's package),
the screenshot is not blank: it holds both series' colours in bars. Without --copy-values the
page shows shapes, never a value of the account (test_scan_private.py reads it with the rest)."""
import re
import shutil
import struct
import subprocess
import zlib

from conftest import ROOT, run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ACCOUNT = (0x2F, 0x6D, 0xB5)
REGENERATED = (0xE0, 0x78, 0x2F)


def pixels(png):
    """The RGB(A) pixels of a PNG file (8-bit, non-interlaced, as Chromium writes them)."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and interlace == 0 and colour in (2, 6)
    size = 3 if colour == 2 else 4
    raw, stride, rows, previous = zlib.decompress(idat), width * size, [], bytearray(width * size)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - size] if x >= size else 0
            b = previous[x]
            c = previous[x - size] if x >= size else 0
            if kind == 1:
                line[x] = (line[x] + a) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + b) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(line)
        previous = line
    return [tuple(row[x:x + 3]) for row in rows for x in range(0, stride, size)]


def near(pixel, colour):
    return all(abs(p - c) <= 12 for p, c in zip(pixel, colour))


def test_the_fidelity_page_renders_both_series_and_fetches_nothing(azseed, tmp_path):
    assert CHROMIUM, "no chromium on PATH: make test installs Debian's chromium package (make test-deps)"
    snapshot = tmp_path / "snap"
    made = run(azseed, "generate", "--dataset", str(ROOT / "Seeds" / "speakeasy"), "--out", str(snapshot), "--now", "2026-11-29")
    assert made.returncode == 0, made.stderr
    for args in ([], ["--copy-values"]):
        out = tmp_path / ("scan" + "".join(args))
        done = run(azseed, "scan", "--snapshot", str(snapshot), "--out", str(out), *args)
        assert done.returncode == 0, done.stderr
        page = (out / "fidelity.html").read_text()
        # Self-contained: nothing to fetch, nothing to run.
        assert "<script" not in page and not re.search(r"\b(src|href)\s*=", page) and "default-src 'none'" in page
        assert page.count("<svg") >= 10
        shot = tmp_path / ("shot" + "".join(args) + ".png")
        taken = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                                f"--screenshot={shot}", "--window-size=1000,900", (out / "fidelity.html").as_uri()],
                               capture_output=True, text=True, timeout=120)
        assert shot.exists(), taken.stderr[-2000:]
        seen = pixels(shot)
        blue = sum(near(p, ACCOUNT) for p in seen)
        orange = sum(near(p, REGENERATED) for p in seen)
        white = sum(p == (255, 255, 255) for p in seen)
        assert blue > 5000 and orange > 5000, (args, blue, orange)
        assert white < len(seen) * 0.9, (args, white, len(seen))
