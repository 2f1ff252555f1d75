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

from shellagent.events.client import (
    CLIENT_MESSAGES,
    ApprovalReply,
    Ask,
    Cancel,
    ChangesReply,
    ChoiceReply,
    ClientMessage,
    ConfirmReply,
    Status,
    Stop,
)
from shellagent.events.codec import (
    from_dict,
    read_event,
    to_dict,
    wire_from_dict,
)
from shellagent.events.schema import (
    MIGRATIONS,
    VERSION,
    Line,
    json_schema,
    upgrade,
)
from shellagent.events.transcript import (
    TRANSCRIPT_EVENTS,
    ApprovalRecord,
    ChangeSetRecord,
    ChatMessage,
    Check,
    End,
    Execution,
    JobInstalled,
    ModelTurn,
    PolicySegment,
    PolicyVerdict,
    PromptMessage,
    SessionStart,
    TranscriptEvent,
)
from shellagent.events.wire import (
    WIRE_EVENTS,
    Accepted,
    Alternative,
    ApprovalNeeded,
    ChangesDone,
    ChangesReady,
    ChoiceRequest,
    ConfirmRequest,
    DaemonStatus,
    Decided,
    Failure,
    InvalidReply,
    ModelStatus,
    Note,
    Output,
    Proposed,
    Queued,
    Result,
    SessionStatus,
    Stopping,
    Summary,
    Thinking,
    WireEvent,
)
from shellagent.events.words import (
    ApprovalKind,
    ChangesDecision,
    ChangesOutcome,
    CommandOrigin,
    ConfirmAnswer,
    EndReason,
    EventError,
    EventSource,
    RecordedApproval,
    ReplyStop,
    Role,
    Scope,
    Verdict,
    exit_code,
)

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
    "Line",
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
