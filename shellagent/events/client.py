"""The client -> daemon messages: one dataclass per kind, each field with the limits the
daemon holds it to as it reads it (``shellagent.daemon.messages``), and their registry
``CLIENT_MESSAGES``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from shellagent.events.words import OMIT, ApprovalKind, ChangesDecision, ConfirmAnswer, Scope

# -- client -> daemon messages -----------------------------------------------------------

_TEXT_MAX = 64 * 1024


def _checked(default: Any = dataclasses.MISSING, **limits: Any) -> Any:
    """A client message field the daemon also holds to ``limits`` (keywords of pydantic's
    ``Field``: ``min_length``, ``max_length``, ``ge``, ``le``, ``pattern``) as it reads it.
    A field with a default is left out of the message while it holds it, so a daemon that
    predates the field still takes every message that does not use it."""
    metadata = {"limits": limits}
    if default is dataclasses.MISSING:
        return field(metadata=metadata)
    return field(default=default, metadata=metadata | OMIT)


@dataclass(frozen=True)
class _Client:
    kind: ClassVar[str] = ""


@dataclass(frozen=True)
class Ask(_Client):
    """One task, sent first: what to do, where, and who can answer the policy's questions."""

    kind: ClassVar[str] = "ask"
    task: str = _checked(min_length=1, max_length=_TEXT_MAX)
    cwd: str = _checked(min_length=1, max_length=4096)
    model: str | None = _checked(None, max_length=4096)
    dry_run: bool = _checked(False)
    yes: bool = _checked(False)  # approve every ``ask`` without asking (``ask -y``)
    # False when nobody can answer: every ``ask`` is refused (unless ``yes``)
    interactive: bool = _checked(True)
    max_turns: int | None = _checked(None, ge=1, le=200)
    confirm: bool = _checked(True)  # ask "Did that do it?" at the end (``ask --json``: False)
    # with ``yes``: apply the change set at the end without asking (``ask -y --apply``)
    apply: bool = _checked(False)
    # only the first proposed command is wanted (``ask --propose``, a shell key binding)
    propose: bool = _checked(False)
    # a follow-up of this session (an id or a unique prefix; ``last``: the newest)
    continues: str | None = _checked(None, max_length=64, pattern=r"^[0-9A-Za-z-]+$")
    umask: int | None = _checked(None, ge=0, le=0o777)  # the task's commands create files with it
    # the recipe the user picked after saying the last answer did not do it: run it first
    pick: str | None = _checked(None, max_length=200, pattern=r"^[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class ApprovalReply(_Client):
    """The answer to an ``approval_request``: ``command`` must be the one asked about."""

    kind: ClassVar[str] = "approval"
    id: int = _checked(ge=0)
    decision: ApprovalKind = _checked()
    command: str = _checked(max_length=_TEXT_MAX)
    edited: str | None = _checked(None, max_length=_TEXT_MAX)
    reason: str = _checked("", max_length=4096)
    scope: Scope | None = _checked(None)


@dataclass(frozen=True)
class ChangesReply(_Client):
    """The answer to a ``changes`` message that carries an ``id``."""

    kind: ClassVar[str] = "changes"
    id: int = _checked(ge=0)
    decision: ChangesDecision = _checked()


@dataclass(frozen=True)
class ConfirmReply(_Client):
    """The answer to ``confirm``: did that do it?"""

    kind: ClassVar[str] = "confirm"
    id: int = _checked(ge=0)
    answer: ConfirmAnswer = _checked()
    # with "no": the alternative to run next (1-based; 0: none)
    pick: int = _checked(0, ge=0, le=9)


@dataclass(frozen=True)
class ChoiceReply(_Client):
    """The answer to ``choice``: 0 keeps what there is, N runs the Nth alternative."""

    kind: ClassVar[str] = "choice"
    id: int = _checked(ge=0)
    pick: int = _checked(ge=0, le=9)


@dataclass(frozen=True)
class Cancel(_Client):
    """Stop the task (Ctrl-C); it ends ``cancelled``."""

    kind: ClassVar[str] = "cancel"


@dataclass(frozen=True)
class Status(_Client):
    """Ask the daemon for its ``status`` (``DaemonStatus``)."""

    kind: ClassVar[str] = "status"


@dataclass(frozen=True)
class Stop(_Client):
    """Shut the daemon down; its running tasks are cancelled."""

    kind: ClassVar[str] = "stop"


ClientMessage = (
    Ask | ApprovalReply | ChangesReply | ChoiceReply | ConfirmReply | Cancel | Status | Stop
)

CLIENT_MESSAGES: dict[str, type[ClientMessage]] = {
    cls.kind: cls
    for cls in (
        Ask,
        ApprovalReply,
        ChangesReply,
        ChoiceReply,
        ConfirmReply,
        Cancel,
        Status,
        Stop,
    )
}
"""Client -> daemon message kind -> its dataclass (the daemon checks them strictly:
``shellagent.daemon.messages``)."""
