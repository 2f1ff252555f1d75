"""The questions a task asks its client, one at a time, and the answers it is given.

The worker thread asks (``open`` sends nothing itself: the worker sends the question's
event with the ``id``), then waits (``wait``); the server's thread delivers the client's
reply (``answer``), which must answer the question pending, of the kind asked, and an
approval must echo the very command asked about: a mismatch is refused, never guessed at.
A cancelled task stops every wait.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Literal

from shellagent.events import ApprovalReply, ChangesReply, ChoiceReply, ConfirmReply

__all__ = ["Pending", "Questions", "Reply"]

Reply = ApprovalReply | ChangesReply | ChoiceReply | ConfirmReply
Kind = Literal["approval", "changes", "choice", "confirm"]


@dataclass
class Pending:
    """One question: its id, the command an approval is about ("" for another question),
    and the reply it expects."""

    id: int
    command: str
    kind: Kind = "approval"
    answered: threading.Event = field(default_factory=threading.Event)
    reply: Reply | None = None


class Questions:
    """The one question a task has pending; safe to ``answer`` from any thread."""

    def __init__(self, cancelled: threading.Event) -> None:
        self.cancelled = cancelled
        self._lock = threading.Lock()
        self._pending: Pending | None = None
        self._next_id = 0

    def open(self, kind: Kind, command: str = "", *, waiting: bool = True) -> Pending:
        """A new question with its id; the one pending when ``waiting`` (a change set
        only shown, with no answer expected, is not)."""
        with self._lock:
            self._next_id += 1
            pending = Pending(self._next_id, command, kind)
            if waiting:
                self._pending = pending
        return pending

    def wait(self, pending: Pending) -> Reply | None:
        """The client's reply to ``pending``; None if the task is cancelled meanwhile."""
        while not pending.answered.wait(0.1):
            if self.cancelled.is_set():
                with self._lock:
                    self._pending = None
                return None
        return pending.reply

    def answer(self, reply: Reply) -> str | None:
        """Deliver the client's answer; an error message if it answers nothing pending."""
        with self._lock:
            pending = self._pending
            if pending is None or pending.id != reply.id:
                return f"no request {reply.id} is waiting for an answer"
            if reply.kind != pending.kind:
                return f"request {reply.id} asks about something else"
            if isinstance(reply, ApprovalReply):
                if reply.command != pending.command:
                    return "the approved command differs from the one asked about: not run"
                if reply.decision == "edit" and not (reply.edited or "").strip():
                    return "an edit needs the edited command"
                if reply.decision == "always" and reply.scope is None:
                    return "'always' needs a scope: session, directory or everywhere"
            pending.reply = reply
            self._pending = None
        pending.answered.set()
        return None
