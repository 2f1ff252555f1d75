"""Keeping the conversation inside the model's context: old observations go first.

The loop keeps the whole conversation; ``ContextWindow.fit`` returns what the model is shown.
When the rendered prompt plus room for the reply would not fit, the oldest observations are
replaced by a one-line stub, then (if that is not enough) the oldest whole turns are dropped.
The system prompt, the task and the latest turn are never touched.

Each trim changes an early message, so the model must re-evaluate everything after it (the
prefix cache is lost from there). To keep that rare, a trim goes a margin below the limit, and
what was trimmed stays trimmed: the next turns extend the same shortened prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shellagent.errors import InputError

__all__ = ["STUB", "ContextWindow"]

STUB = "[old output dropped to save room]"

Message = dict[str, str]


class ContextWindow:
    """Fits a conversation (system, task, then replies and observations) to a backend."""

    def __init__(self, backend: Any, *, reply_tokens: int, margin: float = 0.15) -> None:
        self.backend = backend
        self.reply_tokens = reply_tokens
        self.margin = margin
        self.stubbed = 0  # observations (counted from the oldest) replaced by STUB
        self.dropped = 0  # messages after the task dropped entirely
        self.trims = 0

    @property
    def limit(self) -> int:
        return int(self.backend.context_size) - self.reply_tokens

    def fit(self, conversation: Sequence[Message]) -> list[Message]:
        shown = self._apply(conversation)
        if self._tokens(shown) <= self.limit:
            return shown
        self.trims += 1
        target = self.limit - int(self.backend.context_size * self.margin)
        # Replies and observations after the task, but never the last reply + observation.
        body = len(conversation) - 2
        while self._tokens(shown) > target and self._can_stub(conversation):
            self.stubbed += 1
            shown = self._apply(conversation)
        while self._tokens(shown) > target and self.dropped + 2 < body:
            self.dropped += 2  # one reply and its observation
            shown = self._apply(conversation)
        if self._tokens(shown) > self.limit:
            raise InputError(
                f"the task and the latest turn alone need {self._tokens(shown)} tokens; the "
                f"model's context holds {self.backend.context_size} with "
                f"{self.reply_tokens} kept for the reply",
                hint="shorten the task, lower observation_chars, or use a larger context",
            )
        return shown

    def _tokens(self, messages: Sequence[Message]) -> int:
        return int(self.backend.count_tokens(messages))

    def _observation_indexes(self, conversation: Sequence[Message]) -> list[int]:
        # User messages after the task, except the latest one.
        last = len(conversation) - 1
        return [
            i for i, m in enumerate(conversation) if i >= 2 and m["role"] == "user" and i != last
        ]

    def _can_stub(self, conversation: Sequence[Message]) -> bool:
        return self.stubbed < len(self._observation_indexes(conversation))

    def _apply(self, conversation: Sequence[Message]) -> list[Message]:
        stub = set(self._observation_indexes(conversation)[: self.stubbed])
        shown = [dict(m) for m in conversation[:2]]
        for i in range(2 + self.dropped, len(conversation)):
            message = dict(conversation[i])
            if i in stub:
                message["content"] = STUB
            shown.append(message)
        return shown
