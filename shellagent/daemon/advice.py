"""What would help when the small local model is out of its depth: one line after a task
that failed or that the user refused out of, naming the command to edit by hand and a
larger model to pull (``ask.larger_model``; ``""`` turns it off), at most once a day."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from shellagent import paths

__all__ = ["advice"]

STAMP = "larger-model-suggested"  # in the state dir: the day it was last said
FAILED_ENDINGS = frozenset({"repeated_failure", "turn_limit", "error"})


def advice(
    *,
    reason: str,
    success: bool | None,
    refused_out: bool,
    command: str | None,
    larger: str,
    current: str,
    today: dt.date | None = None,
) -> str:
    """The line to show, or "" (the task went well, it is off, or it was said today)."""
    out_of_depth = success is False or reason in FAILED_ENDINGS or refused_out
    if not out_of_depth or not larger or larger in current:
        return ""
    today = today or dt.date.today()
    stamp = paths.state_dir() / STAMP
    if _said_on(stamp) == today.isoformat():
        return ""
    size = _size(larger)
    edit = f"edit `{command}` yourself, or " if command else ""
    line = (
        f"the small local model could not do this: {edit}try a larger one: "
        f"shellagent model pull {larger}{size}, then shellagent config set model.default "
        f'{larger} (ask.larger_model = "" stops this note)'
    )
    _stamp(stamp, today.isoformat())
    return line


def _size(name: str) -> str:
    try:
        from shellagent.model.catalog import lookup

        size = lookup(name).size_bytes
    except Exception:  # a name that is not in the catalog: no size to tell
        return ""
    return f" ({size / 1e9:.1f} GB)" if size else ""


def _said_on(stamp: Path) -> str:
    try:
        return stamp.read_text().strip()
    except OSError:
        return ""


def _stamp(stamp: Path, day: str) -> None:
    paths.ensure_private_dir(stamp.parent)
    tmp = stamp.with_name(f".{stamp.name}.{os.getpid()}")
    tmp.write_text(day + "\n")
    tmp.replace(stamp)
