"""The verified library as supervised training data, in the exact shape the agent prompts
the model at run time (``shellagent tasks sft``, then ``shellagent train``).

For each verified task: the system prompt with ``k`` worked examples retrieved for it from
the rest of the library (never the task itself), rewritten to its paths, exactly as the loop
shows them; the task message; then each gold command as the canonical action the grammar
makes (``{"cmd": …, "why": "run PROGRAM"}``), the observation the loop would feed back for
its recorded output, and the ``done`` reply with the gold answer. The environment is the
one task sets run in (a throwaway sandbox), so the model learns on the prompts ``eval``
gives it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypedDict

from shellagent.agent import observation
from shellagent.agent.config import AgentConfig
from shellagent.agent.examples import ExampleLibrary, why_of
from shellagent.agent.loop import opening
from shellagent.agent.prompts import Environment

__all__ = ["conversations"]


@dataclass(frozen=True)
class _Ran:
    """A recorded step, shaped like a ``CommandResult`` for ``observation.executed``."""

    command: str
    output: str
    exit_code: int
    timed_out: bool = False
    duration_s: float = 0.0


class SftRecord(TypedDict):
    """One line of the SFT file: the chat, and which example it came from."""

    messages: list[dict[str, str]]
    task_id: str
    family: str


def conversations(library: ExampleLibrary, *, k: int = AgentConfig.examples) -> Iterator[SftRecord]:
    """One SFT record (``{"messages": [...]}``) per library example with gold steps."""
    config = AgentConfig()
    env = Environment(cwd="/root", anywhere_writable=True, max_turns=config.max_turns)
    for example in library.examples:
        if not example.steps:
            continue
        others = library.search(example.task, k, exclude=example.id)
        system, user = opening(env, example.task, others, config.observation_chars)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        for step in example.steps:
            action = {"cmd": step.command, "why": step.why or why_of(step.command)}
            messages.append(
                {"role": "assistant", "content": json.dumps(action, ensure_ascii=False)}
            )
            seen = _Ran(step.command, step.output, step.exit_code)
            messages.append(
                {"role": "user", "content": observation.executed(seen, config.observation_chars)}
            )
        done = json.dumps({"done": example.answer}, ensure_ascii=False)
        messages.append({"role": "assistant", "content": done})
        yield {"messages": messages, "task_id": example.id, "family": example.family}
