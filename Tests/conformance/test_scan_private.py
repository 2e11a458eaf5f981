"""Issue 50, "private when not asked": a corpus of fake people built with the official SDKs —
employee ids that are a sequence (483920, 483921, …), birth times to the second (some at
midnight), unique salaries (one of them round), ratings, a department seen in three entities.
Scanned without --copy-values, no value seen in fewer than 5 entities appears in anything scan
writes or prints, in any spelling (`483920`, `1987-03-04T05:06:07`, `1987-03-04`, `400000`):
window bounds lie strictly outside every date seen, on whole days; the sequence starts at 1;
number ranges are rounded outward past any rare value. The dataset still generates."""
import random
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

        done = run(azseed, "scan", "--connection-string", account.connection_string, "--table", "staff", "--out", str(tmp_path / "s"))
        assert done.returncode == 0, done.stderr
        written = "".join(p.read_text() for p in (tmp_path / "s").rglob("*") if p.is_file()) + done.stdout + done.stderr
        leaked = sorted({s for s in secrets if s in written})
        assert leaked == [], leaked
        text = (tmp_path / "s" / "dataset.yaml").read_text()
        assert "EmployeeId: { sequence: { start: 1, step: 1 }" in text, text
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
