"""A browser app against the emulator: Chromium (Debian's package, headless) loads a page served from
another origin that lists the public `speakers` container anonymously, shows the seeded photos and
reads the events through a table SAS (a request with an `x-ms-version` header, so the browser sends a
CORS preflight first). The CORS rules are set with the Azure CLI. A page from an origin the rules do
not allow is blocked by the browser. The screenshot lands in .build/test-output."""
import json
import shutil
import subprocess
import threading
import time
from datetime import datetime, timedelta, timezone
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from azure.core.credentials import AzureNamedKeyCredential
from azure.data.tables import TableSasPermissions, generate_table_sas

from conftest import ACCOUNT, KEY, ROOT, run, start_emulator, stop_emulator
from test_third_party import AZ

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
OUTPUT = ROOT / ".build" / "test-output"

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>SpeakEasy against the emulator</title>
<style>body { font-family: sans-serif; } img { width: 96px; height: 96px; object-fit: cover; margin: 4px; } pre { white-space: pre-wrap; word-break: break-all; }</style></head>
<body><h1>SpeakEasy speakers</h1><div id="photos"></div><h2>Events</h2><ul id="events"></ul><pre id="result">pending</pre>
<script>
const blob = %(blob)s, table = %(table)s, sas = %(sas)s;
const result = {origin: location.origin};
async function main() {
  try {
    const listing = await fetch(blob + "/speakers?restype=container&comp=list");
    result.listStatus = listing.status;
    const xml = new DOMParser().parseFromString(await listing.text(), "application/xml");
    result.blobs = [...xml.getElementsByTagName("Name")].map(n => n.textContent);
    const loads = result.blobs.map(name => new Promise(resolve => {
      const img = document.createElement("img");
      img.onload = () => resolve(img.naturalWidth > 0);
      img.onerror = () => resolve(false);
      img.src = blob + "/speakers/" + encodeURIComponent(name);
      img.alt = name;
      document.getElementById("photos").appendChild(img);
    }));
    result.photosShown = (await Promise.all(loads)).filter(Boolean).length;
  } catch (e) {
    result.listError = String(e);
  }
  try {
    // x-ms-version is not a CORS-safelisted header: the browser asks the Table service first (OPTIONS).
    const events = await fetch(table + "/events()?" + sas + "&$filter=PartitionKey%%20eq%%20'Events'&$top=5",
                               {headers: {"Accept": "application/json;odata=nometadata", "x-ms-version": "2019-02-02"}});
    result.eventsStatus = events.status;
    const body = await events.json();
    result.events = body.value.map(e => e.EventName || e.RowKey);
    for (const name of result.events) {
      const li = document.createElement("li");
      li.textContent = name;
      document.getElementById("events").appendChild(li);
    }
  } catch (e) {
    result.eventsError = String(e);
  }
  document.getElementById("result").textContent = JSON.stringify(result);
}
main();
</script></body></html>
"""


def serve(folder):
    """A static file server on a free port: a web origin of its own."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def chromium(*args, timeout=60):
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--no-first-run", "--virtual-time-budget=15000", *args],
                          capture_output=True, text=True, timeout=timeout)


def page_result(url):
    done = chromium("--dump-dom", url)
    start = done.stdout.find('<pre id="result">')
    assert start >= 0, done.stdout[-2000:] + done.stderr[-2000:]
    text = done.stdout[start + len('<pre id="result">'):done.stdout.find("</pre>", start)]
    assert text != "pending", done.stdout[-2000:]
    return json.loads(text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"'))


def test_a_page_from_another_origin_lists_shows_and_reads_and_a_foreign_origin_is_blocked(azseed, tmp_path):
    assert CHROMIUM, "no chromium on PATH: make test installs Debian's chromium package (make test-deps)"
    log = tmp_path / "emulator.jsonl"
    emulator = start_emulator(azseed, "--in-memory", "--log-file", str(log))
    allowed_folder, denied_folder = tmp_path / "allowed", tmp_path / "denied"
    allowed_folder.mkdir()
    denied_folder.mkdir()
    allowed, allowed_origin = serve(allowed_folder)
    denied, denied_origin = serve(denied_folder)
    try:
        seeded = run(azseed, "apply", "--connection-string", emulator.connection_string, "--now", "2026-11-21", "--events", "20")
        assert seeded.returncode == 0, seeded.stderr
        # The rules are set the way the README shows, with the Azure CLI (a client this project did not write).
        cors = subprocess.run([AZ, "storage", "cors", "add", "--services", "bt", "--methods", "GET", "HEAD", "OPTIONS",
                               "--origins", allowed_origin, "--allowed-headers", "x-ms-*", "accept", "--exposed-headers", "x-ms-*",
                               "--max-age", "60", "--connection-string", emulator.connection_string, "--only-show-errors"],
                              capture_output=True, text=True, timeout=180)
        assert cors.returncode == 0, cors.stderr
        sas = generate_table_sas(AzureNamedKeyCredential(ACCOUNT, KEY), "events", permission=TableSasPermissions(read=True),
                                 expiry=datetime.now(timezone.utc) + timedelta(hours=1))
        html = PAGE % {"blob": json.dumps(emulator.blob), "table": json.dumps(emulator.table), "sas": json.dumps(sas)}
        for folder in (allowed_folder, denied_folder):
            (folder / "index.html").write_text(html)

        ours = page_result(allowed_origin + "/index.html")
        assert ours["listStatus"] == 200, ours
        assert len(ours["blobs"]) == 8 and all(name.endswith(".jpg") for name in ours["blobs"]), ours
        assert ours["photosShown"] == 8, ours
        assert ours["eventsStatus"] == 200 and len(ours["events"]) == 5, ours

        theirs = page_result(denied_origin + "/index.html")
        assert "listError" in theirs and "listStatus" not in theirs, theirs  # the browser refused the answer
        assert "eventsError" in theirs and "eventsStatus" not in theirs, theirs  # the preflight was refused

        # The emulator's own log shows the preflights: granted for the page's origin, refused for the other.
        for _ in range(50):  # the emulator writes its log from a thread of its own: give it a moment
            preflights = [r for r in map(json.loads, log.read_text().splitlines()) if r["method"] == "OPTIONS"]
            if len(preflights) >= 2:
                break
            time.sleep(0.1)
        assert {(r["service"], r["status"]) for r in preflights} == {("table", 200), ("table", 403)}, preflights

        OUTPUT.mkdir(parents=True, exist_ok=True)
        shot = OUTPUT / "browser-cors.png"
        shot.unlink(missing_ok=True)
        taken = chromium(f"--screenshot={shot}", "--window-size=900,700", allowed_origin + "/index.html")
        assert shot.exists() and shot.stat().st_size > 10_000, taken.stderr[-2000:]
    finally:
        allowed.shutdown()
        denied.shutdown()
        stop_emulator(emulator)
