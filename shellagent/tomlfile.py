"""Reading the TOML files a user writes (config, policy), with errors that name file:line.

``read`` parses a file (a syntax error gives tomllib's line); ``validate`` checks the data
against a pydantic model and turns the first error into a ``ConfigError`` at the line of
the key it is about, found by ``line_of`` from the error's location (``("model",
"context")``, ``("rule", 3, "decision")``). pydantic is imported only when a file is
validated.
"""

from __future__ import annotations

import re
import tomllib
from datetime import date, datetime, time
from pathlib import Path
from typing import Any, TypeAlias, TypeVar

from shellagent.errors import ConfigError

__all__ = ["TomlTable", "TomlValue", "line_of", "read", "validate"]

# What ``tomllib`` hands over, before ``validate`` reads it into a model.
TomlValue: TypeAlias = (
    "str | int | float | bool | datetime | date | time | list[TomlValue] | dict[str, TomlValue]"
)
TomlTable: TypeAlias = "dict[str, TomlValue]"

T = TypeVar("T")

_HEADER = re.compile(r"\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(
    r"""\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*="""
)


def read(path: Path, what: str) -> tuple[str, TomlTable]:
    """The text and the parsed table of the TOML file ``path`` (``what`` names it in errors)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {what}: {exc.strerror}", path=str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{what} is not UTF-8 text", path=str(path)) from None
    return text, parse(text, path, what)


def parse(text: str, path: Path, what: str) -> TomlTable:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"line (\d+)", str(exc))
        raise ConfigError(
            f"{what} is not valid TOML: {str(exc).split(' (at line')[0]}",
            path=str(path),
            line=int(line.group(1)) if line else None,
        ) from None


def validate(model: type[T], data: Any, text: str, path: Path, *, hint: str) -> T:
    """``model`` (a pydantic model class) validated from ``data``; errors name file:line."""
    from pydantic import BaseModel, ValidationError

    assert issubclass(model, BaseModel)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        where = ".".join(str(p) for p in loc)
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown setting"
        raise ConfigError(
            f"{where}: {message}", path=str(path), line=line_of(text, loc), hint=hint
        ) from None


def _split_key(key: str) -> tuple[str, ...]:
    parts = re.findall(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""", key)
    return tuple(p.strip("\"'") for p in parts)


def line_of(text: str, loc: tuple[int | str, ...]) -> int | None:
    """The 1-based line that defines ``loc``: the key itself, else its nearest table."""
    best: tuple[int, int] | None = None  # (length of the matched prefix, line)
    table: tuple[int | str, ...] = ()
    counts: dict[tuple[int | str, ...], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            name = _split_key(header.group(2))
            if header.group(1) == "[[":
                index = counts.get(name, 0)
                counts[name] = index + 1
                table = (*name, index)
            else:
                table = name
            path: tuple[int | str, ...] = table
        else:
            key = _KEY.match(line)
            if not key:
                continue
            path = (*table, *_split_key(key.group(1)))
        size = len(path)
        if path == loc[:size] and (best is None or size > best[0]):
            best = (size, number)
    return best[1] if best else None
