"""The user's own worked examples: ``ask`` sessions the user confirmed, kept locally.

When the user answers "yes" to "Did that do it?", the session's commands, what they printed
(as the model saw it, redacted like every transcript) and the final answer are appended to
``history.jsonl`` in the data directory, one line per session, in the library format
``examples.py`` reads (``task``, ``steps``, ``answer``). Retrieval then finds them beside
the shipped library, so the agent gets better at this user's own tasks. Nothing leaves
the machine; ``ask.history = false`` in config.toml turns it off, and deleting the file
forgets everything.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from shellagent import paths

__all__ = ["add_session", "history_path"]

OUTPUT_KEPT = 1200  # characters of each command's output kept per step


def history_path() -> Path:
    return paths.data_dir() / "history.jsonl"


def add_session(
    task: str, steps: Sequence[tuple[str, str, int]], answer: str, *, session: str = ""
) -> Path | None:
    """Append one confirmed session; None when there is nothing worth keeping (no command
    that succeeded). ``steps`` are (command, output, exit code) in order."""
    from shellagent.transcript.redact import Redactor

    kept = [{"command": c, "output": o, "exit_code": code} for c, o, code in steps if code == 0]
    if not kept or not task.strip():
        return None
    path = history_path()
    paths.ensure_private_dir(path.parent)
    # Redacted as one record before it is cut, like a transcript line: a secret found in one
    # step is hidden in every other and in the answer.
    line = Redactor.from_environment().redact_record(
        {
            "id": session,
            "family": f"history-{session}",
            "task": task,
            "steps": kept,
            "answer": answer,
        }
    )
    for step in line["steps"]:
        step["output"] = step["output"][:OUTPUT_KEPT]
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        f.write(json.dumps(line, ensure_ascii=False) + "\n")
    return path
