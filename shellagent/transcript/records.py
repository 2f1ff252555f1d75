"""The export records, one type per format: what ``export.py`` writes, one JSON object a
line, and what trainers read (``docs/transcripts.md`` lists the fields for readers)."""

from __future__ import annotations

from typing import TypedDict

from shellagent.jsontypes import JsonValue

__all__ = [
    "DpoRecord",
    "GroupedRlRecord",
    "Message",
    "Record",
    "RlCheck",
    "RlRecord",
    "RlTurn",
    "SftRecord",
]

Message = dict[str, str]
"""A chat message: ``role`` and ``content``."""


class SftRecord(TypedDict):
    messages: list[Message]


class DpoRecord(TypedDict):
    prompt: list[Message]
    chosen: list[Message]
    rejected: list[Message]


class RlCheck(TypedDict):
    """A task set's success check, as it ran after the episode."""

    command: str
    exit_code: int | None
    success: bool | None
    output: str


class RlTurn(TypedDict):
    turn: int
    prompt: list[Message] | None  # what the reply answered, when not the conversation
    reply: str
    action: str | None  # the parsed action, as JSON text
    command: str | None
    executed_command: str | None
    status: str
    observation: str | None
    exit_code: int | None
    token_ids: list[int] | None
    logprobs: list[JsonValue] | None


class RlRecord(TypedDict):
    session: str
    task: str
    task_id: str | None
    source: str | None
    model: str
    outcome: str
    prompt: list[Message]
    completion: list[Message]
    turns: list[RlTurn]
    exit_codes: list[int | None]
    check: RlCheck | None
    success: bool | None
    verdict: str
    n_turns: int
    reward: float


class GroupedRlRecord(RlRecord):
    """An RL record with its group's figures (``export --format rl --group``)."""

    group: str
    group_size: int
    group_mean: float
    group_std: float
    advantage: float


Record = SftRecord | DpoRecord | RlRecord
