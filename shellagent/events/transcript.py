"""The transcript events: one dataclass per kind of line of a transcript file
(``docs/transcripts.md``), and their registry ``TRANSCRIPT_EVENTS``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from shellagent.events.words import (
    OMIT,
    ChangesOutcome,
    CommandOrigin,
    EndReason,
    EventSource,
    RecordedApproval,
    ReplyStop,
    Role,
    Scope,
    Verdict,
    optional,
)

# -- transcript events -------------------------------------------------------------------


@dataclass(frozen=True)
class _Line:
    """What every transcript line carries besides its own fields: ``ts`` (unix seconds)
    and ``seq`` (0, 1, 2 … in the session). The sink stamps them; ``v`` and ``type`` are
    added on the way to disk."""

    kind: ClassVar[str] = ""
    ts: float | None = field(default=None, kw_only=True, metadata=OMIT)
    seq: int | None = field(default=None, kw_only=True, metadata=OMIT)


@dataclass(frozen=True)
class SessionStart(_Line):
    """First line of every transcript: what ran, with which model, policy and sandbox."""

    kind: ClassVar[str] = "session_start"
    session: str
    task: str
    model: str | None = optional()
    backend: str | None = optional()
    policy: str | None = optional()
    profile: str | None = optional()
    cwd: str | None = optional()
    versions: dict[str, str] | None = optional()
    source: EventSource | None = optional()
    task_id: str | None = optional()
    # the session this one follows up (``ask -c``, ``--resume``, an interactive session)
    continues: str | None = optional()


@dataclass(frozen=True)
class ChatMessage(_Line):
    """A message appended to the model's conversation, exactly as the model saw it.

    The system prompt, the task, each raw assistant reply and each observation fed back.
    ``turn`` (optional) ties an assistant reply and the observations that follow it to
    its ``model_turn``; without it, the n-th assistant message belongs to the n-th turn.
    Two kinds are not the conversation's: a ``system`` message with a ``turn`` is a note
    for the reader (the recipe step's), which no model saw; and the reply of a
    ``model_turn`` that has a ``prompt`` answered that prompt, not the conversation.
    """

    kind: ClassVar[str] = "message"
    role: Role
    content: str
    turn: int | None = optional()


@dataclass(frozen=True)
class PromptMessage:
    """One message of a prompt recorded with the reply that answered it."""

    role: Role
    content: str


@dataclass(frozen=True)
class ModelTurn(_Line):
    """One generation: the raw reply, the parsed action and what it cost. ``prompt``: the
    messages the reply answers when they are not the conversation's (the recipe step's
    question, ``agent/recipe_prompt.py``); empty when the reply answered the conversation."""

    kind: ClassVar[str] = "model_turn"
    turn: int
    raw: str
    action: dict[str, str] | None = None
    valid: bool | None = optional()
    stop: ReplyStop | None = optional()
    prompt_tokens: int | None = None
    evaluated_prompt_tokens: int | None = None
    generated_tokens: int | None = None
    duration_s: float | None = None
    token_ids: tuple[int, ...] | None = None
    logprobs: tuple[float, ...] | None = None
    redacted: bool = optional(False)
    # times the conversation had been cut to fit the model's context, up to this turn
    context_trims: int | None = optional()
    prompt: tuple[PromptMessage, ...] = optional(())


@dataclass(frozen=True, kw_only=True)
class PolicySegment:
    """One simple command of a ``policy`` line, as the policy judged it (its ``Segment``).
    Every shellagent has written all of these keys but the last two."""

    argv: tuple[str, ...]  # after unwrapping wrappers
    program: str
    decision: Verdict
    reasons: tuple[str, ...] = ()
    executable: str | None = None  # the resolved path when argv[0] held a slash
    wrappers: tuple[str, ...] = ()
    assignments: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    context: str = ""
    traits: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()  # ids of the rules that decided
    key: str  # the exact normalised text "always allow" stores
    read_only: bool = False  # since the policy's program specs
    effects: tuple[str, ...] = ()  # likewise


@dataclass(frozen=True)
class PolicyVerdict(_Line):
    """The policy engine's verdict on a proposed command."""

    kind: ClassVar[str] = "policy"
    turn: int
    command: str
    decision: Verdict
    reasons: tuple[str, ...] = ()
    segments: tuple[PolicySegment, ...] = ()


@dataclass(frozen=True)
class ApprovalRecord(_Line):
    """What the user (or ``--yes``: ``auto``) decided about a command the policy asked about."""

    kind: ClassVar[str] = "approval"
    turn: int
    command: str
    decision: RecordedApproval
    reason: str | None = None
    edited_command: str | None = optional()
    scope: Scope | None = optional()


@dataclass(frozen=True)
class Execution(_Line):
    """A command that ran in the sandbox, with its output (as the model saw it, when a
    model ran it; a replayed job records the output itself and the sandbox's ``note``)."""

    kind: ClassVar[str] = "execution"
    turn: int
    command: str
    output: str
    exit_code: int | None
    duration_s: float | None = None
    timed_out: bool = False
    truncated: bool = False
    shell_restarted: bool = False
    note: str = optional("")
    # ran where the kernel refuses writes (the policy allowed it as read-only) ...
    confined: bool = optional(False)
    # ... and something it tried was refused: the policy's read-only claim was wrong
    refused: bool = optional(False)
    # who wrote the command that ran (None: not recorded, a job's replay or an older file)
    origin: CommandOrigin | None = optional()


@dataclass(frozen=True)
class Check(_Line):
    """A task set's success check, run in a fresh shell after the agent finished."""

    kind: ClassVar[str] = "check"
    exit_code: int | None
    success: bool
    command: str | None = optional()
    output: str | None = optional()


@dataclass(frozen=True)
class JobInstalled(_Line):
    """A recurring job the user approved, as it was installed (``shellagent jobs show``)."""

    kind: ClassVar[str] = "job"
    turn: int
    job_id: str
    name: str
    commands: tuple[str, ...]
    schedule: str
    on_calendar: str
    cron: str
    installed: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChangeSetRecord(_Line):
    """What the session's commands changed in the user's files (seen through overlays),
    and what became of it: applied, discarded, kept for ``shellagent apply``, refused."""

    kind: ClassVar[str] = "changes"
    outcome: ChangesOutcome
    created: int = 0
    modified: int = 0
    deleted: int = 0
    renamed: int = 0
    paths: tuple[str, ...] = ()
    reason: str = optional("")


@dataclass(frozen=True)
class End(_Line):
    """Last line of a complete transcript. A file without one was interrupted."""

    kind: ClassVar[str] = "end"
    reason: EndReason
    summary: str | None = optional()
    turns: int | None = optional()
    success: bool | None = optional()
    error: str = optional("")
    cwd: str | None = optional()  # the shell's working directory when the session ended
    # what the session does not support of the summary (``agent/support.py``): never
    # trained on, never a worked example
    unsupported: tuple[str, ...] = optional(())
    # the agent presented the result as done, with no stated doubt
    claimed: bool | None = optional()
    # why a result was not claimed, in plain words (``agent/confidence.py``)
    doubts: tuple[str, ...] = optional(())


TranscriptEvent = (
    SessionStart
    | ChatMessage
    | ModelTurn
    | PolicyVerdict
    | ApprovalRecord
    | Execution
    | Check
    | JobInstalled
    | ChangeSetRecord
    | End
)

TRANSCRIPT_EVENTS: dict[str, type[TranscriptEvent]] = {
    cls.kind: cls
    for cls in (
        SessionStart,
        ChatMessage,
        ModelTurn,
        PolicyVerdict,
        ApprovalRecord,
        Execution,
        Check,
        JobInstalled,
        ChangeSetRecord,
        End,
    )
}
"""Transcript event kind -> its dataclass."""
