"""The secrets scan itself must catch what it looks for, or its silence proves nothing."""
import subprocess
import sys
import urllib.parse

from conftest import KEY, ROOT, leaked


def test_the_scan_finds_keys_and_signatures_and_nothing_else():
    assert leaked(f"error: AccountKey={KEY}")
    assert leaked("…" + urllib.parse.quote(KEY, safe="") + "…")
    assert leaked("GET /c/b?sv=2022-11-02&sig=c2VjcmV0LXNpZ25hdHVyZQ%3D%3D")
    assert not leaked("AccountKey=<the development key>; SASToken(sig=redacted); Authorization: SharedKey devstoreaccount1:…")


def test_the_scan_fails_make_test_on_a_leak(tmp_path):
    (tmp_path / "clean.log").write_text("azseed: error: 403 AuthenticationFailed\n")
    clean = subprocess.run([sys.executable, str(ROOT / "Tests" / "scan_secrets.py"), str(tmp_path)], capture_output=True, text=True)
    assert clean.returncode == 0, clean.stderr
    (tmp_path / "dirty.log").write_text(f"connection string: AccountKey={KEY}\n")
    dirty = subprocess.run([sys.executable, str(ROOT / "Tests" / "scan_secrets.py"), str(tmp_path)], capture_output=True, text=True)
    assert dirty.returncode == 1 and "dirty.log" in dirty.stderr and KEY not in dirty.stderr
