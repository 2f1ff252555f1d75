"""The one interface the agent loop talks to, and what a generation returns.

A backend turns a conversation (OpenAI-style ``{"role", "content"}`` messages) into the
model's next reply. With ``grammar=True`` the reply is constrained to one action (see
``shellagent.agent.actions``); ``on_token`` receives text as it is produced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["Backend", "Generation", "Message", "TokenCallback"]

Message = dict[str, str]
TokenCallback = Callable[[str], None]


@dataclass(frozen=True)
class Generation:
    """One reply from a backend, with the counts needed for context and cost accounting.

    ``prompt_tokens`` is the length of the whole rendered prompt; ``evaluated_prompt_tokens``
    the part the model actually had to evaluate this turn (the rest was reused from the
    previous turn's cache). ``token_ids`` and ``logprobs`` cover the generated reply only and
    are ``None`` unless requested and available.
    """

    text: str
    prompt_tokens: int
    evaluated_prompt_tokens: int
    generated_tokens: int
    token_ids: tuple[int, ...] | None = None
    logprobs: tuple[float, ...] | None = None
    duration_s: float = 0.0
    first_token_s: float = 0.0

    @property
    def reused_prompt_tokens(self) -> int:
        return self.prompt_tokens - self.evaluated_prompt_tokens

    @property
    def tokens_per_s(self) -> float:
        """Decode speed: generated tokens over the time after the first one."""
        decode_s = self.duration_s - self.first_token_s
        if self.generated_tokens <= 1 or decode_s <= 0:
            return 0.0
        return (self.generated_tokens - 1) / decode_s


@runtime_checkable
class Backend(Protocol):
    """A model that proposes the next reply of a conversation."""

    name: str
    context_size: int

    def generate(
        self,
        messages: Sequence[Message],
        *,
        grammar: bool = True,
        max_tokens: int = 256,
        on_token: TokenCallback | None = None,
        capture_logprobs: bool = False,
    ) -> Generation: ...

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """Length in tokens of ``messages`` rendered as a prompt (generation prompt included)."""
        ...
