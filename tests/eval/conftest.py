"""Shared helpers for the eval tests: the real dev task set, and small task files."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shellagent.eval import Task

# Beside the checkout, as in CI; SHELLAGENT_DEV_TASKS names it for a checkout elsewhere.
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


def make_task(
    id: str = "t-1",
    *,
    task: str = "do the thing",
    setup: tuple[str, ...] = (),
    check: str = "[ -f /tmp/done ]",
) -> Task:
    return Task(id=id, task=task, setup_commands=setup, success_condition=check)


@pytest.fixture
def write_tasks(tmp_path: Path) -> Callable[..., Path]:
    """Write task objects (or raw lines) to a JSONL file."""

    def write(*items: dict[str, Any] | str, name: str = "tasks.jsonl") -> Path:
        path = tmp_path / name
        lines = [item if isinstance(item, str) else json.dumps(item) for item in items]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    return write
