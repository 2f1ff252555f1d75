"""The system prompt: the environment, the action format by example, and the rules.

Written for a 135M model with a 2–8k context: short, concrete, no placeholders (a tiny model
copies ``COMMAND`` literally), and worked examples in exactly the canonical action layout the
grammar allows, so the cheapest continuation is a well-formed action. The figures behind the
wording are in ``docs/agent.md``.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["EXAMPLES", "Environment", "describe_environment", "system_prompt", "task_message"]


@dataclass(frozen=True)
class Environment:
    """What the model is told about where its commands run."""

    cwd: str
    writable: tuple[str, ...] = ()
    anywhere_writable: bool = False
    network: bool = False
    max_turns: int = 15
    os_name: str = "Linux"
    shell: str = "bash"


def describe_environment(shell: Any, *, max_turns: int) -> Environment:
    """Read the environment off a shell: a sandbox ``Session`` (its profile) or a fake."""
    profile = getattr(shell, "profile", None)
    writable: tuple[str, ...] = ()
    anywhere = False
    network = False
    if profile is not None:
        anywhere = bool(getattr(profile, "ephemeral", False))
        network = bool(getattr(profile, "network", False))
        writable = tuple(str(Path(p)) for p in getattr(profile, "writable", ()) or ())
    else:
        writable = tuple(str(p) for p in getattr(shell, "writable", ()) or ())
        anywhere = bool(getattr(shell, "anywhere_writable", False))
    system = platform.system() or "Linux"
    return Environment(
        cwd=str(getattr(shell, "cwd", "") or "/"),
        writable=writable,
        anywhere_writable=anywhere,
        network=network,
        max_turns=max_turns,
        os_name=system,
    )


# Each example: a task, then the replies and the observations the loop would feed back, in
# the exact formats the loop uses. Multi-turn on purpose: look, act, check, finish.
EXAMPLES = "\n".join(
    [
        "Task: The 'web' service logs to '/var/log/web/app.log'. "
        "Save the number of lines of the log to '/tmp/count.txt'.",
        '{"cmd": "wc -l < /var/log/web/app.log > /tmp/count.txt", '
        '"why": "count the lines into /tmp/count.txt"}',
        "exit 0",
        '{"cmd": "cat /tmp/count.txt", "why": "check the result"}',
        "exit 0",
        "42",
        '{"done": "Saved the line count of /var/log/web/app.log (42) to /tmp/count.txt."}',
        "",
        "Task: Remove the files ending in '.tmp' from '/srv/cache'.",
        '{"cmd": "ls /srv/cache", "why": "see the files in /srv/cache"}',
        "exit 0",
        "a.tmp",
        "b.log",
        '{"cmd": "rm /srv/cache/*.tmp", "why": "remove the .tmp files"}',
        "exit 0",
        '{"done": "Removed a.tmp from /srv/cache; b.log is kept."}',
    ]
)


# Only where jobs can be made (not in a throwaway sandbox), so task-set prompts are unchanged.
SCHEDULE_RULE = (
    "If the task must repeat (hourly, daily, weekly, monthly), first run its commands once, "
    'then reply {"every": "week", "on": "sun", "at": "03:00", "name": "backup documents"} '
    "with the schedule the task asks for.\n"
)


def system_prompt(env: Environment) -> str:
    if env.anywhere_writable:
        writable = "everywhere (a throwaway sandbox)"
    elif env.writable:
        writable = ", ".join(env.writable) + " and /tmp"
    else:
        writable = "only /tmp"
    network = "network is on" if env.network else "no network"
    return (
        f"You are a shell agent on {env.os_name}. You do the user's task by running "
        f"{env.shell} commands, one per reply.\n"
        f"Current directory: {env.cwd}. You can write: {writable}. {network.capitalize()}. "
        f"At most {env.max_turns} replies.\n"
        'Reply with one JSON object, as in the examples: "cmd" runs a command and shows you '
        'its exit code and output; "done" ends the task with a summary for the user.\n'
        "Use the exact paths and names the task gives. Never ask the user questions. "
        "When the task is done, reply done.\n"
        f"{'' if env.anywhere_writable else SCHEDULE_RULE}"
        "\n"
        "Two examples:\n"
        f"{EXAMPLES}"
    )


def task_message(task: str) -> str:
    return f"Task: {task}"
