"""Issue 50, "private when not asked": a corpus of fake people built with the official SDKs —
employee ids that are a sequence (483920, 483921, …), birth times to the second (some at
midnight), unique salaries (one of them round), ratings, a department seen in three entities.
Scanned without --copy-values, no value seen in fewer than 5 entities appears in anything scan
writes or prints, in any spelling (`483920`, `1987-03-04T05:06:07`, `1987-03-04`, `400000`):
window bounds lie strictly outside every date seen, on whole months; the sequence starts at 1;
number ranges are rounded outward past any rare value; a column of fewer than 5 entities gets a
whole magnitude or whole years. The dataset still generates."""
import random
import re
from datetime import datetime, timedelta, timezone

from azure.data.tables import EdmType, EntityProperty, TableServiceClient

from conftest import run, start_emulator, stop_emulator

NOW = ["--now", "2026-11-29"]


def test_no_rare_value_of_a_person_reaches_anything_scan_writes(azseed, tmp_path):
    rng = random.Random(50)
    account = start_emulator(azseed, "--in-memory")
    try:
        table = TableServiceClient.from_connection_string(account.connection_string).create_table("staff")
        secrets = []
        for i in range(40):
            born = datetime(1960, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=rng.randrange(40 * 365 * 86400))
            if i % 10 == 0:
                born = born.replace(hour=0, minute=0, second=0)  # a date of birth alone
            salary = 400000 if i == 0 else 412345 + i * 1013
            person = {"PartitionKey": "staff", "RowKey": f"e{i:03}", "EmployeeId": EntityProperty(483920 + i, EdmType.INT64),
                      "Born": born, "Salary": salary, "Rating": round(1 + rng.random() * 4, 3),
                      "Department": "skunkworks" if i < 3 else ["sales", "support", "finance"][i % 3]}
            table.create_entity(person)
            secrets += [str(483920 + i), born.strftime("%Y-%m-%dT%H:%M:%S"), born.strftime("%Y-%m-%d"), str(salary)]
            # A rating as written (a short one, 3.8, is also a drawing coordinate of the picture page).
            if len(repr(person["Rating"])) >= 5:
                secrets.append(repr(person["Rating"]))
        secrets.append("skunkworks")
        # Found by an attacker: one person's date of birth in a table of its own was the window
        # itself (1988-02-28…1988-03-01), and a one-entity column of 7 became [6, 8].
        few = TableServiceClient.from_connection_string(account.connection_string).create_table("few")
        few.create_entity({"PartitionKey": "p", "RowKey": "only", "Children": 7,
                           "DateOfBirth": datetime(1988, 2, 29, tzinfo=timezone.utc)})
        secrets += ["1988-02-29", "1988-02-28", "1988-03-01"]

        done = run(azseed, "scan", "--connection-string", account.connection_string, "--table", "staff", "--table", "few",
                   "--out", str(tmp_path / "s"))
        assert done.returncode == 0, done.stderr
        written = "".join(p.read_text() for p in (tmp_path / "s").rglob("*") if p.is_file()) + done.stdout + done.stderr
        leaked = sorted({s for s in secrets if s in written})
        assert leaked == [], leaked
        text = (tmp_path / "s" / "dataset.yaml").read_text()
        assert "EmployeeId: { sequence: { start: 1, step: 1 }" in text, text
        assert "Children: { int: [0, 10]" in text and "DateOfBirth: { date: { from: 1988-01-01T00:00:00Z, to: 1989-01-01T00:00:00Z }" in text, text
        # A column with no range (Department, text) reads as one, not "(not shown) / " half empty.
        report = (tmp_path / "s" / "fidelity.md").read_text()
        assert not re.search(r"\(not shown\) /\s*\|", report) and "| `Department` |" in report, report
        generated = run(azseed, "generate", "--dataset", str(tmp_path / "s"), "--out", str(tmp_path / "g"), *NOW)
        assert generated.returncode == 0, generated.stderr
        # The same account with --copy-values: the test can tell a value when it is there.
        copied = run(azseed, "scan", "--connection-string", account.connection_string, "--table", "staff", "--out", str(tmp_path / "c"),
                     "--copy-values")
        assert copied.returncode == 0, copied.stderr
        everything = "".join(p.read_text() for p in (tmp_path / "c").rglob("*") if p.is_file())
        assert "483920" in everything and "400000" in everything and "skunkworks" in everything
    finally:
        stop_emulator(account)
