"""The official Azure SDKs' own test suites, run live against `azseed emulator` (issue 32).

The tests come from the pinned source distributions on PyPI (sdists.txt, checked by hash), unpacked
afresh under .build/sdk-suites on every run — never edited. They run with azseed's stand-in for the
SDK's test tooling (standin/devtools_testutils, not on PyPI) and a pytest plugin
(standin/azseed_suite_plugin.py) that resolves the account's `*.core.windows.net` names to the
emulator and applies the skip list
(skips.txt: every skipped test, each with its reason). Each test file gets a fresh in-memory
emulator over HTTPS (a certificate from a CA made here, for `*.blob.core.windows.net` and
`*.table.core.windows.net`, the names the tests use: the plugin resolves them to the emulator's
ports in the test process), trusting a local identity provider (Tests/conformance/identity_provider.py)
that issues the token the stand-in hands to tests asking for an Entra credential.

Writes .build/sdk-suites/report-<suites>.md and .json (pass, fail, error and skip per file) and
fails when a test listed in expected-passing.txt does not pass twice (it runs once more on its
own first): the list only grows (`--update-expected` adds every test that passed).

    python Tests/sdk-suites/run.py --binary .build/debug/azseed [--suite tables|blob] [--file GLOB] [--jobs N]
"""
import argparse
import concurrent.futures
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WORK = ROOT / ".build" / "sdk-suites"
ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
SUITES = {"tables": "azure_data_tables-12.7.0", "blob": "azure_storage_blob-12.31.1"}
# A test file gets this long; one that runs past it counts every test it did not report as an error.
FILE_TIMEOUT = 900


def fetch(suites):
    """Downloads the pinned sdists (by hash) once, and unpacks the tests of `suites` afresh."""
    sdists = WORK / "sdists"
    sdists.mkdir(parents=True, exist_ok=True)
    if len(list(sdists.glob("*.tar.gz"))) < len(SUITES):
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-binary", ":all:", "--no-deps",
                        "--require-hashes", "-r", str(HERE / "sdists.txt"), "-d", str(sdists)], check=True)
    for suite in suites:
        stem = SUITES[suite]
        target = WORK / suite
        shutil.rmtree(target, ignore_errors=True)
        with tarfile.open(sdists / f"{stem}.tar.gz") as archive:
            members = [m for m in archive.getmembers() if m.name.startswith(f"{stem}/tests/")]
            archive.extractall(WORK / "unpacked", members=members, filter="data")
        shutil.move(str(WORK / "unpacked" / stem / "tests"), str(target))
        shutil.rmtree(WORK / "unpacked" / stem, ignore_errors=True)


def certificates(folder):
    """A CA, and a server certificate from it for the names the tests use."""
    folder.mkdir(parents=True, exist_ok=True)

    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=azseed suites CA")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    (folder / "ext.cnf").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:*.blob.core.windows.net,DNS:*.table.core.windows.net\nbasicConstraints=CA:FALSE\n"
        "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2",
            "-extfile", "ext.cnf")
    return folder / "ca.pem", folder / "server.pem", folder / "server.key"


def start_emulator(binary, cert, key, provider, ca, kind="standard"):
    """`kind`: which of the suites' accounts the emulator plays — `versioned` has blob
    versioning on (an account setting on Azure), `soft_delete` a delete retention policy."""
    process = subprocess.Popen(
        [binary, "emulator", "--in-memory", "--blob-port", "0", "--table-port", "0", "--cert", str(cert), "--key", str(key),
         "--oauth-authority", provider.authority, "--oauth-tenant", provider_module().TENANT, "--ca-file", str(ca),
         # The encryption scopes the suites' account has (created through ARM for the SDK's tests).
         "--encryption-scope", "testscope1", "--encryption-scope", "testscope2",
         *(["--blob-versioning"] if kind == "versioned" else [])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ports = {}
    while len(ports) < 2:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("the emulator did not start: " + process.stderr.read())
        if m := re.match(r"\s+(blob|table):\s+\S+://[^:/]+:(\d+)", line):
            ports[m.group(1)] = int(m.group(2))
    if kind == "soft_delete":
        from azure.storage.blob import BlobServiceClient, RetentionPolicy
        service = BlobServiceClient(f"https://127.0.0.1:{ports['blob']}/{ACCOUNT}", credential={"account_name": ACCOUNT, "account_key": KEY},
                                    connection_verify=str(ca))
        service.set_service_properties(delete_retention_policy=RetentionPolicy(enabled=True, days=7))
    return process, ports


def stop(process):
    process.terminate()
    try:
        process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()


def provider_module():
    if str(ROOT / "Tests" / "conformance") not in sys.path:
        sys.path.insert(0, str(ROOT / "Tests" / "conformance"))
    import identity_provider
    return identity_provider


def environment(ports, ca, token, provider):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "IDENTITY_", "MSI_"))}
    for prefix in ["", "SECONDARY_", "BLOB_", "VERSIONED_", "PREMIUM_", "SOFT_DELETE_"]:
        env[f"{prefix}STORAGE_ACCOUNT_NAME"] = ACCOUNT
        env[f"{prefix}STORAGE_ACCOUNT_KEY"] = KEY
    env.update({
        "ACCOUNT_URL_SUFFIX": "core.windows.net",
        "PROTOCOL": "https",
        "TABLES_STORAGE_ACCOUNT_NAME": ACCOUNT,
        "TABLES_PRIMARY_STORAGE_ACCOUNT_KEY": KEY,
        "AZSEED_SUITE_BLOB_PORT": str(ports["blob"]),
        "AZSEED_SUITE_TABLE_PORT": str(ports["table"]),
        "AZURE_TEST_RUN_LIVE": "true",
        "AZURE_SKIP_LIVE_RECORDING": "true",
        "SSL_CERT_FILE": str(ca),
        "REQUESTS_CA_BUNDLE": str(ca),
        "AZSEED_SUITE_TOKEN": token,
        "AZSEED_SUITE_TOKEN_EXPIRES": str(int(time.time()) + 86400),
        "AZSEED_SUITE_SKIPS": str(HERE / "skips.txt"),
        # DefaultAzureCredential, which tests create for themselves, signs in as a managed
        # identity of the local identity provider (the emulator trusts its tokens).
        "IDENTITY_ENDPOINT": provider.identity_endpoint,
        "IDENTITY_HEADER": provider_module().IDENTITY_HEADER,
        "PYTHONPATH": str(HERE / "standin"),
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    return env


def run_file(binary, suite, path, certs, provider, token, only=None, tag=""):
    """One test file against fresh emulators (`only`: some of its tests, by node id): {node id: outcome}.
    A file whose tests use the suites' versioned or soft-delete accounts runs those tests
    against an emulator playing that account, the others against a standard one."""
    text = path.read_text()
    kinds = [k for k in ("versioned", "soft_delete") if f"{k}_storage_account_name" in text]
    if not kinds:
        return run_part(binary, suite, path, certs, provider, token, only, tag, None)
    outcomes = {}
    for kind in ["standard", *kinds]:
        outcomes.update(run_part(binary, suite, path, certs, provider, token, only, tag if kind == "standard" else f"{tag}-{kind}", kind))
    return outcomes


def run_part(binary, suite, path, certs, provider, token, only, tag, kind):
    ca, cert, key = certs
    process, ports = start_emulator(binary, cert, key, provider, ca, kind or "standard")
    junit = WORK / "junit" / f"{suite}-{path.stem}{tag}.xml"
    junit.parent.mkdir(parents=True, exist_ok=True)
    junit.unlink(missing_ok=True)
    env = environment(ports, ca, token, provider)
    env["AZSEED_SUITE_NAME"] = suite
    if kind:
        env["AZSEED_ACCOUNT_KIND"] = kind
    log = WORK / "logs" / f"{suite}-{path.stem}{tag}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    timed_out = False
    try:
        with open(log, "w") as out:
            subprocess.run([sys.executable, "-m", "pytest", "-p", "azseed_suite_plugin", "-p", "no:cacheprovider", "-o", "asyncio_mode=auto",
                            "-o", "asyncio_default_fixture_loop_scope=function", "-q", "-rN", f"--junitxml={junit}",
                            *([n.split("/", 1)[1] for n in only] if only else [path.name])],
                           cwd=path.parent, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=FILE_TIMEOUT)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        stop(process)
    outcomes = {}
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            # A case without a class is the file's own failure (an import or collection error).
            owner = (case.get("classname") or "").rsplit(".", 1)[-1] or "(collection)"
            node = f"{suite}/{path.name}::{owner}::{case.get('name') or 'error'}"
            if case.find("failure") is not None:
                outcomes[node] = "failed"
            elif case.find("error") is not None:
                outcomes[node] = "error"
            elif case.find("skipped") is not None:
                outcomes[node] = "skipped"
            else:
                outcomes[node] = "passed"
    # A file pytest collected nothing from (a helper module named test_*) has no outcome; one
    # that left no report, or ran past its time, is an error of the file.
    if timed_out or not junit.exists():
        outcomes[f"{suite}/{path.name}"] = "timed out" if timed_out else "error"
    return outcomes


def report(outcomes, seconds):
    """Per file: passed, failed (failures and errors), skipped; per suite the pass rate of the
    tests that ran."""
    by_file = {}
    for node, outcome in outcomes.items():
        file = node.split("::")[0]
        counts = by_file.setdefault(file, {"passed": 0, "failed": 0, "skipped": 0})
        counts["passed" if outcome == "passed" else "skipped" if outcome == "skipped" else "failed"] += 1
    lines = ["| file | passed | failed | skipped | pass rate |", "|---|---:|---:|---:|---:|"]
    totals = {}
    for file in sorted(by_file):
        c = by_file[file]
        ran = c["passed"] + c["failed"]
        lines.append(f"| {file} | {c['passed']} | {c['failed']} | {c['skipped']} | {100 * c['passed'] / ran:.1f}% |" if ran else
                     f"| {file} | 0 | 0 | {c['skipped']} | — |")
        t = totals.setdefault(file.split("/")[0], {"passed": 0, "failed": 0, "skipped": 0})
        for k in t:
            t[k] += c[k]
    summary = []
    for suite, t in sorted(totals.items()):
        ran = t["passed"] + t["failed"]
        summary.append(f"{suite}: {t['passed']} of {ran} passed ({100 * t['passed'] / max(ran, 1):.1f}%), {t['skipped']} skipped")
    return "\n".join(lines), summary


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--suite", choices=sorted(SUITES), action="append")
    parser.add_argument("--file", default="test_*.py", help="a glob over the test files")
    parser.add_argument("--update-expected", action="store_true")
    parser.add_argument("--jobs", type=int, default=5, help="test files run at once (default 5)")
    args = parser.parse_args()
    started = time.monotonic()
    suites = args.suite or sorted(SUITES)
    fetch(suites)
    module = provider_module()
    provider = module.IdentityProvider()
    certs = certificates(Path(tempfile.mkdtemp(prefix="tls-", dir=WORK)))
    provider.start(str(certs[1]), str(certs[2]))
    provider.lifetime = 86400
    token = provider.token()
    outcomes = {}
    files = [(suite, path) for suite in suites for path in sorted((WORK / suite).glob("test_*.py")) if fnmatch.fnmatch(path.name, args.file)]
    # The slowest files first (durations.txt, from an earlier run): with --jobs at once, a long
    # file started last would finish long after the others.
    seconds = {}
    for line in (HERE / "durations.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            took, name = line.split()
            seconds[name] = int(took)
    files.sort(key=lambda item: -seconds.get(f"{item[0]}/{item[1].name}", 0))

    def one(item):
        suite, path = item
        began = time.monotonic()
        found = run_file(args.binary, suite, path, certs, provider, token)
        return suite, path, found, time.monotonic() - began

    try:
        # Files run side by side, each against emulators of its own: the suites mostly wait
        # (the tests' own sleeps for lease, SAS and retention times), so --jobs files at once
        # take a fraction of the time one after another does.
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for suite, path, found, took in pool.map(one, files):
                outcomes.update(found)
                passed = sum(1 for o in found.values() if o == "passed")
                failed = sum(1 for o in found.values() if o not in ("passed", "skipped"))
                log = f"; log: .build/sdk-suites/logs/{suite}-{path.stem}.log" if failed else ""
                print(f"{suite}/{path.name}: {passed} passed, {failed} failed ({took:.0f} s){log}", flush=True)
    except BaseException:
        provider.stop()
        shutil.rmtree(certs[0].parent, ignore_errors=True)
        raise
    expected_file = HERE / "expected-passing.txt"
    expected = set(expected_file.read_text().split()) if expected_file.exists() else set()
    ran_files = {node.split("::")[0] for node in outcomes}
    missing = sorted(n for n in expected if n.split("::")[0] in ran_files and outcomes.get(n) != "passed")
    if missing:
        # A test that passed before and failed now runs once more, alone with its file's other
        # such tests, against a fresh emulator: a failure twice is a regression.
        print(f"{len(missing)} test(s) expected to pass did not; running them again (logs: .build/sdk-suites/logs/*-rerun.log)")
        by_file = {}
        for node in missing:
            by_file.setdefault(node.split("::")[0], []).append(node)
        for file, nodes in by_file.items():
            suite, name = file.split("/", 1)
            again = run_file(args.binary, suite, WORK / suite / name, certs, provider, token, only=nodes, tag="-rerun")
            outcomes.update({n: o for n, o in again.items() if n in nodes})
        missing = sorted(n for n in missing if outcomes.get(n) != "passed")
    provider.stop()
    shutil.rmtree(certs[0].parent, ignore_errors=True)
    # The report counts a test that passed when run again as passed.
    table, summary = report(outcomes, time.monotonic() - started)
    name = "-".join(suites) + ("" if args.file == "test_*.py" else "-" + re.sub(r"[^A-Za-z0-9_.-]", "_", args.file))
    (WORK / f"report-{name}.md").write_text(table + "\n\n" + "\n".join(summary) + "\n")
    (WORK / f"report-{name}.json").write_text(json.dumps(outcomes, indent=1, sort_keys=True))
    print("\n".join(summary) + f"\nreport: .build/sdk-suites/report-{name}.md; logs: .build/sdk-suites/logs/")
    passing = {n for n, o in outcomes.items() if o == "passed"}
    if args.update_expected:
        # The list only grows: a listed test that fails stays listed (and fails the run); one
        # that can no longer pass is removed by hand, with its reason in skips.txt.
        expected_file.write_text("\n".join(sorted(expected | passing)) + "\n")
        print(f"expected-passing.txt: {len(expected | passing)} tests")
    new = sorted(passing - expected)
    if new and not args.update_expected:
        print(f"{len(new)} test(s) pass that expected-passing.txt does not list yet (--update-expected adds them)")
    if missing:
        print(f"{len(missing)} test(s) listed in expected-passing.txt did not pass:")
        for node in missing:
            print(f"  {node}: {outcomes.get(node, 'not run')}")
        sys.exit(1)
    print(f"took {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
