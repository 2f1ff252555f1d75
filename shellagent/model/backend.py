"""The one interface the agent loop talks to, and what a generation returns.

A backend turns a conversation (OpenAI-style ``{"role", "content"}`` messages) into the
model's next reply. With a ``reply_format`` the reply is constrained to that shape (the
agent passes its action format, ``shellagent.agent.actions.ACTION_FORMAT``; the model layer
knows nothing of actions); ``on_token`` receives text as it is produced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from shellagent.events import ReplyStop

__all__ = [
    "Backend",
    "Generation",
    "Message",
    "ReplyFormat",
    "Stop",
    "TokenCallback",
    "is_looping",
]

Message = dict[str, str]
TokenCallback = Callable[[str], None]

# Why a reply ended: the model ended it, it reached ``max_tokens``, or it was cut because it
# kept repeating the same few tokens. Only an ``"end"`` reply is complete; a grammar-
# constrained reply that ended any other way may stop mid-string.
Stop = ReplyStop

# A reply whose last LOOP_SPAN tokens are one cycle of at most LOOP_MAX_PERIOD tokens repeated
# is a small model stuck in a loop ("-rw-rw-rw -rw-rw-rw ..."): waiting for the token limit
# only costs time. 64 tokens of one short cycle is far beyond any real command's repetition
# (a 60-character ruler of "=" is a handful of tokens).
LOOP_SPAN = 64
LOOP_MAX_PERIOD = 16


@dataclass(frozen=True)
class ReplyFormat:
    """The shape every reply must have, said twice: as a GBNF grammar (llama.cpp, and
    llama-server's ``grammar`` field) and as a JSON schema (OpenAI-compatible servers)."""

    name: str
    gbnf: str
    json_schema: Mapping[str, Any]


@dataclass(frozen=True)
class Generation:
    """One reply from a backend, with the counts needed for context and cost accounting.

    ``prompt_tokens`` is the length of the whole rendered prompt; ``evaluated_prompt_tokens``
    the part the model actually had to evaluate this turn (the rest was reused from the
    previous turn's cache). ``token_ids`` and ``logprobs`` cover the generated reply only and
    are ``None`` unless requested and available. ``stop`` says why the reply ended.
    """

    text: str
    prompt_tokens: int
    evaluated_prompt_tokens: int
    generated_tokens: int
    token_ids: tuple[int, ...] | None = None
    logprobs: tuple[float, ...] | None = None
    duration_s: float = 0.0
    first_token_s: float = 0.0
    stop: Stop = "end"

    @property
    def tokens_per_s(self) -> float:
        """Decode speed: generated tokens over the time after the first one."""
        decode_s = self.duration_s - self.first_token_s
        if self.generated_tokens <= 1 or decode_s <= 0:
            return 0.0
        return (self.generated_tokens - 1) / decode_s


def is_looping(ids: Sequence[object]) -> bool:
    """Whether ``ids`` (token ids, or any pieces) ends with LOOP_SPAN of them made of one
    cycle of at most LOOP_MAX_PERIOD repeated."""
    if len(ids) < LOOP_SPAN:
        return False
    tail = ids[-LOOP_SPAN:]
    return any(
        all(tail[i] == tail[i - period] for i in range(period, LOOP_SPAN))
        for period in range(1, LOOP_MAX_PERIOD + 1)
    )


@runtime_checkable
class Backend(Protocol):
    """A model that proposes the next reply of a conversation."""

    name: str
    context_size: int

    def generate(
        self,
        messages: Sequence[Message],
        *,
        reply_format: ReplyFormat | None = None,
        max_tokens: int = 256,
        on_token: TokenCallback | None = None,
        capture_logprobs: bool = False,
    ) -> Generation: ...

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """Length in tokens of ``messages`` rendered as a prompt (generation prompt included)."""
        ...
