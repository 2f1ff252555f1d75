"""The daemon -> client messages: one dataclass per kind (``shellagent.protocol`` frames
them), and their registry ``WIRE_EVENTS``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shellagent.events.words import (
    ChangesDecision,
    ChangesOutcome,
    CommandOrigin,
    EndReason,
    RecordedApproval,
    ReplyStop,
    Scope,
    Verdict,
    optional,
)

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
    overlay: bool = optional(False)


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
    origin: CommandOrigin | None = optional()  # None: not known (the model, no recipes)


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
    job: bool = optional(False)


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
    confined: bool = optional(False)
    refused: bool = optional(False)


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
    id: int | None = optional()
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
    answer: str = optional("")  # what it answered, for a question


@dataclass(frozen=True)
class ConfirmRequest(_Wire):
    """The model says it is done: did that do it? The client answers with a ``confirm``
    message echoing ``id``."""

    kind: ClassVar[str] = "confirm"
    id: int
    summary: str
    # what the session does not back (the last command failed, a file no command made)
    unsupported: tuple[str, ...] = optional(())
    # other recipes that may be what was asked: one may be picked with a "no"
    alternatives: tuple[Alternative, ...] = optional(())


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
    verdict: str = optional("")
    cwd: str | None = optional()  # the sandbox shell's working directory at the end
    unsupported: tuple[str, ...] = optional(())  # see ``ConfirmRequest``
    # after a task the local model could not do: a command to edit, a larger model
    advice: str = optional("")
    # the agent presented the result as done, with no stated doubt
    claimed: bool = optional(False)
    # when it did not: what ran in plain words, why it may not be what was asked, and the
    # next candidates
    ran: str = optional("")
    doubts: tuple[str, ...] = optional(())
    alternatives: tuple[Alternative, ...] = optional(())
    # who wrote the commands and the summary: "recipe NAME" (a verified recipe), "free"
    # or "" (the model)
    origin: str = optional("")


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
    exit_code: int | None = optional()


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
