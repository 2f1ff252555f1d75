"""The transcript store: one append-only JSONL file per session, written as things happen.

``TranscriptWriter`` creates ``<transcripts_dir>/<session>.jsonl`` with mode 0600 in a 0700
directory (the file is created 0600 by ``open(2)`` itself, never briefly wider), redacts each
event, and writes it with a single ``write(2)`` followed by ``fsync``: a process killed at any
moment leaves every earlier event intact and at most one partial last line, which readers
skip. Session ids sort by start time: ``20261122T021500-3fa2b1`` (UTC).

Reading lives in ``reader.py``; the agent loop only needs ``TranscriptSink``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import threading
import time
from pathlib import Path
from typing import Protocol, runtime_checkable

from shellagent import paths
from shellagent.errors import EnvironmentProblem
from shellagent.events import VERSION, Line, TranscriptEvent, to_dict
from shellagent.transcript.redact import Redactor

SUFFIX = ".jsonl"


class TranscriptError(EnvironmentProblem):
    """A transcript could not be written (disk full, permissions, closed writer)."""


@runtime_checkable
class TranscriptSink(Protocol):
    """Where the agent loop sends events. Implementations stamp ``v``, ``ts`` and ``seq``;
    ``session_id`` names the session they record (the loop's ``session_start`` uses it)."""

    @property
    def session_id(self) -> str: ...

    def write(self, event: TranscriptEvent) -> None: ...

    def close(self) -> None: ...


def new_session_id(now: float | None = None) -> str:
    """A session id that sorts by start time: ``YYYYmmddTHHMMSS-<6 hex>`` in UTC."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(time.time() if now is None else now))
    return f"{stamp}-{secrets.token_hex(3)}"


def stamp_event(event: TranscriptEvent, seq: int) -> Line:
    """The line to store: ``v``, ``type``, ``ts`` (now, unless the event has one), ``seq``,
    then the event's fields."""
    ts = event.ts if event.ts is not None else time.time()
    return {"v": VERSION, **to_dict(dataclasses.replace(event, ts=ts, seq=seq))}


def redact_event(event: Line, redactor: Redactor) -> Line:
    """Redact every string (``Redactor.redact_record``); drop token ids and logprobs of a
    reply that held a secret.

    Generated token ids decode back to the raw reply, so if the reply had to be redacted
    its token ids and logprobs would leak the secret: they are nulled and the turn marked.
    """
    clean: Line = redactor.redact_record(event)
    if clean.get("type") == "model_turn" and clean.get("raw") != event.get("raw"):
        clean["token_ids"] = None
        clean["logprobs"] = None
        clean["redacted"] = True
    return clean


class TranscriptWriter:
    """Appends redacted events for one session to its own 0600 file, fsync'd per event."""

    def __init__(
        self,
        session_id: str | None = None,
        *,
        directory: Path | None = None,
        redactor: Redactor | None = None,
        fsync: bool = True,
    ) -> None:
        self.session_id = session_id or new_session_id()
        self.redactor = redactor if redactor is not None else Redactor.from_environment()
        self.fsync = fsync
        if directory is None:
            paths.ensure_private_dir(paths.data_dir())
            directory = paths.transcripts_dir()
        paths.ensure_private_dir(directory)
        self.path = directory / f"{self.session_id}{SUFFIX}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC
        try:
            self._fd: int | None = os.open(self.path, flags, 0o600)
        except OSError as exc:
            raise TranscriptError(
                f"cannot create transcript {self.path}: {exc.strerror}",
                hint="check that the data directory is writable",
            ) from exc
        self._seq = 0
        self._lock = threading.Lock()

    def write(self, event: TranscriptEvent) -> None:
        """Stamp, redact and durably append one event."""
        with self._lock:
            if self._fd is None:
                raise TranscriptError(f"transcript {self.session_id} is already closed")
            line = redact_event(stamp_event(event, self._seq), self.redactor)
            data = (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
            try:
                written = os.write(self._fd, data)
                while written < len(data):  # short writes: only on odd filesystems
                    written += os.write(self._fd, data[written:])
                if self.fsync:
                    os.fsync(self._fd)
            except OSError as exc:
                raise TranscriptError(
                    f"cannot write transcript {self.path}: {exc.strerror}"
                ) from exc
            self._seq += 1

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
