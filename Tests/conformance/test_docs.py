"""Issue 48: a promise in the README is a test. The README's first three commands run here as a
newcomer runs them — in an empty folder, `azseed` by name, no account — and what they print is
compared with what the README shows (`…` stands for any lines, or for any text within a line).
The SDK snippet after them reads the served data. Every relative link of the README and the
guides leads to a file that exists."""
import os
import pathlib
import re
import threading
import subprocess
import sys

import pytest

from conftest import record

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SHOWN_HOME = "/home/me/speakeasy"


def fenced_blocks(text: str, after_heading: str) -> list[str]:
    """The fenced blocks of the section whose heading is `after_heading`, in order."""
    section = text.split(f"\n## {after_heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```[a-z]*\n(.*?)^```", section, flags=re.S | re.M)


def session(block: str) -> list[tuple[str, list[str]]]:
    """A console block as (command, the lines it is shown to print)."""
    steps: list[tuple[str, list[str]]] = []
    for line in block.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, f"output before any command in the README block: {line!r}"
            steps[-1][1].append(line)
    return steps


def matches(shown: list[str], printed: list[str]) -> bool:
    """Every shown line is printed, in order; `…` alone stands for any lines (none included),
    `…` within a line for any text."""
    patterns = [None if s == "…" else re.compile("".join(".*" if p == "…" else re.escape(p) for p in re.split("(…)", s)) + r"\Z") for s in shown]
    memo: dict[tuple[int, int], bool] = {}

    def at(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(patterns):
            result = j == len(printed)
        elif patterns[i] is None:
            result = at(i + 1, j) or (j < len(printed) and at(i, j + 1))
        else:
            result = j < len(printed) and bool(patterns[i].match(printed[j])) and at(i + 1, j + 1)
        memo[(i, j)] = result
        return result

    return at(0, 0)


def streams_match(shown: list[str], stdout: list[str], stderr: list[str]) -> bool:
    """A terminal interleaves the two streams; a pipe does not. The shown lines that start
    `azseed:` are stderr's, in order, the others stdout's; `…` belongs to both."""
    notes = [line for line in shown if line == "…" or line.startswith("azseed:")]
    rest = [line for line in shown if not line.startswith("azseed:")]
    return matches(notes, stderr) and matches(rest, stdout)


@pytest.fixture
def newcomer(azseed, tmp_path):
    """An empty folder named as the README's, `azseed` on PATH by name, no account in the
    environment, a home of its own."""
    folder = tmp_path / "speakeasy"
    folder.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "azseed").symlink_to(azseed)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AZURE_") and k != "AZSEED_HOME"}
    env.update(
        PATH=f"{bin_dir}:{pathlib.Path(sys.executable).parent}:{env.get('PATH', '')}",
        HOME=str(tmp_path / "home"),
        XDG_CACHE_HOME=str(tmp_path / "home" / ".cache"),
    )
    return folder, env


def shown(text: str, folder: pathlib.Path) -> list[str]:
    return text.replace(str(folder.resolve()), SHOWN_HOME).replace(str(folder), SHOWN_HOME).rstrip("\n").split("\n")


def test_the_first_three_commands_print_what_the_readme_shows(newcomer):
    folder, env = newcomer
    text = README.read_text()
    console, sdk = fenced_blocks(text, "The first three commands")[:2]
    steps = session(console)
    assert [c.split()[:2] for c, _ in steps] == [["azseed", "plan"], ["azseed", "apply"], ["azseed", "emulator"]]
    for command, expected in steps[:2]:
        done = subprocess.run(command, shell=True, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
        record(["azseed", *command.split()[1:]], done.stdout, done.stderr)
        assert done.returncode == 0, done.stderr
        assert streams_match(expected, shown(done.stdout, folder), shown(done.stderr, folder)), (
            f"`{command}` printed:\n{done.stdout}\non stderr:\n{done.stderr}\nthe README shows:\n" + "\n".join(expected))

    # The third serves the folder on the usual ports until stopped; the SDK snippet reads it.
    command, expected = steps[2]
    emulator = subprocess.Popen(command, shell=True, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        # Read on a thread of its own: an emulator that prints less and keeps running must not
        # hold the test past its deadline.
        banner: list[str] = []
        reader = threading.Thread(target=lambda: banner.extend(emulator.stdout.readline().rstrip("\n") for _ in expected), daemon=True)
        reader.start()
        reader.join(timeout=30)
        banner = list(banner)
        record(["azseed", "emulator"], "\n".join(banner), "")
        assert matches(expected, shown("\n".join(banner), folder)), f"`{command}` printed:\n" + "\n".join(banner)
        sdk_expected = re.search(r"# (.*)\n\Z", sdk).group(1)
        read = subprocess.run([sys.executable, "-c", sdk], cwd=folder, env=env, capture_output=True, text=True, timeout=60)
        assert read.returncode == 0, read.stderr
        assert read.stdout == sdk_expected + "\n"
    finally:
        os.killpg(emulator.pid, 15)
        emulator.wait(timeout=30)

    # "Run apply again and nothing changes; plan with no --now reuses the time the last apply recorded."
    again = subprocess.run(["azseed", "plan"], cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert again.returncode == 0, again.stdout
    assert "now 2026-11-21T00:00:00Z, as recorded by the apply" in again.stdout
    assert "No changes:" in again.stdout


def test_what_the_readme_says_matches_is_what_the_matcher_demands():
    """The matcher above is what makes the README test able to fail."""
    assert matches(["a", "…", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "…", "d"], ["a", "d"])
    assert not matches(["a", "…", "d"], ["a", "b", "c"])
    assert matches(["in … s"], ["in 0.03 s"])
    assert not matches(["in … s"], ["in 0.03 ms!"])
    assert not matches(["Plan: 118 to create"], ["Plan: 119 to create"])
    assert streams_match(["azseed: a", "x", "…", "azseed: b"], ["x", "y"], ["azseed: a", "azseed: b"])
    assert not streams_match(["azseed: a", "x"], ["x"], ["azseed: b"])


def documents() -> list[pathlib.Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "Benchmarks").glob("*.md")),
            *sorted((ROOT / "examples").glob("*/README.md"))]


def test_every_relative_link_leads_to_a_file():
    broken = []
    for doc in documents():
        text = re.sub(r"^```.*?^```", "", doc.read_text(), flags=re.S | re.M)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (doc.parent / target.split("#", 1)[0]).resolve()
            if not path.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert not broken, "links to nothing:\n" + "\n".join(broken)


def test_the_readme_is_one_screen_and_a_map():
    """At most about 250 lines, and every guide under docs/ reachable from it or a guide it links."""
    text = README.read_text()
    assert len(text.split("\n")) <= 250
    linked = set(re.findall(r"\]\(docs/([A-Z-]+\.md)\)", text))
    guides = {p.name for p in (ROOT / "docs").glob("*.md")}
    for name in sorted(linked):
        linked |= set(re.findall(r"\]\(([A-Z-]+\.md)\)", (ROOT / "docs" / name).read_text()))
    assert guides <= linked, f"guides no reader reaches from the README: {sorted(guides - linked)}"


# --- Every command the docs show, against the real command line -------------------------

def help_text(azseed: str, path: tuple[str, ...]) -> str:
    done = subprocess.run([azseed, *path, "--help-hidden"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def command_tree(azseed: str, root: tuple[str, ...] = ()) -> dict[tuple[str, ...], set[str]]:
    """Every command path under `root` `--help` lists and the flags each takes (hidden flags too),
    keyed relative to `root`. `help` is ArgumentParser's own."""
    tree: dict[tuple[str, ...], set[str]] = {("help",): set()} if not root else {}
    pending: list[tuple[str, ...]] = [()]
    while pending:
        path = pending.pop()
        text = help_text(azseed, (*root, *path))
        options = text.split("\nOPTIONS:\n", 1)[1].split("\nSUBCOMMANDS:\n", 1)[0] if "\nOPTIONS:\n" in text else ""
        # The option column only (a line `  -v, --verbose` or `  --dataset <dir>  The …`), not
        # the descriptions, which name other commands' flags ("apply --plan FILE").
        tree[path] = {flag for line in options.split("\n") if (m := re.match(r"  (-[a-z], )?(--[a-z0-9][a-z0-9-]*)", line))
                      for flag in ([m.group(2)] + ([m.group(1)[:2]] if m.group(1) else []))}
        if "\nSUBCOMMANDS:\n" in text:
            listing = text.split("\nSUBCOMMANDS:\n", 1)[1]
            pending += [(*path, name) for name in re.findall(r"^  ([a-z][a-z-]*)(?: \(default\))?\s", listing, flags=re.M)]
    return tree


def shown_commands() -> list[tuple[str, str]]:
    """(where, command line) for every `azseed …` in a code block or an inline code span."""
    found = []
    for doc in documents():
        text = doc.read_text()
        blocks = re.findall(r"^ *```(?:sh|shell|console|bash|text|)\n(.*?)^ *```", text, flags=re.S | re.M)
        # A command continued with `\` is one line.
        lines = [line for block in blocks for line in block.replace("\\\n", " ").split("\n")]
        prose = re.sub(r"^ *```.*?^ *```", "", text, flags=re.S | re.M)
        lines += re.findall(r"`(azseed [^`]+)`", prose)
        for line in lines:
            start = r"(?:^\s*(?:\$ )?(?:[A-Z_]+=\S+ )*(?:sudo )?(?:time )?|[;&|] |\bdo |\$\(|\bthen |= ?)"
            for m in re.finditer(start + r"(azseed(?: [^;&|)#]*)?)", line):
                found.append((doc.relative_to(ROOT).as_posix(), m.group(1).strip()))
    return found


def test_every_command_the_docs_show_is_one_azseed_has(azseed):
    """A guide that names a command or a flag azseed does not have (renamed, removed, mistyped)
    sends its reader into a usage error: each shown `azseed …` is checked against `--help`."""
    tree = command_tree(azseed)
    wrong = []
    checked = 0
    for where, line in shown_commands():
        words = line.split()[1:]
        if words and words[0] not in {w for p in tree for w in p[:1]} and re.fullmatch(r"[a-z][a-z-]+", words[0]):
            if f"USAGE: azseed {words[0]}" in help_text(azseed, (words[0],)):
                tree.update({(words[0], *p): f for p, f in command_tree(azseed, (words[0],)).items()})  # a hidden command
        path: tuple[str, ...] = ()
        while words and (*path, words[0]) in tree:
            path = (*path, words.pop(0))
        groups = {p[:-1] for p in tree if p}
        if path and path != ("help",) and path in groups and words and re.fullmatch(r"[a-z][a-z-]+", words[0]):
            wrong.append(f"{where}: `{line}`: {' '.join(('azseed', *path))} has no command '{words[0]}'")
            continue
        if not path and words and not words[0].startswith("-"):
            if re.fullmatch(r"[a-z][a-z-]+", words[0]) and words[0] not in {"is", "and", "or", "as", "the", "with", "on", "itself"}:
                wrong.append(f"{where}: `{line}`: no command '{words[0]}'")
            continue
        flags = {w.split("=", 1)[0] for w in words if re.fullmatch(r"--[a-z0-9][a-z0-9-]*(=.*)?|-[a-z]", w)}
        unknown = sorted(flags - tree[path] - {"--help", "-h", "--version", "--help-hidden"})
        if unknown:
            wrong.append(f"{where}: `{line}`: {' '.join(('azseed', *path))} has no {', '.join(unknown)}")
        checked += 1
    assert checked > 150, f"only {checked} documented commands found: the extraction broke"
    assert not wrong, "the docs show what azseed does not have:\n" + "\n".join(wrong)


def test_every_command_and_target_is_described(azseed):
    """Every command of `azseed --help` has a guide that shows it, and every target of
    Package.swift is described in docs/ARCHITECTURE.md."""
    tree = command_tree(azseed)
    visible = re.findall(r"^  ([a-z][a-z-]*)\s", help_text(azseed, ()).split("\nSUBCOMMANDS:\n", 1)[1], flags=re.M)
    visible = [v for v in visible if v != "help"]
    shown = {tuple(line.split()[1:3]) for _, line in shown_commands()} | {tuple(line.split()[1:2]) for _, line in shown_commands()}
    missing = [name for name in visible if (name,) not in shown]
    missing += [" ".join(p) for p in tree if len(p) == 2 and p[0] == "migrate" and p not in shown]
    assert not missing, f"commands no guide shows: {missing}"
    architecture = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    targets = re.findall(r"\.(?:target|executableTarget|testTarget|systemLibrary|plugin)\(\s*name: \"([^\"]+)\"", (ROOT / "Package.swift").read_text())
    assert len(targets) > 10
    undescribed = [t for t in targets if not re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", architecture)]
    assert not undescribed, f"targets docs/ARCHITECTURE.md does not describe: {undescribed}"


# --- A house that stays tidy -----------------------------------------------------------------

def target_dependencies(name):
    """The names of this package's own targets that `name` depends on, from Package.swift."""
    manifest = (ROOT / "Package.swift").read_text()
    block = re.search(rf"\.target\(\s*name: \"{name}\",\s*dependencies: \[(.*?)\]\s*\)", manifest, re.S)
    assert block, f"no target {name} in Package.swift"
    return set(re.findall(r'(?<!name: )"([A-Za-z]+)"', re.sub(r"\.product\([^)]*\)", "", block.group(1))))


def test_the_emulator_stands_on_the_protocol_core_alone():
    """Issue 48's protocol core: StorageEmulator depends on StorageProtocol (and system
    libraries) and on nothing else of this package, imports no other module of it, and the core's
    API is public — no `package` declaration the emulator could be leaning on — so the emulator
    could move to its own package without an edit."""
    ours = {t for t in re.findall(r"\.(?:target|systemLibrary)\(\s*name: \"([^\"]+)\"", (ROOT / "Package.swift").read_text())}
    system = {"CCurl", "CLinux", "CJPEG"}
    assert "StorageProtocol" in ours and ours > system
    assert target_dependencies("StorageEmulator") & ours == {"StorageProtocol", "CLinux"}, target_dependencies("StorageEmulator")
    assert target_dependencies("StorageProtocol") & ours <= system, target_dependencies("StorageProtocol")
    assert "StorageProtocol" in target_dependencies("AzureStorage")
    imports = set()
    for source in (ROOT / "Sources" / "StorageEmulator").rglob("*.swift"):
        imports |= set(re.findall(r"^(?:@\w+ )*import (\w+)", source.read_text(), re.M))
    assert imports & ours == {"StorageProtocol", "CLinux"}, imports & ours
    leaning = []
    for source in (ROOT / "Sources" / "StorageProtocol").rglob("*.swift"):
        for number, line in enumerate(source.read_text().split("\n"), 1):
            if not line.lstrip().startswith("//") and re.search(r"(^|\s|\))package\s+(?!\()", line):
                leaning.append(f"{source.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not leaning, "package declarations in the protocol core:\n" + "\n".join(leaning)


def test_no_error_code_is_spelled_as_a_string():
    """Every service error code is a named `AzureStorageError.Code`: the emulator throws
    `ServiceError(status, .name, …)`, never a literal a typo could change."""
    spelled = []
    literal = re.compile(r'ServiceError\(\s*\d+\s*,\s*"|\b(code|errorCode)\s*[!=]=\s*"[A-Z]|"x-ms-(copy-source-)?error-code"\s*,\s*"[A-Z]', re.S)
    for source in sorted((ROOT / "Sources").rglob("*.swift")):
        text = source.read_text()
        for match in literal.finditer(text):  # across lines: a call may wrap after its '('
            number = text.count("\n", 0, match.start()) + 1
            spelled.append(f"{source.relative_to(ROOT)}:{number}: {text[match.start():match.end() + 40].split(chr(10))[0].strip()}")
    assert not spelled, "error codes spelled as strings:\n" + "\n".join(spelled)


def test_no_stray_files_at_the_root():
    """What the repository's root holds is what a newcomer needs; scratch output (pipe.err,
    pipe.rc, …) is not committed."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split("\n")
    root_files = sorted({path for path in tracked if path and "/" not in path})
    assert root_files == [".gitignore", ".swift-format", "Makefile", "Package.resolved", "Package.swift", "README.md"], root_files
