"""The ``ask`` command line: fast imports, usage errors, exit codes, a whole run with the model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ASK = [sys.executable, "-m", "shellagent.cli.ask"]
ALLOWED_OWN_MODULES = {"shellagent", "shellagent.cli", "shellagent.cli.ask", "shellagent.errors"}


def ask(
    *args: str, cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ASK, *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


def _imported(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True
    )
    return {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "imported package" not in line
    }


def test_importing_ask_loads_only_the_standard_library_and_its_own_modules() -> None:
    imported = _imported("import shellagent.cli.ask") - _imported("pass")
    foreign = {
        name
        for name in imported
        if name.split(".")[0] not in sys.stdlib_module_names and name not in ALLOWED_OWN_MODULES
    }
    assert "shellagent.cli.ask" in imported
    assert foreign == set()


def test_help_shows_an_example() -> None:
    done = ask("--help")
    assert done.returncode == 0
    assert 'example: ask "' in done.stdout


def test_an_empty_task_is_a_usage_error() -> None:
    done = ask("  ")
    assert done.returncode == 2
    assert done.stderr.startswith("error: the task is empty")


def test_a_turn_limit_below_one_is_a_usage_error() -> None:
    done = ask("--max-turns", "0", "list files")
    assert done.returncode == 2
    assert "--max-turns" in done.stderr


def test_a_missing_model_file_is_an_environment_problem(tmp_path: Path) -> None:
    done = ask("--no-daemon", "--model", str(tmp_path / "missing.gguf"), "list files")
    assert done.returncode == 3
    assert done.stderr.splitlines()[-1].startswith("error: model file ")
    assert "error: error" not in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.model
@pytest.mark.slow
def test_ask_no_daemon_yes_runs_a_task_end_to_end_and_streams_json_events(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    done = ask(
        "--no-daemon", "-y", "--json", "--max-turns", "3", "show the contents of notes.txt",
        cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    # The same protocol events as through the daemon: --no-daemon serves the task in-process.
    assert kinds[0] == "accepted" and kinds[-1] == "summary"
    assert "thinking" in kinds
    # The grammar makes every reply that ends an action; a reply can only be invalid when it
    # was cut (the token limit, or a 135M model looping).
    assert all(e["stop"] != "end" for e in events if e["type"] == "invalid")
    session = events[0]["session"]
    transcripts = list(Path(tmp_path).glob(f"sa-data/transcripts/{session}.jsonl"))
    assert transcripts, "the transcript is written to the data dir"
    summary = events[-1]
    assert summary["exit_code"] == done.returncode
    # 0 only for a finished result presented as done (the exit-code table, daemon/outcome.py)
    assert (done.returncode == 0) == (
        summary["reason"] == "finished" and summary.get("claimed", False)
    )


@pytest.mark.model
@pytest.mark.slow
def test_without_a_terminal_or_yes_ask_decisions_are_refused_and_that_is_said(
    tmp_path: Path,
) -> None:
    done = ask(
        "--no-daemon", "--max-turns", "2", "create a file named hello.txt",
        cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert "not a terminal: commands that need approval will be refused" in done.stderr
    assert not (tmp_path / "hello.txt").exists()
    assert "transcript " in done.stdout
