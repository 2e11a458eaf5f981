"""pytest plugin for the peer suites: skips, with its reason, every test skips.txt lists — the
tests that expect Azurite's behaviour where Azure behaves otherwise. Nothing else is touched."""
import fnmatch
import os
from pathlib import Path

import pytest

SKIPS = Path(__file__).resolve().parent.parent / "skips.txt"


def load():
    rules = []
    for line in SKIPS.read_text().splitlines():
        pattern, _, reason = line.partition("#")
        if pattern.strip():
            rules.append((pattern.strip(), reason.strip()))
    return rules


def pytest_collection_modifyitems(config, items):
    suite = os.environ.get("AZSEED_PEER_SUITE", "")
    rules = load()
    for item in items:
        node = f"{suite}/{item.nodeid.rsplit('/', 1)[-1]}"
        for pattern, reason in rules:
            if fnmatch.fnmatchcase(node, pattern):
                item.add_marker(pytest.mark.skip(reason=f"azseed: {reason}"))
                break
