"""Transcripts: the append-only, redacted record of every session, and its exports.

The agent loop writes through a ``TranscriptSink`` (``TranscriptWriter`` on disk,
``shellagent.testing.MemorySink`` in tests); ``logs`` and ``export`` read files back with
``read_transcript``. The line format is documented in ``events.py`` and ``docs/transcripts.md``.
"""

from __future__ import annotations

from shellagent.transcript.events import EVENT_TYPES, MIGRATIONS, VERSION, Event, json_schema
from shellagent.transcript.export import FORMATS, ExportReport, export
from shellagent.transcript.reader import (
    SessionSummary,
    Transcript,
    find_session,
    iter_transcripts,
    list_sessions,
    read_transcript,
)
from shellagent.transcript.redact import RedactingFilter, Redactor
from shellagent.transcript.render import render_table, render_transcript
from shellagent.transcript.reward import episode_reward
from shellagent.transcript.steps import Step, conversation
from shellagent.transcript.store import (
    TranscriptError,
    TranscriptSink,
    TranscriptWriter,
    new_session_id,
)

__all__ = [
    "EVENT_TYPES",
    "Event",
    "ExportReport",
    "FORMATS",
    "MIGRATIONS",
    "RedactingFilter",
    "Redactor",
    "SessionSummary",
    "Step",
    "Transcript",
    "TranscriptError",
    "TranscriptSink",
    "TranscriptWriter",
    "VERSION",
    "conversation",
    "episode_reward",
    "export",
    "find_session",
    "iter_transcripts",
    "json_schema",
    "list_sessions",
    "new_session_id",
    "read_transcript",
    "render_table",
    "render_transcript",
]
