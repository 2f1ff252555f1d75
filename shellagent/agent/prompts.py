"""The system prompt: the environment, the action format by example, and the rules.

Written for a 135M model with a 2–8k context: short, concrete, no placeholders (a tiny model
copies ``COMMAND`` literally), and worked examples in exactly the canonical action layout the
grammar allows, so the cheapest continuation is a well-formed action. The figures behind the
wording are in ``docs/agent.md``.
"""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shellagent.sandbox import Shell

__all__ = [
    "Environment",
    "describe_environment",
    "format_example",
    "system_prompt",
    "task_message",
]


@dataclass(frozen=True)
class Environment:
    """What the model is told about where its commands run."""

    cwd: str
    writable: tuple[str, ...] = ()
    anywhere_writable: bool = False
    network: bool = False
    overlaid: tuple[str, ...] = ()  # writable copies the user reviews (home, the workdir)
    max_turns: int = 15
    os_name: str = "Linux"
    shell: str = "bash"


def describe_environment(shell: Shell, *, max_turns: int) -> Environment:
    """Read the environment off a shell: where it is and what its grants allow."""
    grants = shell.grants
    return Environment(
        cwd=shell.cwd or "/",
        writable=tuple(str(p) for p in grants.writable),
        anywhere_writable=grants.anywhere_writable,
        network=grants.network,
        overlaid=tuple(str(p) for p in grants.overlaid),
        max_turns=max_turns,
        os_name=platform.system() or "Linux",
    )


# Only where jobs can be made (not in a throwaway sandbox), so task-set prompts are unchanged.
SCHEDULE_RULE = (
    "If the task must repeat (hourly, daily, weekly, monthly), first run its commands once, "
    'then reply {"every": "week", "on": "sun", "at": "03:00", "name": "backup documents"} '
    "with the schedule the task asks for.\n"
)


def system_prompt(env: Environment, examples: str = "", task: str = "") -> str:
    """The system prompt. ``examples`` are worked examples chosen for this task
    (``examples.render``); without any, the format is shown on the task's own paths."""
    # What is writable, said as it is: a model told "only /tmp" saved results there, where
    # they are thrown away with the sandbox.
    scratch = "/tmp (private, thrown away at the end: never save results there)"
    if env.anywhere_writable:
        writable = "everywhere (a throwaway sandbox)"
    elif env.overlaid or env.writable:
        places = ", ".join(dict.fromkeys([*env.overlaid, *env.writable]))
        copies = " (the user reviews every change and keeps it)" if env.overlaid else ""
        writable = f"{places}{copies}, and {scratch}"
    else:
        writable = f"only {scratch}"
    network = "network is on" if env.network else "no network"
    shown = (
        f"Examples of similar tasks:\n{examples}"
        if examples
        else f"The reply format:\n{format_example(task, env.cwd)}"
    )
    return (
        f"You are a shell agent on {env.os_name}. You do the user's task by running "
        f"{env.shell} commands, one per reply.\n"
        f"Current directory: {env.cwd}. You can write: {writable}. {network.capitalize()}. "
        f"At most {env.max_turns} replies.\n"
        'Reply with one JSON object: "cmd" runs a command and shows you its exit code and '
        'output; "done" ends the task with a summary for the user.\n'
        "Use the exact paths and names the task gives. Never ask the user questions. "
        "Do not run the same command twice. When the task is done, reply done, and put "
        "what the output showed in the summary.\n"
        f"{'' if env.anywhere_writable else SCHEDULE_RULE}"
        "\n"
        f"{shown}"
    )


def format_example(task: str, cwd: str) -> str:
    """The action layout on the task's own first path (never a placeholder word: a small
    model copies those literally)."""
    from shellagent.agent.examples import slots_of

    slots = slots_of(task)
    target = next((v for k, v in slots.items() if k.startswith(("dir", "file"))), "") or cwd
    look = f"ls -la {target}" if not slots.get("file") else f"head -n 20 {target}"
    return "\n".join(
        [
            json.dumps({"cmd": look, "why": f"look at {target} first"}),
            "exit 0",
            "(its output)",
            json.dumps({"done": "what was done, or the answer, with the output that shows it"}),
        ]
    )


def task_message(task: str, earlier: str = "") -> str:
    """The task as the model is given it; a follow-up's digest of what came before first."""
    if earlier:
        return f"Earlier in this conversation:\n{earlier}\n\nNow the next task. Task: {task}"
    return f"Task: {task}"
