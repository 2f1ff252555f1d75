"""The verified library: task-set lines with their gold observations and final answers.

Stored as gzip-compressed JSONL, one verified task per line in generation order. The file
is written byte for byte the same from the same lines: the gzip header carries no time
and no file name, and the compression level is fixed. The library shipped with the
package is ``data/library.jsonl.gz``; ``shellagent tasks build`` rebuilds it from the seed.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Sequence
from pathlib import Path

from shellagent.eval.tasks import Task, load_tasks

LIBRARY_NAME = "library.jsonl.gz"


def library_path() -> Path:
    """The library shipped with the package."""
    return Path(__file__).resolve().parent / "data" / LIBRARY_NAME


def library_bytes(tasks: Sequence[Task]) -> bytes:
    """The compressed JSONL of ``tasks``, the same bytes for the same tasks."""
    text = "".join(task.to_line() + "\n" for task in tasks).encode()
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as f:
        f.write(text)
    return buffer.getvalue()


def write_tasks(tasks: Sequence[Task], path: Path) -> None:
    """Write ``tasks`` as JSONL, gzip-compressed when the name ends in ``.gz``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.name.endswith(".gz"):
        path.write_bytes(library_bytes(tasks))
    else:
        path.write_text("".join(task.to_line() + "\n" for task in tasks), encoding="utf-8")


def read_library(path: Path | None = None) -> list[Task]:
    """The verified tasks of a library file (the shipped one by default)."""
    return list(load_tasks(path or library_path()).tasks)
