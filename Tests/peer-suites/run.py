"""The test suites of projects written against Azurite, run live against `azseed emulator`
(issue 46): adlfs (fsspec for Azure, over the Python SDK) and Apache Arrow's AzureFileSystem
(pyarrow, over the Azure SDK for C++).

The tests are the ones in the pinned wheels (requirements.txt), run where pip put them — never
edited. Only what starts Azurite is replaced (standin/): adlfs's fixture starts Azurite with the
Docker SDK, so `docker` here is a module whose `containers.run(<azurite image>)` starts the
emulator on the published port; Arrow's fixture runs `azurite-blob --location DIR --blobPort N`,
so `azurite-blob` here runs the emulator with those. Tests that expect Azurite's behaviour where
Azure behaves otherwise are skipped by standin/peer_skips.py, each with its reason (skips.txt).

Writes .build/peer-suites/report.md and fails when a test listed in expected-passing.txt does
not pass: the list only grows (`--update-expected` adds every test that passed).

    python Tests/peer-suites/run.py --binary .build/release/azseed [--suite adlfs|arrow]
"""
import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WORK = ROOT / ".build" / "peer-suites"
STANDIN = HERE / "standin"
# The whole suite gets this long; a suite that runs past it fails.
SUITE_TIMEOUT = 1200

SUITES = {
    # adlfs's own pytest settings (its pyproject's asyncio_mode) come with its source, not the wheel.
    "adlfs": {"args": ["--pyargs", "adlfs.tests", "-o", "asyncio_mode=auto", "-o", "asyncio_default_fixture_loop_scope=function"],
              "env": {}},
    # Arrow's Azure tests run when its test group `azure` is switched on, as its CI does.
    "arrow": {"args": ["--pyargs", "pyarrow.tests.test_fs", "-k", "azure or Azure"], "env": {"PYARROW_TEST_AZURE": "ON"}},
}


def run_suite(binary, suite):
    junit = WORK / f"junit-{suite}.xml"
    log = WORK / f"{suite}.log"
    junit.unlink(missing_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"{suite}-", dir=WORK))
    env = dict(os.environ)
    env.update(SUITES[suite]["env"])
    env["AZSEED_BIN"] = str(Path(binary).resolve())
    env["AZSEED_PEER_SUITE"] = suite
    env["PATH"] = f"{STANDIN / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(STANDIN)
    env["TMPDIR"] = str(scratch)
    timed_out = False
    try:
        with open(log, "w") as out:
            # Rooted where pip put the packages, so a test's id is `adlfs/tests/test_spec.py::…`.
            subprocess.run([sys.executable, "-m", "pytest", "-p", "peer_skips", "-p", "no:cacheprovider", "-q", "-rN", f"--junitxml={junit}",
                            "--rootdir", sysconfig.get_paths()["purelib"], "--basetemp", str(scratch / "pytest"), *SUITES[suite]["args"]],
                           cwd=scratch, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=SUITE_TIMEOUT)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    outcomes = {}
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            # `adlfs.tests.test_spec` or `adlfs.tests.test_connect_client.TestCloseCredential`:
            # the module, then the class if any.
            parts = (case.get("classname") or "").split(".")
            at = max((i for i, p in enumerate(parts) if p.startswith("test_")), default=len(parts))
            owner = "::".join([parts[at] + ".py", *parts[at + 1:]]) if at < len(parts) else "(collection)"
            node = f"{suite}/{owner}::{case.get('name') or 'error'}"
            if case.find("failure") is not None or case.find("error") is not None:
                outcomes[node] = "failed"
            elif case.find("skipped") is not None:
                outcomes[node] = "skipped"
            else:
                outcomes[node] = "passed"
    if timed_out or not junit.exists():
        outcomes[f"{suite}/(suite)"] = "timed out" if timed_out else "error"
    return outcomes


def summary(suite, outcomes):
    passed = sum(1 for n, o in outcomes.items() if n.startswith(suite + "/") and o == "passed")
    failed = sum(1 for n, o in outcomes.items() if n.startswith(suite + "/") and o not in ("passed", "skipped"))
    skipped = sum(1 for n, o in outcomes.items() if n.startswith(suite + "/") and o == "skipped")
    ran = passed + failed
    return passed, failed, skipped, f"{suite}: {passed} of {ran} passed ({100 * passed / max(ran, 1):.1f}%), {skipped} skipped"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--suite", choices=sorted(SUITES), action="append")
    parser.add_argument("--update-expected", action="store_true")
    args = parser.parse_args()
    started = time.monotonic()
    WORK.mkdir(parents=True, exist_ok=True)
    outcomes = {}
    lines = ["| suite | passed | failed | skipped | pass rate | seconds |", "|---|---:|---:|---:|---:|---:|"]
    for suite in args.suite or sorted(SUITES):
        began = time.monotonic()
        found = run_suite(args.binary, suite)
        outcomes.update(found)
        passed, failed, skipped, line = summary(suite, found)
        seconds = time.monotonic() - began
        lines.append(f"| {suite} | {passed} | {failed} | {skipped} | {100 * passed / max(passed + failed, 1):.1f}% | {seconds:.0f} |")
        print(f"{line} ({seconds:.0f} s){'; log: .build/peer-suites/' + suite + '.log' if failed else ''}", flush=True)
        for node, outcome in sorted(found.items()):
            if outcome not in ("passed", "skipped"):
                print(f"  {node}: {outcome}")
    (WORK / "report.md").write_text("\n".join(lines) + "\n")
    expected_file = HERE / "expected-passing.txt"
    expected = set(expected_file.read_text().split()) if expected_file.exists() else set()
    ran = {n.split("/")[0] for n in outcomes}
    missing = sorted(n for n in expected if n.split("/")[0] in ran and outcomes.get(n) != "passed")
    passing = {n for n, o in outcomes.items() if o == "passed"}
    if args.update_expected:
        # The list only grows: a listed test that fails stays listed (and fails the run).
        expected_file.write_text("\n".join(sorted(expected | passing)) + "\n")
        print(f"expected-passing.txt: {len(expected | passing)} tests")
    if missing:
        print(f"{len(missing)} test(s) listed in expected-passing.txt did not pass:")
        for node in missing:
            print(f"  {node}: {outcomes.get(node, 'not run')}")
        sys.exit(1)
    print(f"report: .build/peer-suites/report.md; took {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
