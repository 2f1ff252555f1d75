"""The actions a model may propose, their grammar, and the parser that reads them back.

One flat JSON object per reply, with short keys a 135M model can copy from an example:

    {"cmd": "ls -la", "why": "list files"}      run a shell command, with a one-line reason
    {"done": "summary for the user"}            finish, with a summary
    {"every": "week", "on": "sun", "at": "03:00", "name": "backup documents"}
                                                make the commands this session ran into a
                                                recurring job (see ``shellagent.jobs``)

``ACTION_GBNF`` constrains a llama.cpp model so every reply parses: strings are bounded
(a tiny model cannot ramble forever) and hold no raw control characters (a newline must be
written ``\\n``). ``ACTION_JSON_SCHEMA`` says the same thing to OpenAI-compatible servers.
``parse_action`` is lenient about wrapping (code fences, leading chatter from a server that
ignores the schema) and strict about content: anything else is an ``InputError``.

A new action kind is a frozen dataclass with a distinguishing first key, one alternative in
the grammar and the schema, and one branch in ``_from_object``. The schedule action names
no commands: the job is made of the commands the session already ran and the user
approved, so a small model never has to repeat them exactly.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from shellagent.errors import InputError

__all__ = [
    "ACTION_GBNF",
    "ACTION_JSON_SCHEMA",
    "Action",
    "CMD_MAX",
    "DONE_MAX",
    "FinishAction",
    "RunAction",
    "ScheduleAction",
    "WHY_MAX",
    "parse_action",
]

# Bounds in characters (an escape such as \n counts as one). A command longer than this is
# better split into steps; a reason is one line.
CMD_MAX = 400
WHY_MAX = 160
DONE_MAX = 400
NAME_MAX = 60
EVERY = ("hour", "day", "week", "month")
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


@dataclass(frozen=True)
class RunAction:
    """Run ``cmd`` in the session's shell; ``why`` is the one-line reason shown to the user."""

    kind: ClassVar[str] = "run"
    cmd: str
    why: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"cmd": self.cmd, "why": self.why}

    def to_json(self) -> str:
        """The canonical text, exactly as the grammar lets a model write it."""
        return _dumps(self.to_dict())


@dataclass(frozen=True)
class FinishAction:
    """Stop and tell the user ``done`` (what was done, or the answer)."""

    kind: ClassVar[str] = "done"
    done: str

    def to_dict(self) -> dict[str, str]:
        return {"done": self.done}

    def to_json(self) -> str:
        return _dumps(self.to_dict())


@dataclass(frozen=True)
class ScheduleAction:
    """Turn what this session ran into a job: ``every`` hour/day/week/month, ``on`` a
    weekday (weekly), ``at`` HH:MM (the minute for hourly), named ``name``."""

    kind: ClassVar[str] = "schedule"
    every: str
    on: str
    at: str
    name: str

    def to_dict(self) -> dict[str, str]:
        return {"every": self.every, "on": self.on, "at": self.at, "name": self.name}

    def to_json(self) -> str:
        return _dumps(self.to_dict())


Action = RunAction | FinishAction | ScheduleAction


def _dumps(obj: dict[str, str]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))


# The exact shape ``to_json`` writes, no optional whitespace: a tiny model copies an example
# more reliably when there is one way to write it, and the reply it generates is then the
# canonical text the next turn's prompt repeats (which keeps prefix reuse token-exact).
# The first character of a command or summary must be visible, so a constrained reply is
# never blank; after that any JSON string character (escapes included, raw controls not).
ACTION_GBNF = (
    rf"""
root    ::= run | done | sched
run     ::= "{{\"cmd\": " cmd ", \"why\": " why "}}"
done    ::= "{{\"done\": " text "}}"
sched   ::= "{{\"every\": \"" every "\", \"on\": \"" day "\", " when
when    ::= "\"at\": \"" hhmm "\", \"name\": " name "}}"
every   ::= {" | ".join(f'"{e}"' for e in EVERY)}
day     ::= {" | ".join(f'"{d}"' for d in DAYS)}
hhmm    ::= ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]
name    ::= "\"" lead char{{0,{NAME_MAX - 1}}} "\""
cmd     ::= "\"" lead char{{0,{CMD_MAX - 1}}} "\""
why     ::= "\"" char{{0,{WHY_MAX}}} "\""
text    ::= "\"" lead char{{0,{DONE_MAX - 1}}} "\""
lead    ::= [^"\\\x00-\x1f\x7f ]
char    ::= [^"\\\x00-\x1f\x7f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{{4}})
""".strip()
    + "\n"
)

ACTION_JSON_SCHEMA: dict[str, Any] = {
    "title": "action",
    "anyOf": [
        {
            "type": "object",
            "properties": {
                "cmd": {"type": "string", "minLength": 1, "maxLength": CMD_MAX},
                "why": {"type": "string", "maxLength": WHY_MAX},
            },
            "required": ["cmd", "why"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"done": {"type": "string", "minLength": 1, "maxLength": DONE_MAX}},
            "required": ["done"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {
                "every": {"enum": list(EVERY)},
                "on": {"enum": list(DAYS)},
                "at": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
                "name": {"type": "string", "minLength": 1, "maxLength": NAME_MAX},
            },
            "required": ["every", "on", "at", "name"],
            "additionalProperties": False,
        },
    ],
}

_EXPECTED = 'expected {"cmd": "...", "why": "..."}, {"done": "..."} or {"every": ...}'
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def parse_action(text: str) -> Action:
    """Read one action from a model's reply, or raise ``InputError`` saying what is wrong."""
    stripped = _FENCE.sub("", text.strip()).strip()
    start = stripped.find("{")
    if start < 0:
        raise InputError(f"model reply is not an action: {_preview(text)}", hint=_EXPECTED)
    try:
        obj, _ = json.JSONDecoder().raw_decode(stripped, start)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"model reply is not valid JSON ({exc.msg} at char {exc.pos}): {_preview(text)}",
            hint=_EXPECTED,
        ) from None
    if not isinstance(obj, dict):
        raise InputError(f"model reply is not a JSON object: {_preview(text)}", hint=_EXPECTED)
    return _from_object(obj, text)


def _from_object(obj: dict[str, Any], text: str) -> Action:
    keys = set(obj)
    for key, value in obj.items():
        if not isinstance(value, str):
            raise InputError(
                f"action field {key!r} must be a string, got {type(value).__name__}",
                hint=_EXPECTED,
            )
    if "cmd" in keys and keys <= {"cmd", "why"}:
        cmd = obj["cmd"].strip()
        if not cmd:
            raise InputError("action has an empty command", hint=_EXPECTED)
        return RunAction(cmd=cmd, why=obj.get("why", "").strip())
    if keys == {"done"}:
        done = obj["done"].strip()
        if not done:
            raise InputError("finish action has an empty summary", hint=_EXPECTED)
        return FinishAction(done=done)
    if "every" in keys and keys <= {"every", "on", "at", "name"}:
        every, on = obj["every"].strip().lower(), obj.get("on", "mon").strip().lower()[:3]
        at, name = obj.get("at", "09:00").strip(), obj.get("name", "").strip()
        if every not in EVERY or on not in DAYS or not re.fullmatch(r"\d{1,2}:\d{2}", at):
            raise InputError(f"schedule action has a bad field: {_preview(text)}",
                             hint='e.g. {"every": "week", "on": "sun", "at": "03:00", ...}')
        return ScheduleAction(every=every, on=on, at=at, name=name or "job")
    found = ", ".join(sorted(keys)) or "no keys"
    raise InputError(f"unknown action ({found}): {_preview(text)}", hint=_EXPECTED)


def _preview(text: str, limit: int = 80) -> str:
    flat = text.strip().replace("\n", "\\n")
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")
