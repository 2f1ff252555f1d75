"""Command templates: where each ``{slot}`` stands, and whether it may stand there.

A template is bash with placeholders. Only ``{name}`` (or ``{name|filter}``) where ``name``
is a declared slot is a placeholder; every other brace is literal, so awk's
``'{print $1}'``, find's ``{}`` and brace expansion need no escaping. The template is read
once with bash's quoting rules (single quotes, double quotes, ``$'...'``, backslashes,
``$( )`` inside double quotes) to learn each placeholder's context:

- ``bare``: outside quotes; the value becomes one shell word (``render.py``);
- ``single``: inside single quotes; only ``SINGLE_QUOTE_SAFE`` types, or a sed filter;
- inside double quotes or ``$'...'``: refused.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from shellagent.recipes.slots import PATH_TYPES, SINGLE_QUOTE_SAFE

__all__ = ["FILTERS", "Placeholder", "TemplateProblem", "parse", "problems"]

Context = Literal["bare", "single", "double"]
FILTERS = ("sed_re", "sed_repl", "bytes", "jq_filter", "arithmetic")
PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)(?:\|([a-z_]+))?\}")
# Characters after which an unquoted placeholder starts a new word.
_WORD_BREAK = set(" \t\n;|&()<>")
_OPTION_END = ("-e", "--", "--regexp")
# A value right after these is run as code, whatever its quoting.
_RUNS_CODE = re.compile(
    r"(?:^|[\s;|&(])(?:eval|(?:ba|da|z|k)?sh\s+-c|python3?\s+-c|perl\s+-e|ruby\s+-e|node\s+-e)\s*$"
)


@dataclass(frozen=True)
class Placeholder:
    name: str
    filter: str | None
    context: Context
    word_start: bool
    start: int
    end: int


class TemplateProblem(ValueError):
    """A placeholder the renderer cannot make safe where it stands."""


@functools.lru_cache(maxsize=4096)
def parse(template: str, names: frozenset[str]) -> tuple[str | Placeholder, ...]:
    """``template`` as literal text and placeholders, in order (see the module docstring)."""
    parts: list[str | Placeholder] = []
    stack: list[str] = []  # "'" single, '"' double, "$'" ansi, "(" command substitution
    depth: list[int] = []  # parentheses open in each command substitution on the stack
    literal_from = 0
    i = 0
    n = len(template)
    while i < n:
        c = template[i]
        top = stack[-1] if stack else ""
        if top == "'":
            if c == "'":
                stack.pop()
            elif c == "{" and (m := _placeholder(template, i, names)):
                parts.append(template[literal_from:i])
                parts.append(_make(m, "single", False))
                literal_from = i = m.end()
                continue
            i += 1
            continue
        if c == "{" and (m := _placeholder(template, i, names)):
            context: Context = "double" if ('"' in stack or "$'" in stack) else "bare"
            before = template[i - 1] if i else " "
            parts.append(template[literal_from:i])
            parts.append(_make(m, context, before in _WORD_BREAK))
            literal_from = i = m.end()
            continue
        if c == "\\":
            i += 2
            continue
        if top == "$'":
            if c == "'":
                stack.pop()
        elif top == '"':
            if c == '"':
                stack.pop()
            elif template.startswith("$(", i):
                stack.append("(")
                depth.append(1)
                i += 2
                continue
        else:  # outside quotes, or inside $( )
            if template.startswith("<<<", i):
                i += 3
                continue
            if template.startswith("<<", i):
                # In an unquoted here-document's body quotes are literal and $( ) runs.
                raise TemplateProblem("here-documents are not supported: use printf '%s\\n' {x} |")
            if template.startswith("$'", i):
                stack.append("$'")
                i += 2
                continue
            if c == "'":
                stack.append("'")
            elif c == '"':
                stack.append('"')
            elif template.startswith("$(", i):
                stack.append("(")
                depth.append(1)
                i += 2
                continue
            elif top == "(" and c == "(":
                depth[-1] += 1
            elif top == "(" and c == ")":
                depth[-1] -= 1
                if depth[-1] == 0:
                    depth.pop()
                    stack.pop()
        i += 1
    if stack:
        raise TemplateProblem(f"unbalanced quoting: {_name(stack[-1])} is never closed")
    parts.append(template[literal_from:])
    return tuple(p for p in parts if p != "")


def _name(opening: str) -> str:
    return {"'": "a single quote", '"': "a double quote", "$'": "a $'", "(": "a $("}[opening]


def _placeholder(template: str, i: int, names: frozenset[str]) -> re.Match[str] | None:
    m = PLACEHOLDER.match(template, i)
    return m if m and m.group(1) in names else None


def _make(m: re.Match[str], context: Context, word_start: bool) -> Placeholder:
    return Placeholder(m.group(1), m.group(2), context, word_start, m.start(), m.end())


def problems(template: str, types: Mapping[str, str]) -> Iterable[str]:
    """Why ``template`` cannot be rendered safely with slots of ``types`` (name -> type)."""
    try:
        parts = parse(template, frozenset(types))
    except TemplateProblem as exc:
        yield str(exc)
        return
    for part in parts:
        if isinstance(part, str):
            continue
        kind = types[part.name]
        where = "{" + part.name + (f"|{part.filter}" if part.filter else "") + "}"
        if part.filter is not None and part.filter not in FILTERS:
            yield f"{where}: unknown filter (use {' or '.join(FILTERS)})"
        elif part.context == "bare" and _RUNS_CODE.search(template[: part.start]):
            yield f"{where} would be run as code: a slot's value must stay data"
        elif part.context == "double":
            yield f"{where} is inside double quotes or $'...': put it outside the quotes"
        elif part.context == "single" and part.filter is None and kind not in SINGLE_QUOTE_SAFE:
            yield (
                f"{where} is a {kind} inside single quotes: pass it as its own word "
                "(awk -v x={" + part.name + "}) or through a sed filter"
            )
        elif kind == "pattern" and part.context == "bare" and part.word_start and not part.filter:
            previous = template[: part.start].split()
            if not previous or previous[-1] not in _OPTION_END:
                yield f"{where}: put -e or -- before a pattern, or a leading '-' reads as an option"
        elif kind in PATH_TYPES and part.filter is not None:
            yield f"{where}: a path takes no filter"
