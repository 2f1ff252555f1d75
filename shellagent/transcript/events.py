"""The transcript event vocabulary: one JSON object per line, one file per session.

Every line carries ``v`` (format version), ``type``, ``ts`` (unix seconds) and ``seq``
(0, 1, 2 … within the session); the sink stamps those, the agent loop supplies the rest.
The TypedDicts below are the documentation other tools rely on; ``json_schema()`` turns
them into the JSON Schema shipped as ``docs/transcript.schema.json``.

Compatibility rules (see ``docs/transcripts.md``):

* Adding a key or a new event type is not a version change. Readers ignore keys and types
  they do not know, so an older shellagent reads a newer file of the same ``v``.
* A change that alters the meaning of an existing key bumps ``VERSION`` and appends an
  upgrade function to ``MIGRATIONS``, so files of every older version keep reading.

Keys marked ``NotRequired`` may be absent; readers must not depend on them.
This module imports nothing heavy: the agent loop's writer path uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

VERSION = 1
"""The format version written by this shellagent."""

Event = dict[str, Any]
"""An event as read back or about to be written: a plain JSON object."""

EventSource = Literal["ask", "eval", "job"]
Role = Literal["system", "user", "assistant"]
ApprovalDecision = Literal["approve", "refuse", "edit", "always", "quit", "auto"]
EndReason = Literal["finished", "turn_limit", "repeated_failure", "user_quit", "cancelled", "error"]


class SessionStart(TypedDict):
    """First line of every transcript: what ran, with which model, policy and sandbox."""

    v: int
    type: Literal["session_start"]
    ts: float
    seq: int
    session: str
    task: str
    model: NotRequired[str]
    backend: NotRequired[str]
    policy: NotRequired[str]
    profile: NotRequired[str]
    cwd: NotRequired[str]
    versions: NotRequired[dict[str, str]]
    source: NotRequired[EventSource]
    task_id: NotRequired[str | None]


class Message(TypedDict):
    """A message appended to the model's conversation, exactly as the model saw it.

    The system prompt, the task, each raw assistant reply and each observation fed back.
    ``turn`` (optional) ties an assistant reply and the observations that follow it to
    its ``model_turn``; without it, the n-th assistant message belongs to the n-th turn.
    """

    v: int
    type: Literal["message"]
    ts: float
    seq: int
    role: Role
    content: str
    turn: NotRequired[int]


class ModelTurn(TypedDict):
    """One generation: the raw reply, the parsed action and what it cost."""

    v: int
    type: Literal["model_turn"]
    ts: float
    seq: int
    turn: int
    raw: str
    action: NotRequired[dict[str, Any] | None]
    valid: NotRequired[bool]
    stop: NotRequired[Literal["end", "length", "repeat"]]
    prompt_tokens: NotRequired[int | None]
    evaluated_prompt_tokens: NotRequired[int | None]
    generated_tokens: NotRequired[int | None]
    duration_s: NotRequired[float | None]
    token_ids: NotRequired[list[int] | None]
    logprobs: NotRequired[list[Any] | None]
    redacted: NotRequired[bool]


class PolicyDecision(TypedDict):
    """The policy engine's verdict on a proposed command."""

    v: int
    type: Literal["policy"]
    ts: float
    seq: int
    turn: int
    command: str
    decision: Literal["allow", "ask", "deny"]
    reasons: NotRequired[list[str]]
    segments: NotRequired[list[Any]]


class Approval(TypedDict):
    """What the user (or ``--yes``: ``auto``) decided about a command the policy asked about."""

    v: int
    type: Literal["approval"]
    ts: float
    seq: int
    turn: int
    command: str
    decision: ApprovalDecision
    edited_command: NotRequired[str | None]
    reason: NotRequired[str | None]
    scope: NotRequired[str | None]


class Execution(TypedDict):
    """A command that ran in the sandbox, with the output as the model saw it."""

    v: int
    type: Literal["execution"]
    ts: float
    seq: int
    turn: int
    command: str
    output: str
    exit_code: int | None
    duration_s: NotRequired[float | None]
    timed_out: NotRequired[bool]
    truncated: NotRequired[bool]
    shell_restarted: NotRequired[bool]


class Check(TypedDict):
    """A task set's success check, run in a fresh shell after the agent finished."""

    v: int
    type: Literal["check"]
    ts: float
    seq: int
    command: NotRequired[str]
    exit_code: int | None
    success: bool
    output: NotRequired[str]


class End(TypedDict):
    """Last line of a complete transcript. A file without one was interrupted."""

    v: int
    type: Literal["end"]
    ts: float
    seq: int
    reason: EndReason
    summary: NotRequired[str | None]
    turns: NotRequired[int]
    success: NotRequired[bool | None]


EVENT_TYPES: dict[str, type[Any]] = {
    "session_start": SessionStart,
    "message": Message,
    "model_turn": ModelTurn,
    "policy": PolicyDecision,
    "approval": Approval,
    "execution": Execution,
    "check": Check,
    "end": End,
}
"""Event type name -> the TypedDict documenting it."""

BASE_KEYS = ("v", "type", "ts", "seq")

# Append-only: MIGRATIONS[i] upgrades one event from version i + 1 to version i + 2.
# Never edit or remove an entry; files written by every older shellagent depend on it.
MIGRATIONS: list[Callable[[Event], Event]] = []


def upgrade(
    event: Event,
    migrations: Sequence[Callable[[Event], Event]] = MIGRATIONS,
) -> Event:
    """Bring an event of any older version up to the newest by running the migrations."""
    version = event.get("v", 1)
    while isinstance(version, int) and version <= len(migrations):
        event = migrations[version - 1](dict(event))
        version += 1
        event["v"] = version
    return event


def json_schema() -> dict[str, Any]:
    """The JSON Schema of one transcript line (any known event type)."""
    from pydantic import ConfigDict, TypeAdapter, with_config

    variants = []
    for name, typed in EVENT_TYPES.items():
        # Re-declare with extra="allow": readers must accept keys added later.
        allowing = with_config(ConfigDict(extra="allow", title=typed.__name__))(typed)
        variants.append(TypeAdapter(allowing).json_schema(ref_template="#/$defs/{model}"))
        variants[-1].setdefault("description", (typed.__doc__ or name).strip())
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://shellagent.invalid/transcript.schema.json",
        "title": f"shellagent transcript line, format v{VERSION}",
        "description": (
            "One JSON object per line. Unknown keys and unknown event types must be "
            "ignored by readers; see docs/transcripts.md."
        ),
        "oneOf": variants,
    }
