"""Rendering: a recipe, a template and slot values become one command line.

Each value is first validated by its slot's type, then quoted for where its placeholder
stands (``template.py``):

- outside quotes, one shell word: ``shlex.quote`` (plain when nothing needs quoting); a
  path keeps ``~/`` unquoted so it expands (``"$HOME"/`` when the placeholder is not at
  the start of a word, where ``~`` would not expand), and a path starting with ``-`` gets
  ``./`` so it is never read as an option;
- inside single quotes: the value with each ``'`` written ``'\\''``;
- the sed filters first escape the value for a sed regex (``sed_re``: ``\\ / . * [ ] ^ $``)
  or replacement (``sed_repl``: ``\\ / &``); ``bytes`` writes a size as find's byte count;
  ``jq_filter`` and ``arithmetic`` refuse a value outside their slot type's grammar (a
  ``text`` slot that becomes a jq or bc program keeps to paths or to arithmetic).

A value can therefore never add a word, a command or an expansion to the command.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

from shellagent.recipes.model import Recipe
from shellagent.recipes.slots import PATH_TYPES, TYPES, SlotError
from shellagent.recipes.template import Placeholder, parse

__all__ = [
    "arithmetic",
    "jq_filter",
    "phrase",
    "render",
    "render_all",
    "render_plain",
    "sed_re",
    "sed_repl",
    "shell_word",
    "size_bytes",
]


def sed_re(value: str) -> str:
    """``value`` as a literal sed basic regular expression between ``/``."""
    return "".join("\\" + c if c in "\\/.*[]^$" else c for c in value)


def sed_repl(value: str) -> str:
    """``value`` as a literal sed replacement between ``/``."""
    return "".join("\\" + c if c in "\\/&" else c for c in value)


_UNIT = {"": 1, "k": 1024, "K": 1024, "M": 1024**2, "G": 1024**3}


def size_bytes(value: str) -> str:
    """A size (``1k``, ``100M``) as find's exact byte count (``1024c``): ``-size -1k``
    means "0 blocks of 1k" (find rounds up), so "smaller than 1k" must be said in bytes."""
    match = re.fullmatch(r"(\d+)([kKMG]?)", value)
    if match is None:
        raise SlotError(f"{value!r} is not a size", hint="a number with k, M or G: 100k")
    return f"{int(match.group(1)) * _UNIT[match.group(2)]}c"


def jq_filter(value: str) -> str:
    """``value`` if it keeps to the ``jq_filter`` slot type's grammar (paths, pipes, a few
    functions, simple selects), else ``SlotError``: free text must not become a jq program
    that reads ``$ENV``, more input, or builds without bound."""
    return TYPES["jq_filter"].validate(value)


def arithmetic(value: str) -> str:
    """``value`` if it is arithmetic for bc (the ``arithmetic`` slot type), else
    ``SlotError``: free text must not become a bc program (loops, functions, read())."""
    return TYPES["arithmetic"].validate(value)


_FILTERS = {
    "sed_re": sed_re,
    "sed_repl": sed_repl,
    "bytes": size_bytes,
    "jq_filter": jq_filter,
    "arithmetic": arithmetic,
}


def shell_word(value: str, *, path: bool = False, word_start: bool = True) -> str:
    """``value`` as one shell word outside quotes (see the module docstring)."""
    if path:
        if value == "~" or value.startswith("~/"):
            home = "~" if word_start else '"$HOME"'
            rest = value[2:]
            return home + ("/" + shlex.quote(rest) if rest else ("/" if value == "~/" else ""))
        if value.startswith("-"):
            value = "./" + value
    return shlex.quote(value)


def _one(part: Placeholder, value: str, slot_type: str) -> str:
    if part.filter is not None:
        value = _FILTERS[part.filter](value)
    if part.context == "single":
        return value.replace("'", "'\\''")
    if part.context != "bare":  # the loader refuses these templates; never render one
        raise SlotError(f"{{{part.name}}} stands inside double quotes")
    return shell_word(
        value,
        path=slot_type in PATH_TYPES and part.filter is None,
        word_start=part.word_start,
    )


def render(recipe: Recipe, args: Mapping[str, object], template: int = 0) -> str:
    """The command of ``recipe``'s template number ``template`` with ``args`` (validated;
    missing slots take their defaults). ``SlotError`` for a value a type refuses."""
    return _fill(recipe, recipe.templates[template], recipe.args(args))


def render_plain(recipe: Recipe, args: Mapping[str, object]) -> str:
    """The command of ``recipe``'s plain template with ``args`` ("" when it has none):
    what a worked example shows, never what the recipe step runs."""
    return _fill(recipe, recipe.plain, recipe.args(args)) if recipe.plain else ""


def _fill(recipe: Recipe, template: str, values: Mapping[str, str]) -> str:
    parts = parse(template, frozenset(recipe.slots))
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        else:
            out.append(_one(part, values[part.name], recipe.slots[part.name].type))
    return "".join(out)


def render_all(recipe: Recipe, args: Mapping[str, object]) -> list[str]:
    """The command of every template, in order."""
    return [render(recipe, args, i) for i in range(len(recipe.templates))]


def phrase(recipe: Recipe, args: Mapping[str, object], phrasing: int = 0) -> str:
    """A phrasing with the slot values written in (as a user would type them)."""
    values = recipe.args(args)
    text = recipe.phrasings[phrasing]
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text
