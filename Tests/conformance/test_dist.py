"""Issue 29, item 4: the release tarball is the whole tool. `make test-dist` builds it (`make
dist`: static Swift runtime, stripped, completions, man page, SHA256SUMS) and runs this with
AZSEED_DIST set; `make test` skips it (it builds no release). The binary runs in a private mount
namespace where the toolchain's runtime folder is an empty tmpfs: it seeds, plans and serves."""
import hashlib
import os
import pathlib
import shutil
import subprocess
import tarfile

import pytest

from conftest import ACCOUNT, KEY, record

DIST = os.environ.get("AZSEED_DIST")
pytestmark = pytest.mark.skipif(not DIST, reason="make test-dist runs this with the release tarball")

# What the README promises the binary needs: Debian's libraries, nothing of the toolchain.
ALLOWED = {"libsqlite3.so.0", "libjpeg.so.62", "libcurl.so.4", "libxml2.so.2", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1",
           "libc.so.6", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}


def toolchain_runtime():
    swift = pathlib.Path(shutil.which("swift")).resolve()
    return swift.parent.parent / "lib" / "swift" / "linux"


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory):
    tarball = pathlib.Path(DIST)
    sums = (tarball.parent / "SHA256SUMS").read_text().split()
    assert sums[1] == tarball.name and sums[0] == hashlib.sha256(tarball.read_bytes()).hexdigest()
    folder = tmp_path_factory.mktemp("dist")
    with tarfile.open(tarball) as archive:
        archive.extractall(folder, filter="data")
    root = folder / tarball.name.removesuffix(".tar.gz")
    return root


def hidden(args, **kwargs):
    """`args` run with the toolchain's runtime folder hidden under an empty tmpfs."""
    runtime = toolchain_runtime()
    assert runtime.is_dir() and any(runtime.glob("libswiftCore.so")), runtime
    script = f'mount -t tmpfs tmpfs "{runtime}" && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *args]


def test_the_tarball_holds_the_binary_completions_and_man_page(unpacked):
    binary = unpacked / "bin" / "azseed"
    assert binary.is_file() and os.access(binary, os.X_OK)
    assert (unpacked / "share" / "man" / "man1" / "azseed.1").is_file()
    assert (unpacked / "share" / "bash-completion" / "completions" / "azseed").is_file()
    needed = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True).stdout
    libraries = {line.split("[")[1].split("]")[0] for line in needed.splitlines() if "(NEEDED)" in line}
    assert libraries <= ALLOWED, libraries - ALLOWED
    assert not any("swift" in lib for lib in libraries)
    assert ".symtab" not in subprocess.run(["readelf", "-S", str(binary)], capture_output=True, text=True).stdout  # stripped
    assert binary.stat().st_size < 100 * 1024 * 1024, binary.stat().st_size


def test_the_binary_seeds_plans_and_serves_without_the_toolchain(unpacked, tmp_path):
    binary = str(unpacked / "bin" / "azseed")
    env = {k: v for k, v in os.environ.items() if k != "AZURE_STORAGE_CONNECTION_STRING"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    # Without hiding, a binary that needs libswiftCore from the toolchain would pass: check it is hidden.
    probe = subprocess.run(hidden(["sh", "-c", f'ls "{toolchain_runtime()}" | wc -l']), capture_output=True, text=True)
    assert probe.stdout.strip() == "0", probe.stdout + probe.stderr
    version = subprocess.run(hidden([binary, "--version"]), capture_output=True, text=True, env=env)
    assert version.returncode == 0, version.stderr
    generated = subprocess.run(hidden([binary, "generate", "--out", str(tmp_path / "fixture"), "--now", "2026-11-21"]), capture_output=True, text=True,
                               env=env, cwd=tmp_path)
    record([binary, "generate"], generated.stdout, generated.stderr)
    assert generated.returncode == 0, generated.stderr
    emulator = subprocess.Popen(hidden([binary, "emulator", "--in-memory", "--blob-port", "0", "--table-port", "0"]), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
    try:
        endpoints = {}
        while len(endpoints) < 2:
            line = emulator.stdout.readline()
            assert line, emulator.stderr.read()
            for service in ("blob", "table"):
                if line.strip().startswith(service + ":"):
                    endpoints[service] = line.split()[1]
        cs = (f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
              f"BlobEndpoint={endpoints['blob']};TableEndpoint={endpoints['table']}")
        for args, expected in ((["apply"], "Apply complete"), (["plan"], "No changes")):
            done = subprocess.run(hidden([binary, *args, "--connection-string", cs, "--now", "2026-11-21"]), capture_output=True, text=True,
                                  env=env, cwd=tmp_path, timeout=300)
            record([binary, *args], done.stdout, done.stderr)
            assert done.returncode == 0 and expected in done.stdout, done.stdout + done.stderr
    finally:
        emulator.terminate()
        emulator.communicate(timeout=30)
