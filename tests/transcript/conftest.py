"""Private directories for every test, and ``record_session`` to write scripted sessions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shellagent.transcript import Redactor, TranscriptWriter

from .scripted import Player, Turn, play


@pytest.fixture(autouse=True)
def private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name in ("CONFIG", "DATA", "STATE", "CACHE", "RUNTIME"):
        monkeypatch.setenv(f"SHELLAGENT_{name}_DIR", str(tmp_path / name.lower()))
    yield tmp_path


@pytest.fixture
def record_session(tmp_path: Path) -> Player:
    """Write a scripted session to the real transcript store; returns the file's path."""
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)

    def record(task: str, turns: list[Turn], **kwargs: Any) -> Path:
        redactor = kwargs.pop("redactor", None) or Redactor.from_environment()
        writer = TranscriptWriter(redactor=redactor)
        play(writer, task, turns, cwd=kwargs.pop("cwd", workdir), **kwargs)
        return writer.path

    return record
