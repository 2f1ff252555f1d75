"""Reading transcripts back: tolerant of crashes, corruption, newer and older writers.

Each line becomes one of the typed events of ``shellagent.events``. A line that is not a
JSON object, lacks the base keys, or is a known event type with missing or mistyped fields
is skipped and reported as ``"<file>:<line>: <why>"`` in ``Transcript.problems`` (and
logged). Lines of an event type this version does not know (a newer shellagent wrote them)
are skipped too, silently, and their types listed in ``Transcript.unknown``; keys a line
has beyond its type's fields are ignored. Lines of older format versions are upgraded by
the migrations in ``shellagent.events``; lines of a newer format version than this reader
knows are skipped as problems.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from shellagent import paths
from shellagent.errors import InputError
from shellagent.events import (
    VERSION,
    Check,
    End,
    EventError,
    ModelTurn,
    SessionStart,
    TranscriptEvent,
    read_event,
    upgrade,
)
from shellagent.transcript.store import SUFFIX

log = logging.getLogger("shellagent.transcript")

BASE_KEYS = ("v", "type", "ts", "seq")
_E = TypeVar("_E")


@dataclass(frozen=True)
class Transcript:
    """One session as read from disk: its valid events in order, what was skipped, and the
    event types it holds that this version does not know."""

    path: Path
    events: list[TranscriptEvent]
    problems: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        start = self.start
        if start is not None:
            return start.session
        return self.path.name.removesuffix(SUFFIX)

    @property
    def start(self) -> SessionStart | None:
        return next((e for e in self.events if isinstance(e, SessionStart)), None)

    @property
    def end(self) -> End | None:
        return next((e for e in reversed(self.events) if isinstance(e, End)), None)

    @property
    def started(self) -> float | None:
        start = self.start or (self.events[0] if self.events else None)
        return start.ts if start else None

    @property
    def task(self) -> str:
        return self.start.task if self.start else ""

    @property
    def model(self) -> str:
        return (self.start.model if self.start else None) or ""

    def of_type(self, kind: type[_E]) -> list[_E]:
        return [e for e in self.events if isinstance(e, kind)]

    @property
    def turns(self) -> int:
        n = len(self.of_type(ModelTurn))
        end = self.end
        if n == 0 and end and end.turns is not None:
            return end.turns
        return n

    @property
    def outcome(self) -> str:
        """``end.reason``, or ``incomplete`` when the session never ended (crash, kill)."""
        end = self.end
        return end.reason if end else "incomplete"

    @property
    def success(self) -> bool | None:
        """Whether the session did its job: True or False when that is known, None when it
        is not (the session never ended, or it finished unverified).

        In order: ``end.success`` (the user answered "Did that do it?", or the runner
        judged it); else the last success check; else any end but ``finished`` is a
        failure. A model saying it is done proves nothing: ``finished`` alone is None.
        """
        end = self.end
        if end is None:
            return None
        if end.success is not None:
            return end.success
        checks = self.of_type(Check)
        if checks:
            return checks[-1].success
        if end.reason != "finished":
            return False
        return None

    @property
    def verdict(self) -> str:
        """``confirmed``, ``failed``, ``unverified`` (finished, nobody checked) or
        ``incomplete`` (never ended)."""
        if self.end is None:
            return "incomplete"
        success = self.success
        if success is None:
            return "unverified"
        return "confirmed" if success else "failed"


def _parse_line(raw: bytes) -> tuple[TranscriptEvent | str | None, str | None]:
    """(the event, or the type name of an unknown event; None and why when unreadable)."""
    try:
        line = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"not valid JSON ({exc.__class__.__name__}), truncated or corrupt"
    if not isinstance(line, dict):
        return None, "not a JSON object"
    missing = [k for k in BASE_KEYS if k not in line]
    if missing:
        return None, f"missing {', '.join(missing)}"
    if not isinstance(line["v"], int) or not isinstance(line["type"], str):
        return None, "'v' must be an integer and 'type' a string"
    if line["v"] > VERSION:
        return None, f"format v{line['v']} is newer than this shellagent reads (v{VERSION})"
    line = upgrade(line)
    try:
        event = read_event(line)
    except EventError as exc:
        return None, f"bad {exc.message}"
    if event is None:
        return str(line["type"]), None
    if event.ts is None or event.seq is None:
        return None, "'ts' must be a number and 'seq' an integer"
    return event, None


def read_transcript(path: Path | str) -> Transcript:
    """Every readable event of one transcript file; skipped lines go to ``problems``."""
    path = Path(path)
    events: list[TranscriptEvent] = []
    problems: list[str] = []
    unknown: dict[str, None] = {}
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            event, why = _parse_line(raw)
            if isinstance(event, str):
                unknown[event] = None
            elif event is None:
                problem = f"{path}:{number}: skipped line: {why}"
                problems.append(problem)
                log.warning("%s", problem)
            else:
                events.append(event)
    return Transcript(path=path, events=events, problems=problems, unknown=sorted(unknown))


def transcript_paths(directory: Path | None = None) -> list[Path]:
    """Transcript files, oldest session first (session ids sort by time)."""
    directory = directory or paths.transcripts_dir()
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.name.endswith(SUFFIX) and p.is_file())


def iter_transcripts(directory: Path | None = None) -> Iterator[Transcript]:
    """Read each transcript in turn; a file that cannot be opened yields a problem-only one."""
    for path in transcript_paths(directory):
        try:
            yield read_transcript(path)
        except OSError as exc:
            problem = f"{path}: cannot read: {exc.strerror}"
            log.warning("%s", problem)
            yield Transcript(path=path, events=[], problems=[problem])


@dataclass(frozen=True)
class SessionSummary:
    """One row of ``shellagent logs list``."""

    session_id: str
    path: Path
    started: float | None
    task: str
    model: str
    turns: int
    outcome: str
    success: bool | None


def summarize(transcript: Transcript) -> SessionSummary:
    return SessionSummary(
        session_id=transcript.session_id,
        path=transcript.path,
        started=transcript.started,
        task=transcript.task,
        model=transcript.model,
        turns=transcript.turns,
        outcome=transcript.outcome,
        success=transcript.success,
    )


def list_sessions(directory: Path | None = None) -> list[SessionSummary]:
    """A summary of every stored session, oldest first."""
    return [summarize(t) for t in iter_transcripts(directory)]


def find_session(ident: str, directory: Path | None = None) -> Path:
    """The transcript whose session id is ``ident`` or uniquely starts with it."""
    candidates = transcript_paths(directory)
    exact = [p for p in candidates if p.name == f"{ident}{SUFFIX}"]
    if exact:
        return exact[0]
    matches = [p for p in candidates if ident and p.name.startswith(ident)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise InputError(
            f"no session {ident!r}", hint="`shellagent logs list` shows the session ids"
        )
    names = ", ".join(p.name.removesuffix(SUFFIX) for p in matches[:5])
    raise InputError(f"session id {ident!r} is ambiguous: {names}", hint="type more of the id")
