"""The file of what you taught: ``<config dir>/recipes/taught.toml``.

It is a recipe file like any other (``docs/recipes.md``) with ``area = "taught"``: a
``[[recipe]]`` per recipe made from your own commands, and a ``[[phrasing]]`` per request
taught to mean an existing recipe with some values. ``append`` adds one entry, ``remove``
takes entries out by name; both rewrite the file in one step, keep everything else as it
was (comments too), and write only a file that still reads without a new problem. A lock
beside the file keeps two writers (``ask`` and ``recipes add``) from losing each other's
entry.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import tempfile
import tomllib
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path

from shellagent.errors import InputError
from shellagent.recipes.loader import TAUGHT_FILE, user_dir

__all__ = ["HEADER", "append", "entries", "phrasing_toml", "remove", "taught_path"]

HEADER = """\
# What you taught shellagent: a recipe made from your own commands ([[recipe]]) or a request
# that means an existing recipe with some values ([[phrasing]]). Written by `shellagent
# recipes add --task` and by corrections you confirm in `ask`; `shellagent recipes rm NAME`
# forgets one. You may edit it (docs/recipes.md describes the format).
area = "taught"
"""
_BLOCK = re.compile(r"^\[\[(recipe|phrasing)\]\]\s*$", re.M)


def taught_path() -> Path:
    return user_dir() / TAUGHT_FILE


def _string(text: str) -> str:
    import json

    # A JSON string is a TOML basic string, but for DEL, which TOML wants escaped.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def phrasing_toml(name: str, recipe: str, text: str, args: Mapping[str, str]) -> str:
    """The ``[[phrasing]]`` block of a taught phrasing."""
    pairs = ", ".join(f"{k} = {_string(v)}" for k, v in args.items())
    return (
        "[[phrasing]]\n"
        f"name = {_string(name)}\n"
        f"recipe = {_string(recipe)}\n"
        f"text = {_string(text)}\n"
        f"args = {{ {pairs} }}\n"
    )


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _blocks(text: str) -> tuple[str, list[str]]:
    """The text before the first entry, and each entry's text (a block runs to the next
    ``[[recipe]]`` or ``[[phrasing]]``: its ``[recipe.slots]`` and tests belong to it)."""
    starts = [m.start() for m in _BLOCK.finditer(text)]
    if not starts:
        return text, []
    ends = [*starts[1:], len(text)]
    return text[: starts[0]], [text[a:b] for a, b in zip(starts, ends, strict=True)]


def _entry(block: str) -> tuple[str, Mapping[str, object]]:
    """The kind (``recipe`` or ``phrasing``) and fields of one block."""
    try:
        data = tomllib.loads(block)
    except tomllib.TOMLDecodeError:
        return "", {}
    for kind in ("recipe", "phrasing"):
        items = data.get(kind)
        if isinstance(items, list) and items and isinstance(items[0], dict):
            return kind, items[0]
    return "", {}


def entries(path: Path | None = None) -> list[tuple[str, Mapping[str, object]]]:
    """Each entry of the file as (kind, fields), in order; [] when there is no file."""
    path = path or taught_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [_entry(block) for block in _blocks(text)[1]]


def _write(path: Path, text: str, check: Callable[[Path], None]) -> None:
    """Replace ``path`` with ``text`` if ``check`` (given the new file) does not raise."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".taught-", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        check(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def append(
    block: str, name: str, path: Path | None = None, *, replaces: Collection[str] = ()
) -> Path:
    """Add the entry ``block`` (named ``name``) to the file, first taking out the entries
    named in ``replaces``; ``InputError`` when the new file would not read it."""
    from shellagent.recipes.loader import read_contents  # the file alone

    path = path or taught_path()
    with _locked(path):
        try:
            old = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            old = HEADER
        head, blocks = _blocks(old)
        kept = [b for b in blocks if str(_entry(b)[1].get("name")) not in replaces]
        text = "".join([head.rstrip("\n") + "\n", *("\n" + b.strip("\n") + "\n" for b in kept)])
        text += "\n" + block.strip("\n") + "\n"

        def check(new: Path) -> None:
            read = read_contents(new)
            names = {r.name for r in read.recipes} | {p.spec.name for p in read.phrasings}
            if name not in names:
                why = next((p for p in read.problems if repr(name) in p), "; ".join(read.problems))
                raise InputError(f"what was taught would not load: {why}")

        _write(path, text, check)
    return path


def remove(names: Collection[str], path: Path | None = None) -> list[str]:
    """Take the entries named ``names`` out of the file; the names taken out."""
    path = path or taught_path()
    with _locked(path):
        try:
            old = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        head, blocks = _blocks(old)
        gone = [str(_entry(b)[1].get("name")) for b in blocks]
        kept = [b for b, n in zip(blocks, gone, strict=True) if n not in names]
        if len(kept) == len(blocks):
            return []
        text = "".join([head.rstrip("\n") + "\n", *("\n" + b.strip("\n") + "\n" for b in kept)])
        _write(path, text, lambda new: None)
        return [n for n in gone if n in names]
