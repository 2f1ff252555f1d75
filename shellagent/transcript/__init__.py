"""Transcripts: the append-only, redacted record of every session, and its exports.

The agent loop writes typed events (``shellagent.events``) through a ``TranscriptSink``
(``TranscriptWriter`` on disk, ``shellagent.testing.MemorySink`` in tests); ``logs`` and
``export`` read files back with ``read_transcript``. The line format is documented in
``shellagent/events/transcript.py`` and ``docs/transcripts.md``.
"""

from __future__ import annotations

from shellagent.events import MIGRATIONS, TRANSCRIPT_EVENTS, VERSION, TranscriptEvent, json_schema
from shellagent.transcript.episode import EpisodeSink
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
    "EpisodeSink",
    "ExportReport",
    "FORMATS",
    "MIGRATIONS",
    "RedactingFilter",
    "Redactor",
    "SessionSummary",
    "Step",
    "TRANSCRIPT_EVENTS",
    "Transcript",
    "TranscriptError",
    "TranscriptEvent",
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
