"""Shared fixtures of the conformance suite: where the built azseed lives."""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def azseed() -> str:
    path = os.environ.get("AZSEED_BIN", str(ROOT / ".build" / "debug" / "azseed"))
    if not os.path.exists(path):
        pytest.fail(f"{path} not built; run `swift build` first (make test does)")
    return path
