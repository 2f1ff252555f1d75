"""The event model: every transcript line and every message between ``ask`` and the
daemon, one dataclass each.

Writers build these frozen dataclasses and readers get them back; nothing else in
shellagent spells an event as a dict. Standard library only, and cheap to import: ``ask``
reads the daemon's messages with it on its start-up path, and the transcript writer's
path never imports pydantic (only ``json_schema`` does).

The three tables below are the registries ``TRANSCRIPT_EVENTS``, ``WIRE_EVENTS`` and
``CLIENT_MESSAGES``, in their order (``tests/test_architecture.py`` holds them to it).

Transcript events (one JSON object per line, ``docs/transcripts.md``)::

    session_start     SessionStart     what ran: task, model, policy, sandbox profile, versions
    message           ChatMessage      a message of the model's conversation, as it saw it
    model_turn        ModelTurn        one generation: raw reply, parsed action, cost
    policy            PolicyVerdict    the policy's verdict on a proposed command
    approval          ApprovalRecord   what the user (or ``-y``: ``auto``) decided
    execution         Execution        a command that ran, with the output the model saw
    check             Check            a task set's success check
    job               JobInstalled     a recurring job the user approved and shellagent installed
    changes           ChangeSetRecord  what the commands changed in the user's files, and its fate
    end               End              how the session ended (a file without one was interrupted)

Daemon -> client messages (``shellagent.protocol`` frames them)::

    accepted          Accepted         the task has a session, a sandbox and a model
    queued            Queued           waiting for the model
    thinking          Thinking         the model is generating a reply
    invalid           InvalidReply     the reply was not an action; the model is asked again
    proposed          Proposed         a command and the policy's verdict on it
    approval_request  ApprovalNeeded   the policy asks: answer with ``approval``
    approval          Decided          what was decided about it, and by whom
    output            Output           live output of the running command
    result            Result           a command finished
    changes           ChangesReady     the change set (with an ``id``: answer with ``changes``)
    changes_done      ChangesDone      what became of the change set
    choice            ChoiceRequest    not sure: other recipes to run; answer with ``choice``
    confirm           ConfirmRequest   "Did that do it?": answer with ``confirm``
    summary           Summary          the task ended (the last message of a task)
    status            DaemonStatus     the answer to ``status``
    stopping          Stopping         the daemon is shutting down
    error             Failure          something went wrong (``fatal``: the task ended)
    note              Note             information for the person, not a failure

Client -> daemon messages (the daemon reads them strictly, ``shellagent.daemon.messages``)::

    ask               Ask              one task; the first message of a connection
    approval          ApprovalReply    the answer to an ``approval_request``
    changes           ChangesReply     the answer to a ``changes`` that has an ``id``
    choice            ChoiceReply      the answer to ``choice``
    confirm           ConfirmReply     the answer to ``confirm``
    cancel            Cancel           stop the task (Ctrl-C)
    status            Status           the daemon answers with its ``status``
    stop              Stop             shut the daemon down

``to_dict`` turns an event or a client message into its JSON object (``type`` first,
optional keys left out when unset). Client messages are read by the daemon alone, with
pydantic built from these dataclasses (``shellagent.daemon.messages``: unknown keys,
wrong types and values out of bounds are refused). Events are read back in two strengths:

* ``from_dict`` / ``wire_from_dict`` are strict: an unknown ``type``, a missing or mistyped
  field is an ``EventError`` naming it. The ``ask`` client reads the daemon with
  ``wire_from_dict`` (both ends are the same shellagent, so anything else is a fault).
* ``read_event`` is for files: an event kind this version does not know (written by a newer
  shellagent) gives ``None`` so the reader skips it; a known kind is checked strictly. The
  transcript reader (``shellagent.transcript.reader``) uses it.

Keys a reader does not know are ignored by both: adding a key is not a format change. A
change to the meaning of a key bumps ``VERSION`` and appends an upgrade to ``MIGRATIONS``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Literal,
    TypeAlias,
    TypeVar,
    Union,
    get_args,
    get_origin,
)

from shellagent.errors import InputError

if TYPE_CHECKING:  # ``ask`` imports this module: nothing more at run time
    from _typeshed import DataclassInstance

    from shellagent.jsontypes import JsonObject, JsonValue

__all__ = [
    "CLIENT_MESSAGES",
    "MIGRATIONS",
    "TRANSCRIPT_EVENTS",
    "VERSION",
    "WIRE_EVENTS",
    "Accepted",
    "Alternative",
    "ApprovalKind",
    "ApprovalNeeded",
    "ApprovalRecord",
    "ApprovalReply",
    "Ask",
    "Cancel",
    "ChangeSetRecord",
    "ChangesDecision",
    "ChangesDone",
    "ChangesOutcome",
    "ChangesReady",
    "ChangesReply",
    "ChoiceReply",
    "ChoiceRequest",
    "ChatMessage",
    "Check",
    "ClientMessage",
    "CommandOrigin",
    "ConfirmAnswer",
    "ConfirmReply",
    "ConfirmRequest",
    "DaemonStatus",
    "Decided",
    "End",
    "EndReason",
    "EventError",
    "EventSource",
    "Execution",
    "Failure",
    "InvalidReply",
    "JobInstalled",
    "ModelStatus",
    "ModelTurn",
    "Note",
    "Output",
    "PolicySegment",
    "PolicyVerdict",
    "PromptMessage",
    "Proposed",
    "Queued",
    "RecordedApproval",
    "ReplyStop",
    "Result",
    "Role",
    "Scope",
    "SessionStart",
    "SessionStatus",
    "Status",
    "Stop",
    "Stopping",
    "Summary",
    "Thinking",
    "TranscriptEvent",
    "Verdict",
    "WireEvent",
    "exit_code",
    "from_dict",
    "json_schema",
    "read_event",
    "to_dict",
    "upgrade",
    "wire_from_dict",
]

VERSION = 1
"""The transcript format version written by this shellagent."""

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
_OMIT = {"omit": True}


def _optional(default: Any = None) -> Any:
    return field(default=default, metadata=_OMIT)


# -- transcript events -------------------------------------------------------------------


@dataclass(frozen=True)
class _Line:
    """What every transcript line carries besides its own fields: ``ts`` (unix seconds)
    and ``seq`` (0, 1, 2 … in the session). The sink stamps them; ``v`` and ``type`` are
    added on the way to disk."""

    kind: ClassVar[str] = ""
    ts: float | None = field(default=None, kw_only=True, metadata=_OMIT)
    seq: int | None = field(default=None, kw_only=True, metadata=_OMIT)


@dataclass(frozen=True)
class SessionStart(_Line):
    """First line of every transcript: what ran, with which model, policy and sandbox."""

    kind: ClassVar[str] = "session_start"
    session: str
    task: str
    model: str | None = _optional()
    backend: str | None = _optional()
    policy: str | None = _optional()
    profile: str | None = _optional()
    cwd: str | None = _optional()
    versions: dict[str, str] | None = _optional()
    source: EventSource | None = _optional()
    task_id: str | None = _optional()
    # the session this one follows up (``ask -c``, ``--resume``, an interactive session)
    continues: str | None = _optional()


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
    turn: int | None = _optional()


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
    valid: bool | None = _optional()
    stop: ReplyStop | None = _optional()
    prompt_tokens: int | None = None
    evaluated_prompt_tokens: int | None = None
    generated_tokens: int | None = None
    duration_s: float | None = None
    token_ids: tuple[int, ...] | None = None
    logprobs: tuple[float, ...] | None = None
    redacted: bool = _optional(False)
    # times the conversation had been cut to fit the model's context, up to this turn
    context_trims: int | None = _optional()
    prompt: tuple[PromptMessage, ...] = _optional(())


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
    edited_command: str | None = _optional()
    scope: Scope | None = _optional()


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
    note: str = _optional("")
    # ran where the kernel refuses writes (the policy allowed it as read-only) ...
    confined: bool = _optional(False)
    # ... and something it tried was refused: the policy's read-only claim was wrong
    refused: bool = _optional(False)
    # who wrote the command that ran (None: not recorded, a job's replay or an older file)
    origin: CommandOrigin | None = _optional()


@dataclass(frozen=True)
class Check(_Line):
    """A task set's success check, run in a fresh shell after the agent finished."""

    kind: ClassVar[str] = "check"
    exit_code: int | None
    success: bool
    command: str | None = _optional()
    output: str | None = _optional()


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
    reason: str = _optional("")


@dataclass(frozen=True)
class End(_Line):
    """Last line of a complete transcript. A file without one was interrupted."""

    kind: ClassVar[str] = "end"
    reason: EndReason
    summary: str | None = _optional()
    turns: int | None = _optional()
    success: bool | None = _optional()
    error: str = _optional("")
    cwd: str | None = _optional()  # the shell's working directory when the session ended
    # what the session does not support of the summary (``agent/support.py``): never
    # trained on, never a worked example
    unsupported: tuple[str, ...] = _optional(())
    # the agent presented the result as done, with no stated doubt
    claimed: bool | None = _optional()
    # why a result was not claimed, in plain words (``agent/confidence.py``)
    doubts: tuple[str, ...] = _optional(())


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

# -- daemon -> client messages -----------------------------------------------------------


@dataclass(frozen=True)
class _Wire:
    kind: ClassVar[str] = ""


@dataclass(frozen=True)
class Accepted(_Wire):
    """The task has a session, a sandbox and a model."""

    kind: ClassVar[str] = "accepted"
    session: str
    model: str
    # The user's files are seen through overlays: nothing lands before the change set is
    # applied (False: the session writes straight into its writable directories).
    overlay: bool = _optional(False)


@dataclass(frozen=True)
class Queued(_Wire):
    """Waiting for the model: ``position`` tasks are ahead."""

    kind: ClassVar[str] = "queued"
    position: int


@dataclass(frozen=True)
class Thinking(_Wire):
    """The model is generating the reply of ``turn``."""

    kind: ClassVar[str] = "thinking"
    turn: int


@dataclass(frozen=True)
class InvalidReply(_Wire):
    """The reply was not an action (``stop`` says how it ended); the model is asked again."""

    kind: ClassVar[str] = "invalid"
    turn: int
    stop: ReplyStop
    raw: str


@dataclass(frozen=True)
class Proposed(_Wire):
    """A command proposed (by a recipe, the model, or the user's edit: ``origin``) and the
    policy's verdict on it."""

    kind: ClassVar[str] = "proposed"
    turn: int
    command: str
    why: str
    decision: Verdict
    reasons: tuple[str, ...] = ()
    origin: CommandOrigin | None = _optional()  # None: not known (the model, no recipes)


@dataclass(frozen=True)
class ApprovalNeeded(_Wire):
    """The policy asks: the client answers with an ``approval`` message echoing ``id`` and
    ``command``."""

    kind: ClassVar[str] = "approval_request"
    id: int
    turn: int
    command: str
    why: str
    decision: Verdict
    reasons: tuple[str, ...] = ()
    # "NAME=value" of the carried variables the command expands whose values are more than
    # an integer or a short word: the line does not show them, and bash may run them
    carried: tuple[str, ...] = ()
    # places that run code later which the request names and the command changes: approved
    # only with an explicit key, never by -y (``transaction/named.py``)
    named: tuple[str, ...] = ()
    # a recurring job to install (``command``: its commands, one per line; ``why``: when it
    # runs and what it may write), not a command to run now
    job: bool = _optional(False)


@dataclass(frozen=True)
class Decided(_Wire):
    """What was decided about a command the policy asked about, and by whom."""

    kind: ClassVar[str] = "approval"
    turn: int
    command: str
    decision: RecordedApproval
    edited: str | None = None
    reason: str | None = None
    scope: Scope | None = None


@dataclass(frozen=True)
class Output(_Wire):
    """Live output of the running command."""

    kind: ClassVar[str] = "output"
    data: str


@dataclass(frozen=True)
class Result(_Wire):
    """A command finished."""

    kind: ClassVar[str] = "result"
    turn: int
    command: str
    exit_code: int | None
    duration_s: float | None = None
    timed_out: bool = False
    truncated: bool = False
    # Ran confined as read-only, and the kernel stopped it changing something
    # (``Execution.confined`` / ``Execution.refused``).
    confined: bool = _optional(False)
    refused: bool = _optional(False)


@dataclass(frozen=True)
class ChangesReady(_Wire):
    """What the session's commands would change. With an ``id`` the daemon waits for a
    ``changes`` answer (one of ``choices``); without one it only reports."""

    kind: ClassVar[str] = "changes"
    session: str
    summary: str
    lines: tuple[str, ...]
    total: int
    deleted: int
    diff: str = ""
    id: int | None = _optional()
    choices: tuple[ChangesDecision, ...] = ()


@dataclass(frozen=True)
class ChangesDone(_Wire):
    """What became of the change set, in one line for the person (``message``)."""

    kind: ClassVar[str] = "changes_done"
    outcome: ChangesOutcome
    message: str
    applied: int = 0


@dataclass(frozen=True)
class Alternative:
    """Another recipe that may be what was asked, offered when a result is not claimed:
    what it does in plain words and the command it renders; a read-only one already tried
    carries what it printed."""

    recipe: str
    says: str
    command: str
    output: str | None = None


@dataclass(frozen=True)
class ChoiceRequest(_Wire):
    """Not sure the result is what was asked (or its command was refused): the next
    recipes that may be. The client answers with a ``choice`` message echoing ``id``:
    0 keeps what there is, N runs the Nth alternative instead."""

    kind: ClassVar[str] = "choice"
    id: int
    ran: str  # what ran, in plain words ("" when nothing ran: it was refused)
    doubts: tuple[str, ...]
    alternatives: tuple[Alternative, ...]
    answer: str = _optional("")  # what it answered, for a question


@dataclass(frozen=True)
class ConfirmRequest(_Wire):
    """The model says it is done: did that do it? The client answers with a ``confirm``
    message echoing ``id``."""

    kind: ClassVar[str] = "confirm"
    id: int
    summary: str
    # what the session does not back (the last command failed, a file no command made)
    unsupported: tuple[str, ...] = _optional(())
    # other recipes that may be what was asked: one may be picked with a "no"
    alternatives: tuple[Alternative, ...] = _optional(())


@dataclass(frozen=True)
class Summary(_Wire):
    """The task ended; ``exit_code`` is the status ``ask`` returns."""

    kind: ClassVar[str] = "summary"
    reason: EndReason
    summary: str
    turns: int
    session: str
    commands: tuple[str, ...]
    exit_codes: tuple[int | None, ...]
    error: str
    exit_code: int
    transcript: str
    # confirmed (the user said it did), failed, unverified (nobody checked), discarded or
    # kept (the change set did not reach the files: the user discarded it or kept it),
    # dry_run, or scheduled (a job the task asked for was installed)
    verdict: str = _optional("")
    cwd: str | None = _optional()  # the sandbox shell's working directory at the end
    unsupported: tuple[str, ...] = _optional(())  # see ``ConfirmRequest``
    # after a task the local model could not do: a command to edit, a larger model
    advice: str = _optional("")
    # the agent presented the result as done, with no stated doubt
    claimed: bool = _optional(False)
    # when it did not: what ran in plain words, why it may not be what was asked, and the
    # next candidates
    ran: str = _optional("")
    doubts: tuple[str, ...] = _optional(())
    alternatives: tuple[Alternative, ...] = _optional(())


@dataclass(frozen=True)
class ModelStatus:
    """The daemon's model pool, in a ``status`` answer."""

    spec: str  # the default model, as the pool loads it
    loaded: bool
    name: str | None  # the loaded model's name
    loads: int  # models loaded since the daemon started
    waiting: int  # generations waiting for the model
    idle_s: float
    idle_unload_s: float | None  # None: never unloaded while the daemon runs


@dataclass(frozen=True)
class SessionStatus:
    """One running task, in a ``status`` answer."""

    session: str  # "" until the task has a session
    task: str  # its first 80 characters
    state: str
    running_s: float
    client_pid: int


@dataclass(frozen=True)
class DaemonStatus(_Wire):
    """The daemon's answer to ``status``."""

    kind: ClassVar[str] = "status"
    pid: int
    version: str
    protocol: int
    uptime_s: float
    socket: str
    model: ModelStatus
    sessions: tuple[SessionStatus, ...]
    clients: int
    refused: int
    rss_kb: int | None
    peak_rss_kb: int | None


@dataclass(frozen=True)
class Stopping(_Wire):
    """The daemon is shutting down."""

    kind: ClassVar[str] = "stopping"


@dataclass(frozen=True)
class Failure(_Wire):
    """Something went wrong. ``fatal``: the task ends, and ``exit_code`` (when set) is the
    status ``ask`` returns."""

    kind: ClassVar[str] = "error"
    code: str
    message: str
    fatal: bool = False
    exit_code: int | None = _optional()


@dataclass(frozen=True)
class Note(_Wire):
    """Information for the person, not a failure: what a follow-up carried over, a job no
    scheduler can run, a task that no longer fits the model's context."""

    kind: ClassVar[str] = "note"
    message: str


WireEvent = (
    Accepted
    | Queued
    | Thinking
    | InvalidReply
    | Proposed
    | ApprovalNeeded
    | Decided
    | Output
    | Result
    | ChangesReady
    | ChangesDone
    | ChoiceRequest
    | ConfirmRequest
    | Summary
    | DaemonStatus
    | Stopping
    | Failure
    | Note
)

WIRE_EVENTS: dict[str, type[WireEvent]] = {
    cls.kind: cls
    for cls in (
        Accepted,
        Queued,
        Thinking,
        InvalidReply,
        Proposed,
        ApprovalNeeded,
        Decided,
        Output,
        Result,
        ChangesReady,
        ChangesDone,
        ChoiceRequest,
        ConfirmRequest,
        Summary,
        DaemonStatus,
        Stopping,
        Failure,
        Note,
    )
}
"""Daemon -> client message kind -> its dataclass."""

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
    return field(default=default, metadata=metadata | _OMIT)


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

# -- to and from JSON objects ------------------------------------------------------------


def to_dict(event: TranscriptEvent | WireEvent | ClientMessage) -> JsonObject:
    """The event as a JSON object: ``type`` first, then its fields (tuples as lists, a
    record such as a ``PolicySegment`` as an object); optional fields that hold their
    default are left out."""
    data: JsonObject = {"type": event.kind}
    data.update(_object(event))
    return data


def _object(record: DataclassInstance) -> JsonObject:
    data: JsonObject = {}
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        if f.metadata.get("omit") and value == f.default:
            continue
        data[f.name] = _plain(value)
    return data


def _plain(value: object) -> JsonValue:
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _object(value)
    raise TypeError(f"{type(value).__name__} has no JSON form")  # pragma: no cover


def from_dict(data: Mapping[str, object]) -> TranscriptEvent:
    """A transcript event from its JSON object, or ``EventError`` saying what is wrong
    (an unknown ``type`` included). ``v`` is not checked here: see ``upgrade``."""
    return _build(_kind_of(data, TRANSCRIPT_EVENTS, "transcript event"), data)


def read_event(data: Mapping[str, object]) -> TranscriptEvent | None:
    """Like ``from_dict``, but an event kind this version does not know gives None (to be
    skipped: a newer shellagent wrote it)."""
    kind = data.get("type")
    if isinstance(kind, str) and kind not in TRANSCRIPT_EVENTS:
        return None
    return from_dict(data)


def wire_from_dict(data: Mapping[str, object]) -> WireEvent:
    """A daemon -> client message from its JSON object, or ``EventError``."""
    return _build(_kind_of(data, WIRE_EVENTS, "daemon message"), data)


_T = TypeVar("_T")


def _kind_of(data: Mapping[str, object], known: Mapping[str, type[_T]], what: str) -> type[_T]:
    kind = data.get("type")
    if not isinstance(kind, str):
        raise EventError(f"a {what} needs a string 'type', got {kind!r:.40}")
    try:
        return known[kind]
    except KeyError:
        raise EventError(
            f"unknown {what} type {kind!r:.60}",
            hint=f"known types: {', '.join(known)}",
        ) from None


def _build(cls: type[_T], data: Mapping[str, object], where: str = "") -> _T:
    """``cls`` from a JSON object; ``where`` names it in errors (an event: its kind)."""
    where = where or f"{getattr(cls, 'kind', cls.__name__)} event"
    values: dict[str, object] = {}
    for name, (hint, required) in _fields(cls).items():
        if name not in data:
            if required:
                raise EventError(f"{where}: missing {name!r}")
            continue
        values[name] = _check(data[name], hint, f"{where}: {name!r}")
    make: Callable[..., _T] = cls  # each value was checked against its field's type
    return make(**values)


_FIELDS: dict[type, dict[str, tuple[Any, bool]]] = {}


def _fields(cls: type) -> dict[str, tuple[Any, bool]]:
    """Field name -> (resolved type, required) of an event class."""
    known = _FIELDS.get(cls)
    if known is not None:
        return known
    hints = typing.get_type_hints(cls)
    known = _FIELDS[cls] = {
        f.name: (
            hints[f.name],
            f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
        )
        for f in dataclasses.fields(cls)
    }
    return known


def _check(value: object, hint: Any, where: str) -> object:
    """``value`` if it is a ``hint`` (lists become tuples where the field is a tuple)."""
    if hint is Any:
        return value
    origin = get_origin(hint)
    if origin is Literal:
        if isinstance(value, str) and value in get_args(hint):
            return value
        raise EventError(f"{where} must be one of {', '.join(get_args(hint))}, got {value!r:.40}")
    if origin in (Union, types.UnionType):
        for option in get_args(hint):
            try:
                return _check(value, option, where)
            except EventError:
                continue
        raise EventError(f"{where} must be {_name(hint)}, got {_name(type(value))}")
    if hint is type(None):
        if value is None:
            return None
    elif hint is bool:
        if isinstance(value, bool):
            return value
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
    elif hint is str:
        if isinstance(value, str):
            return value
    elif origin is tuple:
        if isinstance(value, list | tuple):
            item = get_args(hint)[0]
            return tuple(_check(v, item, f"{where}[{i}]") for i, v in enumerate(value))
    elif origin is dict:
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            item = get_args(hint)[1]
            return {k: _check(v, item, f"{where}[{k!r}]") for k, v in value.items()}
    elif isinstance(hint, type) and dataclasses.is_dataclass(hint):  # a record in an event
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return _build(hint, value, where)
    else:  # pragma: no cover - a field type this checker was not taught
        raise TypeError(f"{where}: cannot check {hint!r}")
    raise EventError(f"{where} must be {_name(hint)}, got {_name(type(value))}")


def _name(hint: Any) -> str:
    if hint is type(None):
        return "null"
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return " or ".join(_name(a) for a in get_args(hint))
    if origin is Literal:
        return "one of " + ", ".join(get_args(hint))
    if origin is tuple or hint in (list, tuple):
        return "a list"
    if origin is dict or hint is dict or dataclasses.is_dataclass(hint):
        return "an object"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}.get(
        hint, getattr(hint, "__name__", str(hint))
    )


# -- format versions ---------------------------------------------------------------------

Line: TypeAlias = "JsonObject"
"""A transcript line as stored: a JSON object with ``v``, ``type``, ``ts``, ``seq``."""

# Append-only: MIGRATIONS[i] upgrades one line from version i + 1 to version i + 2.
# Never edit or remove an entry; files written by every older shellagent depend on it.
MIGRATIONS: list[Callable[[Line], Line]] = []


def upgrade(line: Line, migrations: Sequence[Callable[[Line], Line]] = MIGRATIONS) -> Line:
    """Bring a line of any older version up to the newest by running the migrations."""
    version = line.get("v", 1)
    while isinstance(version, int) and version <= len(migrations):
        line = migrations[version - 1](dict(line))
        version += 1
        line["v"] = version
    return line


# -- the documented schema ---------------------------------------------------------------


def json_schema() -> JsonObject:
    """The JSON Schema of one transcript line (any known event type), as shipped in
    ``docs/transcript.schema.json``. The only function here that imports pydantic."""
    from pydantic import TypeAdapter

    base: JsonObject = {
        "v": {"title": "V", "type": "integer"},
        "ts": {"title": "Ts", "type": "number"},
        "seq": {"title": "Seq", "type": "integer"},
    }
    variants: list[JsonValue] = []
    records: JsonObject = {}  # the records inside events (``PolicySegment`` …), by name
    for kind, cls in TRANSCRIPT_EVENTS.items():
        generated = TypeAdapter(cls).json_schema(ref_template="#/$defs/{model}")
        records.update(generated.get("$defs", {}))
        own = {k: v for k, v in generated["properties"].items() if k not in base}
        variants.append(
            {
                "additionalProperties": True,
                "description": " ".join((cls.__doc__ or kind).split()),
                "properties": {
                    "v": base["v"],
                    "type": {"const": kind, "title": "Type", "type": "string"},
                    "ts": base["ts"],
                    "seq": base["seq"],
                    **own,
                },
                "required": ["v", "type", "ts", "seq"]
                + [k for k in generated.get("required", []) if k in own],
                "title": cls.__name__,
                "type": "object",
            }
        )
    schema: JsonObject = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://shellagent.invalid/transcript.schema.json",
        "title": f"shellagent transcript line, format v{VERSION}",
        "description": (
            "One JSON object per line. Unknown keys and unknown event types must be "
            "ignored by readers; see docs/transcripts.md."
        ),
        "oneOf": variants,
    }
    if records:
        schema["$defs"] = records
    return schema
