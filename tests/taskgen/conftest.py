"""Helpers for the task generator tests: run a check with a given answer outside the sandbox."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

DEV_TASKS = Path(
    os.environ.get("SHELLAGENT_DEV_TASKS")
    or Path(__file__).resolve().parents[3] / "shared" / "tasks" / "shell-tasks-dev.jsonl"
)


@pytest.fixture
def dev_tasks() -> Path:
    """The 300 real dev tasks (beside the checkout, as in CI)."""
    if not DEV_TASKS.is_file():
        pytest.skip(f"{DEV_TASKS} is not there")
    return DEV_TASKS


def answer_passes(condition: str, answer: str, last_output: str = "") -> bool:
    """Run an answer-only check in a plain bash with ``$ANSWER`` and ``$LAST_OUTPUT``.

    Only for checks that read nothing but the two files: run in an empty directory with
    no HOME, a check that looked at the file system would fail here.
    """
    with tempfile.TemporaryDirectory() as tmp:
        answer_file, output_file = Path(tmp, "answer"), Path(tmp, "last_output")
        answer_file.write_text(answer, encoding="utf-8")
        output_file.write_text(last_output, encoding="utf-8")
        env = {
            "PATH": "/usr/bin:/bin",
            "LC_ALL": "C.UTF-8",
            "ANSWER": str(answer_file),
            "LAST_OUTPUT": str(output_file),
        }
        result = subprocess.run(
            ["/bin/bash", "--noprofile", "--norc", "-c", condition],
            env=env,
            cwd=tmp,
            capture_output=True,
            timeout=20,
        )
    return result.returncode == 0
