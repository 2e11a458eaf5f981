"""Scans every file of a folder of test output for secrets: the account keys the tests use
and anything shaped like a SAS signature. Exits 1 naming the file (never the secret).

    python Tests/scan_secrets.py .build/test-output
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent / "conformance"))
from conftest import leaked  # noqa: E402  (the suite's own list of secrets and patterns)
import test_bad_input  # noqa: E402,F401  (registers the made-up keys and SAS token it uses)


def main(folder):
    files = sorted(p for p in pathlib.Path(folder).rglob("*") if p.is_file())
    if not files:
        print(f"scan_secrets: nothing to scan in {folder}", file=sys.stderr)
        return 1
    dirty = [(p, found) for p in files if (found := leaked(p.read_text("utf-8", "replace")))]
    for path, found in dirty:
        print(f"scan_secrets: {path}: {', '.join(found)}", file=sys.stderr)
    if not dirty:
        print(f"scan_secrets: {len(files)} files of test output, {sum(p.stat().st_size for p in files)} bytes: no account key, no SAS signature, no token")
    return 1 if dirty else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ".build/test-output"))
