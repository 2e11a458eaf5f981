"""The pytest plugin the runner loads into the SDKs' suites (`-p azseed_suite_plugin`):

- the account's public-cloud host names (`https://devstoreaccount1.blob.core.windows.net`, as the
  tests build them) resolve, in the test process only, to the emulator's ports;
- the tests the skip list names (Tests/sdk-suites/skips.txt, `$AZSEED_SUITE_SKIPS`) are skipped
  with its reason, and only those: a test the list does not name runs;
- the SDK's markers are known (`live_test_only` runs: everything is live here)."""
import fnmatch
import inspect
import os
import socket

import pytest

_getaddrinfo = socket.getaddrinfo
# The public cloud's host names for the account, as the tests build them, answered by the emulator:
# `<account>.blob.core.windows.net:443` (and `-secondary`) reach its blob port, `.table.` its table
# port. The host name, TLS server name and signatures stay what they are against Azure.
_SERVICES = {".blob.core.windows.net": "AZSEED_SUITE_BLOB_PORT", ".table.core.windows.net": "AZSEED_SUITE_TABLE_PORT"}


def _resolve(host, port, *args, **kwargs):
    if isinstance(host, str) and str(port) in ("443", "https"):
        for suffix, variable in _SERVICES.items():
            if host.endswith(suffix) and os.environ.get(variable):
                return _getaddrinfo("127.0.0.1", int(os.environ[variable]), *args, **kwargs)
    return _getaddrinfo(host, port, *args, **kwargs)


socket.getaddrinfo = _resolve


def read_skips(path):
    """`pattern  # reason` lines: a node id or a glob over node ids, relative to the suite's
    tests/ folder, prefixed with the suite (`blob/test_page_blob.py::*`), or `@marker` for the
    tests the SDK marks so."""
    rules = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            pattern, _, reason = line.partition("#")
            if not reason.strip():
                raise pytest.UsageError(f"{path}:{number}: a skip needs its reason after '#'")
            rules.append((pattern.strip(), reason.strip()))
    return rules


@pytest.fixture(scope="session")
def test_proxy():
    """The SDK's recording proxy, which suites' conftests ask for: there is none; tests run live."""
    yield None


def pytest_configure(config):
    for marker in ["live_test_only", "playback_test_only", "asyncio"]:
        config.addinivalue_line("markers", f"{marker}: marker of the SDK's suites")


def account_kind(item):
    """Which of the suite's accounts a test uses: Azure's test resources are three accounts
    (standard; with versioning; with soft delete), and the runner gives each its own emulator."""
    try:
        source = inspect.getsource(item.function)
    except (OSError, TypeError):
        return "standard"
    for kind in ("versioned", "soft_delete"):
        if f"{kind}_storage_account_name" in source:
            return kind
    return "standard"


def pytest_collection_modifyitems(config, items):
    kind = os.environ.get("AZSEED_ACCOUNT_KIND")
    if kind:
        # Only the tests of the account this run's emulator plays.
        chosen = [item for item in items if account_kind(item) == kind]
        config.hook.pytest_deselected(items=[item for item in items if account_kind(item) != kind])
        items[:] = chosen
    path = os.environ.get("AZSEED_SUITE_SKIPS")
    suite = os.environ.get("AZSEED_SUITE_NAME", "")
    if not path:
        return
    rules = read_skips(path)
    for item in items:
        node = f"{suite}/{item.nodeid.split('tests/', 1)[-1]}"
        for pattern, reason in rules:
            # `@marker` skips the tests the SDK marks so (`@playback_test_only`).
            matched = item.get_closest_marker(pattern[1:]) is not None if pattern.startswith("@") else fnmatch.fnmatchcase(node, pattern)
            if matched:
                item.add_marker(pytest.mark.skip(reason=reason))
                break
