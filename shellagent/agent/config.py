"""The limits and switches of one session."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AgentConfig"]


@dataclass(frozen=True)
class AgentConfig:
    """Limits and switches of one session.

    ``observation_chars`` bounds the output shown to the model per command; ``max_tokens``
    bounds one reply; ``repeat_limit`` is how often the same command may fail (non-zero
    exit, or denied) before the session gives up; ``dry_run`` shows commands, runs none.
    """

    max_turns: int = 15
    command_timeout: float = 30.0
    observation_chars: int = 2000
    max_tokens: int = 256
    repeat_limit: int = 3
    capture_logprobs: bool = False
    dry_run: bool = False
    # A key binding's proposal: the session ends (``finished``) once the first command has
    # the policy's verdict; nothing runs.
    propose_only: bool = False
    # Worked examples retrieved for the task and shown in the system prompt (0: none; the
    # format is then shown on the task's own paths).
    examples: int = 2
    # Turns in a row without progress that end a small model's free loop (0: no such
    # limit; a model that ``writes_commands`` never has it): ``agent/progress.py``.
    stall_limit: int = 1
