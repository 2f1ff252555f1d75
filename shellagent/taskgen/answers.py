"""Final answers built from what the gold commands printed, never written by hand.

A template is text with placeholders for command output::

    "The largest file is {out|first}."        {out}: the last command's output
    "Deleted {out1|count} files."             {outN}: the N-th command's (from 1)

Filters: none (the output, stripped), ``lines`` (its non-empty lines joined by ", "),
``count`` (how many non-empty lines), ``first`` / ``last`` (one line), ``names`` (the last
path component of each line, joined by ", "). Only these placeholders are special; other
braces are kept as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

PLACEHOLDER = re.compile(r"\{out(\d*)(?:\|([a-z]+))?\}")


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _name(line: str) -> str:
    return line.rstrip("/").rsplit("/", 1)[-1]


FILTERS: dict[str, Callable[[str], str]] = {
    "": lambda text: text.strip(),
    "lines": lambda text: ", ".join(_lines(text)),
    "count": lambda text: str(len(_lines(text))),
    "first": lambda text: next(iter(_lines(text)), ""),
    "last": lambda text: (_lines(text) or [""])[-1],
    "names": lambda text: ", ".join(_name(line) for line in _lines(text)),
}


class TemplateError(ValueError):
    """A template that names an unknown filter or a command that does not exist."""


def check_template(template: str, commands: int) -> None:
    """Raise ``TemplateError`` unless every placeholder fits ``commands`` commands."""
    if not PLACEHOLDER.search(template):
        raise TemplateError("the answer template uses no command output")
    for match in PLACEHOLDER.finditer(template):
        index, name = match.group(1), match.group(2) or ""
        if name not in FILTERS:
            raise TemplateError(f"unknown filter {name!r} in {match.group(0)}")
        if index and not 1 <= int(index) <= commands:
            raise TemplateError(f"{match.group(0)}: there are {commands} commands")


def render(template: str, outputs: Sequence[str]) -> str:
    """The answer: ``template`` with each placeholder replaced from ``outputs``."""
    check_template(template, len(outputs))

    def one(match: re.Match[str]) -> str:
        index = int(match.group(1)) - 1 if match.group(1) else len(outputs) - 1
        return FILTERS[match.group(2) or ""](outputs[index])

    return PLACEHOLDER.sub(one, template).strip()
