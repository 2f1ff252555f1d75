"""A transcript regrouped into turns: what the model said, what happened to it, what it saw.

Exports and ``logs show`` both need the same view of a session: the conversation prefix
(system prompt and task), then one ``Step`` per assistant reply with its parsed action, the
policy verdict, the user's approval, the execution, and the observation messages fed back.

An assistant ``message`` belongs to the turn named by its ``turn`` key; without one, the
n-th assistant message belongs to the n-th ``model_turn``. Messages that follow an assistant
message, up to the next one, are its observations. A ``system`` message with a ``turn`` is a
note for the reader (the recipe step's), which no model saw: it is in no conversation.

A step whose ``model_turn`` records a ``prompt`` (the recipe step's question) answered that
prompt, not the conversation: ``Step.prompt`` holds it, and the free loop never saw its
reply (it saw the observations that followed, which were told to it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from shellagent.events import (
    ApprovalRecord,
    ChatMessage,
    Execution,
    ModelTurn,
    PolicyVerdict,
    TranscriptEvent,
)
from shellagent.transcript.reader import Transcript

Status = Literal["executed", "edited", "refused", "denied", "quit", "invalid", "answer", "none"]
ACCEPTED = ("executed", "edited")
"""Statuses whose command ran in the shell."""
EXCLUDED = ("refused", "denied", "quit", "invalid")
"""Statuses whose reply is not something to train a model to say."""


@dataclass
class Step:
    """One assistant turn and everything that followed from it."""

    turn: int
    reply: str
    model_turn: ModelTurn | None = None
    policy: PolicyVerdict | None = None
    approval: ApprovalRecord | None = None
    execution: Execution | None = None
    observations: list[str] = field(default_factory=list)

    @property
    def prompt(self) -> list[dict[str, str]]:
        """The messages this reply answered when they are not the conversation's (the
        recipe step's question); empty for a reply to the conversation, and in files
        written before the prompt was recorded."""
        asked = self.model_turn.prompt if self.model_turn else ()
        return [{"role": m.role, "content": m.content} for m in asked]

    @property
    def action(self) -> dict[str, str] | None:
        return self.model_turn.action if self.model_turn else None

    @property
    def command(self) -> str | None:
        """The command the model proposed (before any edit)."""
        action = self.action or {}
        for key in ("cmd", "command"):
            if key in action:
                return action[key]
        for event in (self.policy, self.approval):
            if event is not None:
                return event.command
        return None

    @property
    def executed_command(self) -> str | None:
        return self.execution.command if self.execution else None

    @property
    def exit_code(self) -> int | None:
        return self.execution.exit_code if self.execution else None

    @property
    def status(self) -> Status:
        if self.model_turn is not None and self.model_turn.valid is False:
            return "invalid"
        if self.policy is not None and self.policy.decision == "deny":
            return "denied"
        decision = self.approval.decision if self.approval else None
        if decision == "refuse":
            return "refused"
        if decision == "quit":
            return "quit"
        if decision == "edit":
            return "edited"
        if self.execution is not None:
            return "executed"
        if self.command is None and self.action is not None:
            return "answer"
        return "none"

    def accepted_reply(self) -> str | None:
        """The reply the user accepted: the model's own, or rewritten with the user's edit.

        None when the edit cannot be written back into the reply's action format.
        """
        if self.status != "edited":
            return self.reply
        edited = (self.approval.edited_command if self.approval else None) or (
            self.executed_command
        )
        original = self.command
        if edited is None or original is None:
            return None
        return rewrite_command(self.reply, original, edited)


def rewrite_command(reply: str, original: str, edited: str) -> str | None:
    """``reply`` (a JSON action) with its command replaced, in the canonical action layout."""
    try:
        action = json.loads(reply)
    except ValueError:
        return None
    if not isinstance(action, dict):
        return None
    for key in ("cmd", "command"):
        if isinstance(action.get(key), str) and action[key].strip() == original.strip():
            action[key] = edited
            return json.dumps(action, ensure_ascii=False, separators=(", ", ": "))
    return None


@dataclass
class Conversation:
    """The opening messages (before the first reply) and the steps, in order."""

    prefix: list[dict[str, str]]
    steps: list[Step]
    messages: list[dict[str, str]]
    step_of_message: list[int | None]
    """For each message, the index of the step it belongs to (None for the prefix)."""


def conversation(transcript: Transcript) -> Conversation:
    """Group a transcript's events into steps (see the module docstring for the rule)."""
    by_turn: dict[int, dict[str, TranscriptEvent]] = {}
    turn_order: list[int] = []
    for event in transcript.events:
        if isinstance(event, ModelTurn | PolicyVerdict | ApprovalRecord | Execution):
            slot = by_turn.setdefault(event.turn, {})
            slot[event.kind] = event  # a repeated event for a turn: the last one wins
            if isinstance(event, ModelTurn):
                turn_order.append(event.turn)

    prefix: list[dict[str, str]] = []
    steps: list[Step] = []
    messages: list[dict[str, str]] = []
    step_of_message: list[int | None] = []
    for event in transcript.events:
        if not isinstance(event, ChatMessage) or (
            event.role == "system" and event.turn is not None
        ):
            continue  # not a message, or a note for the reader
        message = {"role": event.role, "content": event.content}
        if event.role == "assistant":
            k = len(steps)
            turn = event.turn
            if turn is None:
                turn = turn_order[k] if k < len(turn_order) else k + 1
            slot = by_turn.get(turn, {})
            steps.append(
                Step(
                    turn=turn,
                    reply=event.content,
                    model_turn=_of(slot, ModelTurn),
                    policy=_of(slot, PolicyVerdict),
                    approval=_of(slot, ApprovalRecord),
                    execution=_of(slot, Execution),
                )
            )
        elif steps:
            steps[-1].observations.append(message["content"])
        else:
            prefix.append(message)
        messages.append(message)
        step_of_message.append(len(steps) - 1 if steps else None)
    return Conversation(prefix, steps, messages, step_of_message)


_E = TypeVar("_E", ModelTurn, PolicyVerdict, ApprovalRecord, Execution)


def _of(slot: dict[str, TranscriptEvent], kind: type[_E]) -> _E | None:
    event = slot.get(kind.kind)
    return event if isinstance(event, kind) else None
