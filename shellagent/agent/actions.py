"""The actions a model may propose, their grammar, and the parser that reads them back.

One flat JSON object per reply, with short keys a 135M model can copy from an example:

    {"cmd": "ls -la", "why": "list files"}      run a shell command, with a one-line reason
    {"done": "summary for the user"}            finish, with a summary
    {"every": "week", "on": "sun", "at": "03:00", "name": "backup documents"}
                                                make the commands this session ran into a
                                                recurring job (see ``shellagent.jobs``)
    {"use": "largest_files", "args": {"dir": "~/Downloads", "count": "5"}}
                                                run a verified recipe with these slot values
                                                (``shellagent.recipes``); its grammar is built
                                                per task (``recipe_grammar``), so it is not
                                                part of ``ACTION_GBNF``

``ACTION_GBNF`` constrains a llama.cpp model so every reply parses: strings are bounded
(a tiny model cannot ramble forever) and hold nothing a terminal would hide or reinterpret
(``shellagent.chars``): no control character, escape, bidi control, zero-width character or
line separator, raw or escaped (the grammar has no ``\\u`` escape; text is UTF-8, so
accented letters, CJK and emoji pass). A command and a summary may hold ``\\n`` and
``\\t``; a reason and a job name are one line. ``ACTION_JSON_SCHEMA`` says the bounds to
OpenAI-compatible servers. ``parse_action`` is lenient about wrapping (code fences, leading
chatter from a server that ignores the schema) and strict about content: it applies the
same rules to every field, for servers that ignore the grammar, and anything else is an
``InputError``.

A new action kind is a frozen dataclass with a distinguishing first key, one alternative in
the grammar and the schema, and one branch in ``_from_object``. The schedule action names
no commands: the job is made of the commands the session already ran and the user
approved, so a small model never has to repeat them exactly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from shellagent import schedule
from shellagent.chars import HIDDEN_RANGES, NON_ASCII_SPACES, check_text
from shellagent.errors import InputError
from shellagent.jsontypes import JsonObject
from shellagent.model.backend import ReplyFormat

__all__ = [
    "ACTION_FORMAT",
    "ACTION_GBNF",
    "ACTION_JSON_SCHEMA",
    "Action",
    "CMD_MAX",
    "DONE_MAX",
    "FinishAction",
    "PROSE_CLASS",
    "RunAction",
    "ScheduleAction",
    "USE_JSON_SCHEMA",
    "UseAction",
    "VISIBLE_CLASS",
    "WHY_MAX",
    "parse_action",
]

# Bounds in characters (an escape such as \n counts as one). A command longer than this is
# better split into steps; a reason is one line.
CMD_MAX = 400
WHY_MAX = 160
DONE_MAX = 400
NAME_MAX = 60
EVERY = schedule.EVERY
DAYS = schedule.WEEKDAYS


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


@dataclass(frozen=True)
class UseAction:
    """Run the recipe ``use`` with ``args`` (slot name -> value, as text): the recipe renders
    the command, which then goes through the policy and approval like a ``cmd``."""

    kind: ClassVar[str] = "use"
    use: str
    args: tuple[tuple[str, str], ...] = ()

    @property
    def arguments(self) -> dict[str, str]:
        return dict(self.args)

    def to_dict(self) -> dict[str, str]:
        """As a transcript records it: the arguments as one JSON text."""
        return {"use": self.use, "args": json.dumps(self.arguments, ensure_ascii=False)}

    def to_json(self) -> str:
        return json.dumps(
            {"use": self.use, "args": self.arguments}, ensure_ascii=False, separators=(", ", ": ")
        )


Action = RunAction | FinishAction | ScheduleAction | UseAction


def _dumps(obj: dict[str, str]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))


def _code(code: int) -> str:
    if code <= 0xFF:
        return f"\\x{code:02X}"
    return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


def _allowed(excluded: Iterable[tuple[int, int]]) -> str:
    """A GBNF character class of every code point from U+0020 up except ``excluded``, the
    quote, the backslash and the surrogates.

    Written as the allowed ranges, not as a negated class: llama.cpp decides about a token
    that ends inside a multi-byte character by whether the character's possible range
    overlaps the class, so a negated class with scattered exclusions would refuse, say, the
    first byte of every character from U+2000 to U+2FFF, and a tokenizer that spells ❤ or
    rare CJK as single bytes could then not write them at all.
    """
    holes = sorted([*excluded, (0x22, 0x22), (0x5C, 0x5C), (0xD800, 0xDFFF)])
    parts, start = [], 0x20
    for lo, hi in holes:
        if lo > start:
            end = lo - 1
            parts.append(_code(start) if start == end else f"{_code(start)}-{_code(end)}")
        start = max(start, hi + 1)
    parts.append(f"{_code(start)}-{_code(0x10FFFF)}")
    return "[" + "".join(parts) + "]"


_SPACES = [(c, c) for c in NON_ASCII_SPACES]
_VISIBLE = _allowed([*HIDDEN_RANGES, *_SPACES, (0x20, 0x20)])  # the first character
_PROSE = _allowed(HIDDEN_RANGES)
# The same classes for grammars built elsewhere (``recipe_grammar``'s free text).
VISIBLE_CLASS = _VISIBLE
PROSE_CLASS = _PROSE
_COMMAND = _allowed([*HIDDEN_RANGES, *_SPACES])

# The exact shape ``to_json`` writes, no optional whitespace: a tiny model copies an example
# more reliably when there is one way to write it, and the reply it generates is then the
# canonical text the next turn's prompt repeats (which keeps prefix reuse token-exact).
# The first character of a command, summary or name must be visible, so a constrained reply
# is never blank. After that: ``line`` is one line of prose (no hidden character, raw or
# escaped), ``para`` may also hold \n and \t, ``word`` is a command's (no unusual spaces).
# Each is one character class or one escape, with no rule in between: every level of rule
# is one more parse stack for llama.cpp to advance on every token it checks.
ACTION_GBNF = (
    "\n".join(
        [
            "root    ::= run | done | sched",
            'run     ::= "{\\"cmd\\": " cmd ", \\"why\\": " why "}"',
            'done    ::= "{\\"done\\": " text "}"',
            'sched   ::= "{\\"every\\": \\"" every "\\", \\"on\\": \\"" day "\\", " when',
            'when    ::= "\\"at\\": \\"" hhmm "\\", \\"name\\": " name "}"',
            "every   ::= " + " | ".join(f'"{e}"' for e in EVERY),
            "day     ::= " + " | ".join(f'"{d}"' for d in DAYS),
            'hhmm    ::= ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]',
            f'name    ::= "\\"" lead line{{0,{NAME_MAX - 1}}} "\\""',
            f'cmd     ::= "\\"" lead word{{0,{CMD_MAX - 1}}} "\\""',
            f'why     ::= "\\"" line{{0,{WHY_MAX}}} "\\""',
            f'text    ::= "\\"" lead para{{0,{DONE_MAX - 1}}} "\\""',
            f"lead    ::= {_VISIBLE}",
            f'line    ::= {_PROSE} | "\\\\" ["\\\\/]',
            f'para    ::= {_PROSE} | "\\\\" ["\\\\/nt]',
            f'word    ::= {_COMMAND} | "\\\\" ["\\\\/nt]',
        ]
    )
    + "\n"
)

ACTION_JSON_SCHEMA: JsonObject = {
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

USE_NAME_MAX = 60
USE_ARGS_MAX = 16
USE_VALUE_MAX = 200
# The shape of a ``use`` reply in general; the per-task schema (``recipe_grammar``) also
# enumerates the recipes and values.
USE_JSON_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        "use": {"type": "string", "minLength": 1, "maxLength": USE_NAME_MAX},
        "args": {
            "type": "object",
            "additionalProperties": {"type": ["string", "integer"]},
            "maxProperties": USE_ARGS_MAX,
        },
    },
    "required": ["use", "args"],
    "additionalProperties": False,
}

# What the loop hands a backend: the model layer knows reply formats, not actions.
ACTION_FORMAT = ReplyFormat("action", ACTION_GBNF, ACTION_JSON_SCHEMA)

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


def _from_object(obj: JsonObject, text: str) -> Action:
    keys = set(obj)
    if "use" in keys:
        return _use(obj, text)
    fields: dict[str, str] = {}
    for key, value in obj.items():
        if not isinstance(value, str):
            raise InputError(
                f"action field {_key_name(key)} must be a string, got {type(value).__name__}",
                hint=_EXPECTED,
            )
        fields[key] = value
    if "cmd" in keys and keys <= {"cmd", "why"}:
        cmd = _text(fields, "cmd", limit=CMD_MAX, lines=True, spaces=False)
        if not cmd:
            raise InputError("action has an empty command", hint=_EXPECTED)
        return RunAction(cmd=cmd, why=_text(fields, "why", limit=WHY_MAX))
    if keys == {"done"}:
        done = _text(fields, "done", limit=DONE_MAX, lines=True)
        if not done:
            raise InputError("finish action has an empty summary", hint=_EXPECTED)
        return FinishAction(done=done)
    if "every" in keys and keys <= {"every", "on", "at", "name"}:
        every = _text(fields, "every", limit=16).lower()
        on = _text(fields, "on", limit=16, default="mon").lower()
        at = _text(fields, "at", limit=5, default="09:00")
        name = _text(fields, "name", limit=NAME_MAX)
        day = next((d for d in DAYS if _WEEKDAY.get(on, on) == d), None)
        if every not in EVERY or day is None or not _HHMM.fullmatch(at):
            raise InputError(
                f"schedule action has a bad field: {_preview(text)}",
                hint='e.g. {"every": "week", "on": "sun", "at": "03:00", ...}',
            )
        return ScheduleAction(every=every, on=day, at=at, name=name or "job")
    found = ", ".join(sorted(_key_name(k) for k in keys)) or "no keys"
    raise InputError(f"unknown action ({found}): {_preview(text)}", hint=_EXPECTED)


_NAME = re.compile(r"[a-z][a-z0-9_]{0,59}", re.ASCII)
_SLOT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}", re.ASCII)
_USE_HINT = 'e.g. {"use": "largest_files", "args": {"dir": "~/Downloads", "count": "5"}}'


def _use(obj: JsonObject, text: str) -> UseAction:
    """A ``use`` reply: a recipe name and its arguments, each a string or an integer."""
    name, args = obj.get("use"), obj.get("args", {})
    if set(obj) - {"use", "args"} or not isinstance(name, str) or not isinstance(args, dict):
        raise InputError(f"use action has a bad field: {_preview(text)}", hint=_USE_HINT)
    if not _NAME.fullmatch(name):
        raise InputError(f"not a recipe name: {_preview(name)}", hint=_USE_HINT)
    if len(args) > USE_ARGS_MAX:
        raise InputError(f"use action has {len(args)} arguments", hint=_USE_HINT)
    values: list[tuple[str, str]] = []
    for key, value in args.items():
        if not _SLOT_NAME.fullmatch(key):
            raise InputError(f"not a slot name: {_key_name(key)}", hint=_USE_HINT)
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise InputError(
                f"argument {key} must be a string or a number, got {type(value).__name__}",
                hint=_USE_HINT,
            )
        shown = check_text(
            str(value).strip(),
            what=f"argument {key}",
            limit=USE_VALUE_MAX,
            hint="write one line of visible text",
        )
        values.append((key, shown))
    return UseAction(use=name, args=tuple(values))


_HHMM = re.compile(r"[0-9]{1,2}:[0-9]{2}", re.ASCII)
_WEEKDAY = {
    name: name[:3]
    for name in ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
}
_FIELDS = {
    "cmd": "the command",
    "why": "the reason (why)",
    "done": "the summary (done)",
    "every": "the schedule's every",
    "on": "the schedule's on",
    "at": "the schedule's at",
    "name": "the job name",
}


def _text(
    obj: Mapping[str, str],
    key: str,
    *,
    limit: int,
    lines: bool = False,
    spaces: bool = True,
    default: str = "",
) -> str:
    """One field, stripped, holding nothing a terminal would hide or reinterpret."""
    value = obj.get(key, default).strip()
    hint = "write one line of visible text" if not lines else "write visible text"
    return check_text(value, what=_FIELDS[key], limit=limit, lines=lines, spaces=spaces, hint=hint)


def _key_name(key: str) -> str:
    """A key as a message shows it: a plain name as is, anything else cut and ``repr``'d."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,19}", key):
        return key
    return repr(key if len(key) <= 20 else key[:19] + "…")


def _preview(text: str, limit: int = 80) -> str:
    """A reply in a message: cut short, and ``repr`` shows every hidden character escaped."""
    flat = text.strip()
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")
