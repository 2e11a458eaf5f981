"""A pytest fixture for tests of code that uses Azure Storage: every test gets its own
in-memory azseed emulator (Blob and Table, the development account) on free ports, seeded
with a dataset when the test asks — the isolation Testcontainers gives, without Docker.

Copy this file into your tests. It needs `azseed` on PATH (or $AZSEED_BIN) and nothing else.
"""
import json
import os
import shutil
import subprocess

import pytest

# The development account's well-known key (the same as Azurite's), published by Microsoft.
DEVELOPMENT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


class Storage:
    """A running emulator: its endpoints and a connection string for any Azure SDK."""

    def __init__(self, azseed, process, ready):
        self.azseed, self.process = azseed, process
        self.account, self.blob_endpoint, self.table_endpoint = ready["account"], ready["blobEndpoint"], ready["tableEndpoint"]
        self.connection_string = (f"DefaultEndpointsProtocol=http;AccountName={self.account};AccountKey={DEVELOPMENT_KEY};"
                                  f"BlobEndpoint={self.blob_endpoint};TableEndpoint={self.table_endpoint}")

    def seed(self, *args):
        """Runs `azseed apply` against this emulator (the shipped SpeakEasy dataset unless
        `--dataset DIR` is among `args`) and returns its output."""
        done = subprocess.run([self.azseed, "apply", "--connection-string", self.connection_string, *args],
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"azseed apply failed: {done.stderr.strip()}")
        return done.stdout


@pytest.fixture
def azure_storage():
    azseed = os.environ.get("AZSEED_BIN") or shutil.which("azseed")
    if not azseed:
        pytest.skip("azseed is not on PATH")
    process = subprocess.Popen([azseed, "emulator", "--in-memory", "--blob-port", "0", "--table-port", "0", "--output", "json"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    if not line:
        raise RuntimeError("azseed emulator did not start (run it by hand to see why)")
    yield Storage(azseed, process, json.loads(line))
    process.terminate()
    process.wait(timeout=10)
    process.stdout.close()
