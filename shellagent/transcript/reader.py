"""Reading transcripts back: tolerant of crashes, corruption, newer and older writers.

A line that is not a JSON object, lacks the base keys, or is a known event type with
missing or mistyped fields is skipped and reported as ``"<file>:<line>: <why>"`` in
``Transcript.problems`` (and logged). Unknown keys and unknown event types are kept and
passed through untouched; lines of older format versions are upgraded by the migrations
in ``events.py``; lines of a newer format version than this reader knows are skipped.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from shellagent import paths
from shellagent.errors import InputError
from shellagent.transcript.events import BASE_KEYS, EVENT_TYPES, VERSION, Event, upgrade
from shellagent.transcript.store import SUFFIX

log = logging.getLogger("shellagent.transcript")


@dataclass(frozen=True)
class Transcript:
    """One session as read from disk: its valid events in order, and what was skipped."""

    path: Path
    events: list[Event]
    problems: list[str] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        start = self.start
        if start and isinstance(start.get("session"), str):
            return str(start["session"])
        return self.path.name.removesuffix(SUFFIX)

    @property
    def start(self) -> Event | None:
        return next((e for e in self.events if e["type"] == "session_start"), None)

    @property
    def end(self) -> Event | None:
        return next((e for e in reversed(self.events) if e["type"] == "end"), None)

    @property
    def started(self) -> float | None:
        start = self.start or (self.events[0] if self.events else None)
        return float(start["ts"]) if start else None

    @property
    def task(self) -> str:
        return str((self.start or {}).get("task", ""))

    @property
    def model(self) -> str:
        return str((self.start or {}).get("model") or "")

    def of_type(self, kind: str) -> list[Event]:
        return [e for e in self.events if e["type"] == kind]

    @property
    def turns(self) -> int:
        n = len(self.of_type("model_turn"))
        end = self.end
        if n == 0 and end and isinstance(end.get("turns"), int):
            return int(end["turns"])
        return n

    @property
    def outcome(self) -> str:
        """``end.reason``, or ``incomplete`` when the session never ended (crash, kill)."""
        end = self.end
        return str(end["reason"]) if end else "incomplete"

    @property
    def success(self) -> bool | None:
        """Whether the session did its job; None when it never ended.

        In order: ``end.success`` when the loop set it; else the last success check;
        else ``finished`` with a last command that exited 0 (or no command at all).
        Any other end reason is a failure.
        """
        end = self.end
        if end is None:
            return None
        if isinstance(end.get("success"), bool):
            return bool(end["success"])
        checks = self.of_type("check")
        if checks:
            return bool(checks[-1]["success"])
        if end["reason"] != "finished":
            return False
        runs = self.of_type("execution")
        return not runs or runs[-1].get("exit_code") == 0


@cache
def _validator(kind: str) -> Any:
    # pydantic is imported only when reading back, never on the writer's path.
    from pydantic import ConfigDict, TypeAdapter, with_config

    allowing = with_config(ConfigDict(extra="allow"))(EVENT_TYPES[kind])
    return TypeAdapter(allowing)


def _parse_line(raw: bytes) -> tuple[Event | None, str | None]:
    try:
        event = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"not valid JSON ({exc.__class__.__name__}), truncated or corrupt"
    if not isinstance(event, dict):
        return None, "not a JSON object"
    missing = [k for k in BASE_KEYS if k not in event]
    if missing:
        return None, f"missing {', '.join(missing)}"
    if not isinstance(event["v"], int) or not isinstance(event["type"], str):
        return None, "'v' must be an integer and 'type' a string"
    if event["v"] > VERSION:
        return None, f"format v{event['v']} is newer than this shellagent reads (v{VERSION})"
    event = upgrade(event)
    if event["type"] in EVENT_TYPES:
        from pydantic import ValidationError

        try:
            event = _validator(event["type"]).validate_python(event)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            return None, f"bad {event['type']} event: {where}: {first['msg']}"
    return event, None


def read_transcript(path: Path | str) -> Transcript:
    """Every readable event of one transcript file; skipped lines go to ``problems``."""
    path = Path(path)
    events: list[Event] = []
    problems: list[str] = []
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            event, why = _parse_line(raw)
            if event is None:
                problem = f"{path}:{number}: skipped line: {why}"
                problems.append(problem)
                log.warning("%s", problem)
            else:
                events.append(event)
    return Transcript(path=path, events=events, problems=problems)


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
