"""Stands in for the Docker SDK where a peer project's fixture starts Azurite in a container
(adlfs's `spawn_azurite`: `docker.from_env().containers.run("mcr.microsoft.com/azure-storage/azurite",
"azurite-blob … --skipApiVersionCheck", ports={"10000": "10000"})`): the same call starts
`azseed emulator` in memory on the published port instead, and `.stop()` stops it. Nothing else
of the Docker SDK is here; a test that reached for more would fail on it, visibly."""
import os
import re
import subprocess
import time
import urllib.request


class _Emulator:
    def __init__(self, port):
        binary = os.environ["AZSEED_BIN"]
        self.process = subprocess.Popen([binary, "emulator", "--in-memory", "--blob-port", str(port), "--table-port", "0"],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # Ready once it prints its endpoints (Azurite's container is ready as soon as it runs too).
        for line in self.process.stdout:
            if re.match(r"\s+table:\s+\S+", line):
                break
        else:
            raise RuntimeError(f"azseed emulator did not start (exit {self.process.wait()})")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    remove = kill = stop


class _Containers:
    def run(self, image, command=None, detach=False, ports=None, **_):
        if "azurite" not in image:
            raise RuntimeError(f"the Docker stand-in runs only Azurite's image, not {image}")
        published = [int(host) for host in (ports or {"10000": "10000"}).values()]
        return _Emulator(published[0])


class DockerClient:
    containers = _Containers()


def from_env(**_):
    return DockerClient()
