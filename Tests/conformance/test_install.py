"""azseed as users install it: `make install PREFIX=…` (the binary, shell completions, a man
page), the installed binary alone in an empty folder, `azseed --version`, and `azseed init`
writing a dataset that plans and generates at once."""
import filecmp
import os
import subprocess

import pytest

from conftest import ROOT, run

NOW = ["--now", "2026-11-21", "--from", "2026-01-01", "--to", "2027-01-01"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """`make install` into a scratch prefix, from the debug build the suite already made (a
    release build is the default and takes minutes; the steps after it are the same)."""
    prefix = tmp_path_factory.mktemp("prefix")
    done = subprocess.run(["make", "-s", "install", f"PREFIX={prefix}", "CONFIGURATION=debug"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return prefix


def clean_env(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("AZURE_STORAGE_CONNECTION_STRING", "AZSEED_HOME")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    return env


def test_make_install_lays_out_the_binary_completions_and_man_page(installed):
    binary = installed / "bin" / "azseed"
    assert binary.is_file() and os.access(binary, os.X_OK)
    bash = installed / "share" / "bash-completion" / "completions" / "azseed"
    zsh = installed / "share" / "zsh" / "site-functions" / "_azseed"
    fish = installed / "share" / "fish" / "vendor_completions.d" / "azseed.fish"
    for script in (bash, zsh, fish):
        assert script.is_file() and "azseed" in script.read_text(), script
    # The bash completion loads and completes azseed's own subcommands.
    done = subprocess.run(["bash", "-c", f"source {bash} && complete -p azseed"], capture_output=True, text=True)
    assert done.returncode == 0 and "azseed" in done.stdout, done.stderr
    assert "init" in bash.read_text() and "--auth-mode" in bash.read_text()
    man = installed / "share" / "man" / "man1" / "azseed.1"
    assert man.is_file() and ".Dt AZSEED 1" in man.read_text() and "init" in man.read_text()


def test_the_installed_binary_says_its_version_and_commit(installed):
    done = run(str(installed / "bin" / "azseed"), "--version")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert done.returncode == 0
    assert done.stdout.startswith("0.") and f"(commit {commit}" in done.stdout, done.stdout


def test_the_installed_binary_alone_in_an_empty_folder_runs_apply_plan_and_generate(installed, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    azseed, env = str(installed / "bin" / "azseed"), clean_env(tmp_path)
    applied = run(azseed, "apply", *NOW, cwd=work, env=env)
    assert applied.returncode == 0 and "118 created" in applied.stdout, applied.stderr
    planned = run(azseed, "plan", *NOW, cwd=work, env=env)
    assert planned.returncode == 0 and "No changes" in planned.stdout, planned.stderr
    generated = run(azseed, "generate", "--out", "fx", *NOW, cwd=work, env=env)
    assert generated.returncode == 0 and "entities in events" in generated.stdout, generated.stderr


def same_tree(a, b):
    compared = filecmp.dircmp(a, b)
    assert not compared.left_only and not compared.right_only and not compared.diff_files, (compared.left_only, compared.right_only, compared.diff_files)
    for sub in compared.common_dirs:
        same_tree(a / sub, b / sub)


@pytest.mark.parametrize("example", ["speakeasy", "chat"])
def test_init_writes_a_dataset_that_plans_and_generates_as_the_repositorys(installed, tmp_path, example):
    azseed, env = str(installed / "bin" / "azseed"), clean_env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    done = run(azseed, "init", "mine", "--example", example, cwd=work, env=env)
    assert done.returncode == 0, done.stderr
    assert "dataset.yaml" in done.stdout and "azseed plan --dataset mine" in done.stdout
    text = (work / "mine" / "dataset.yaml").read_text()
    assert "templates: templates" in text and "`pick`" in text  # commented, self-contained
    assert sorted(p.name for p in (work / "mine" / "templates").iterdir())
    planned = run(azseed, "plan", "--dataset", "mine", "--data-dir", "data", *NOW, cwd=work, env=env)
    assert planned.returncode == 0 and "to create" in planned.stdout, planned.stderr
    # The same entities, blobs and manifest as the repository's own dataset.
    ours = run(azseed, "generate", "--dataset", "mine", "--out", "ours", *NOW, cwd=work, env=env)
    theirs = run(azseed, "generate", "--dataset", str(ROOT / "Seeds" / example), "--out", "theirs", *NOW, cwd=work, env=env)
    assert ours.returncode == 0 and theirs.returncode == 0, ours.stderr + theirs.stderr
    for part in ("tables", "blobs"):
        if (work / "theirs" / part).exists():
            same_tree(work / "ours" / part, work / "theirs" / part)


def test_init_refuses_a_folder_that_is_not_empty(azseed, tmp_path):
    folder = tmp_path / "taken"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    done = run(azseed, "init", str(folder))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "is not empty" in lines[0], done.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"] and done.stdout == ""
    done = run(azseed, "init", str(tmp_path / "x"), "--example", "nope")
    assert done.returncode == 64 and "speakeasy" in done.stderr
