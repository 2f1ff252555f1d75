"""The words events share (why a session ended, what a person may answer, who wrote a
command …), the exit status of an ending, the error of a bad event, and how a field is
left out of its JSON object while unset."""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal

from shellagent.errors import InputError

__all__ = [
    "OMIT",
    "ApprovalKind",
    "ChangesDecision",
    "ChangesOutcome",
    "CommandOrigin",
    "ConfirmAnswer",
    "EndReason",
    "EventError",
    "EventSource",
    "RecordedApproval",
    "ReplyStop",
    "Role",
    "Scope",
    "Verdict",
    "exit_code",
    "optional",
]

# -- the shared words --------------------------------------------------------------------

EndReason = Literal["finished", "turn_limit", "repeated_failure", "user_quit", "cancelled", "error"]
"""Why a session ended."""
ApprovalKind = Literal["approve", "refuse", "edit", "always", "quit"]
"""What a person can answer when the policy asks."""
RecordedApproval = Literal["approve", "refuse", "edit", "always", "quit", "auto"]
"""An answer as recorded: ``auto`` is an approval given by ``-y`` or a replayed job."""
Scope = Literal["session", "directory", "everywhere"]
"""Where an ``always`` answer applies."""
Verdict = Literal["allow", "ask", "deny"]
"""The policy's decision on a command."""
Role = Literal["system", "user", "assistant"]
EventSource = Literal["ask", "eval", "job", "propose"]  # propose: a shell key binding
"""What started a session: ``ask``, a task-set run, a scheduled job."""
ChangesDecision = Literal["apply", "discard", "keep"]
"""What a person can answer about a session's change set."""
ChangesOutcome = Literal["applied", "discarded", "kept", "refused", "dry_run", "none"]
"""What became of a session's change set."""
ReplyStop = Literal["end", "length", "repeat"]
"""Why a reply ended: the model ended it, the token limit, or it was cut for looping."""
ConfirmAnswer = Literal["yes", "no", "skip"]
"""What a person can answer to "Did that do it?"."""
CommandOrigin = Literal["recipe", "model", "user"]
"""Who wrote a command: a verified recipe the model filled, the model itself, or the user
(typed or edited at the approval prompt)."""

_EXIT_CODES: dict[str, int] = {"finished": 0, "cancelled": 130}


def exit_code(reason: str) -> int:
    """The exit status of a session that ended for ``reason``: 0 finished, 130 cancelled,
    1 for every other ending."""
    return _EXIT_CODES.get(reason, 1)


class EventError(InputError):
    """A JSON object that is not a valid event: unknown kind, missing or mistyped field."""


# ``omit`` fields are left out of the JSON object while they hold their default, as the
# format has always written them (an ``approval`` without an edit has no ``edited_command``).
OMIT = {"omit": True}


def optional(default: Any = None) -> Any:
    """A field left out of the JSON object while it holds ``default``."""
    return field(default=default, metadata=OMIT)
