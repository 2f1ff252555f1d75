"""The sink that holds back a session's ``end`` so its owner can write after the loop.

``end`` is the last line of a complete transcript, but what the loop's owner learns after
the loop is part of the episode too: the change set's fate (``ask`` on overlays), the
success check (task sets), the user's "did that do it?" answer. ``EpisodeSink`` forwards
every other event to the real sink as it comes, keeps the loop's ``end`` back, and writes
it (with what the owner adds) in ``finish``. It also keeps the tallies a task-set result
is made of (turns, exit codes, tokens, the last output), read from the events themselves
so every agent is measured the same way.

``close`` does nothing: the loop is done with the sink, and its owner closes the real one.
"""

from __future__ import annotations

import dataclasses

from shellagent.events import End, EndReason, Execution, ModelTurn, TranscriptEvent
from shellagent.transcript.store import TranscriptSink

__all__ = ["EpisodeSink"]


class EpisodeSink:
    """A ``TranscriptSink`` in front of ``target`` that holds back ``end`` (module doc)."""

    def __init__(self, target: TranscriptSink) -> None:
        self.target = target
        self.session_id: str = target.session_id
        self.end: End | None = None
        self.turns = 0
        self.exit_codes: list[int | None] = []
        self.generated_tokens = 0
        self.last_output = ""

    def write(self, event: TranscriptEvent) -> None:
        if isinstance(event, End):
            self.end = event
            return
        if isinstance(event, ModelTurn):
            self.turns += 1
            self.generated_tokens += event.generated_tokens or 0
        elif isinstance(event, Execution):
            self.exit_codes.append(event.exit_code)
            self.last_output = event.output
        self.target.write(event)

    def close(self) -> None:
        """The loop is done with the sink; its owner closes the real one."""

    def finish(
        self,
        *before: TranscriptEvent,
        fallback: EndReason | None = None,
        success: bool | None = None,
        unsupported: tuple[str, ...] = (),
    ) -> None:
        """Write ``before``, then the held ``end`` with ``success`` and ``unsupported``
        when given, and its turns counted here when it has none. Without a held ``end``,
        a new one for ``fallback`` is written; with neither, none: a transcript without
        ``end`` reads as interrupted, not as failed. The real sink stays open."""
        for event in before:
            self.target.write(event)
        end = self.end if self.end is not None else End(reason=fallback) if fallback else None
        self.end = None
        if end is None:
            return
        if end.turns is None:
            end = dataclasses.replace(end, turns=self.turns)
        if success is not None:
            end = dataclasses.replace(end, success=success)
        if unsupported:
            end = dataclasses.replace(end, unsupported=unsupported)
        self.target.write(end)
