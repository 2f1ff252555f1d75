"""A transcript regrouped into turns: what the model said, what happened to it, what it saw.

Exports and ``logs show`` both need the same view of a session: the conversation prefix
(system prompt and task), then one ``Step`` per assistant reply with its parsed action, the
policy verdict, the user's approval, the execution, and the observation messages fed back.

An assistant ``message`` belongs to the turn named by its ``turn`` key; without one, the
n-th assistant message belongs to the n-th ``model_turn``. Messages that follow an assistant
message, up to the next one, are its observations.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from shellagent.transcript.events import Event
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
    model_turn: Event | None = None
    policy: Event | None = None
    approval: Event | None = None
    execution: Event | None = None
    observations: list[str] = field(default_factory=list)

    @property
    def action(self) -> dict[str, Any] | None:
        action = (self.model_turn or {}).get("action")
        return action if isinstance(action, dict) else None

    @property
    def command(self) -> str | None:
        """The command the model proposed (before any edit)."""
        for source in (self.action or {}, self.policy or {}, self.approval or {}):
            for key in ("cmd", "command"):
                if isinstance(source.get(key), str):
                    return str(source[key])
        return None

    @property
    def executed_command(self) -> str | None:
        return str(self.execution["command"]) if self.execution else None

    @property
    def exit_code(self) -> int | None:
        code = (self.execution or {}).get("exit_code")
        return code if isinstance(code, int) else None

    @property
    def status(self) -> Status:
        if self.model_turn is not None and self.model_turn.get("valid") is False:
            return "invalid"
        if self.policy is not None and self.policy.get("decision") == "deny":
            return "denied"
        decision = (self.approval or {}).get("decision")
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
        edited = (self.approval or {}).get("edited_command") or self.executed_command
        original = self.command
        if not isinstance(edited, str) or original is None:
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
    by_turn: dict[int, dict[str, Event]] = {}
    turn_order: list[int] = []
    for event in transcript.events:
        turn = event.get("turn")
        if event["type"] in ("model_turn", "policy", "approval", "execution") and isinstance(
            turn, int
        ):
            slot = by_turn.setdefault(turn, {})
            slot[event["type"]] = event  # a repeated event for a turn: the last one wins
            if event["type"] == "model_turn":
                turn_order.append(turn)

    prefix: list[dict[str, str]] = []
    steps: list[Step] = []
    messages: list[dict[str, str]] = []
    step_of_message: list[int | None] = []
    for event in transcript.events:
        if event["type"] != "message":
            continue
        message = {"role": str(event["role"]), "content": str(event["content"])}
        if message["role"] == "assistant":
            k = len(steps)
            turn = event.get("turn")
            if not isinstance(turn, int):
                turn = turn_order[k] if k < len(turn_order) else k + 1
            slot = by_turn.get(turn, {})
            steps.append(
                Step(
                    turn=turn,
                    reply=message["content"],
                    model_turn=slot.get("model_turn"),
                    policy=slot.get("policy"),
                    approval=slot.get("approval"),
                    execution=slot.get("execution"),
                )
            )
        elif steps:
            steps[-1].observations.append(message["content"])
        else:
            prefix.append(message)
        messages.append(message)
        step_of_message.append(len(steps) - 1 if steps else None)
    return Conversation(prefix, steps, messages, step_of_message)
