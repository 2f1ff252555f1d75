"""A user's own recipe from a session that worked (``shellagent recipes add --from``).

The task text becomes the first phrasing and the commands, joined with ``&&``, the
template. Where a token of the task (a path, a number, an extension, a quoted string)
appears literally in the commands, it becomes a slot whose default is that token, so the
recipe does the same thing as the session by default and something else when asked. Both
texts go through the caller's redactor first. A token is made a slot only where the
template stays safe to render (``template.problems``); elsewhere it stays literal.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from shellagent.errors import InputError
from shellagent.recipes.model import Kind, Recipe, RecipeSpec, Slot
from shellagent.recipes.slots import SlotError, slot_type
from shellagent.recipes.template import problems

__all__ = ["recipe_from_session", "recipe_toml", "save_recipe"]

_QUOTED = re.compile(r"""'([^'\n]{1,200})'|"([^"\n]{1,200})"|‘([^’\n]{1,200})’|“([^”\n]{1,200})”""")
_PATH = re.compile(r"""(?<![\w.~/-])((?:~|\.{1,2})?/[^\s'"`,;]*|~)(?=[\s'"`,;]|$)""")
_EXT = re.compile(r"(?<![\w.])(?:\*)?\.([A-Za-z0-9]{1,10})\b(?![./])")
_NUMBER = re.compile(r"(?<![\w.:/-])([0-9]{1,9})(?![\w.:/-])")
_STOP = frozenset(
    ("a", "an", "the", "my", "me", "of", "in", "on", "to", "for", "and", "or", "all")
    + ("please", "can", "could", "you", "i")
)


@dataclass(frozen=True)
class _Token:
    value: str
    type: str
    slot: str


def _tokens(task: str) -> list[_Token]:
    found: list[tuple[str, str]] = []
    for m in _QUOTED.finditer(task):
        value = next(g for g in m.groups() if g is not None)
        found.append((value, "path" if "/" in value or value.startswith("~") else "text"))
    for m in _PATH.finditer(task):
        found.append((m.group(1).rstrip(".?!:)"), "path"))
    for m in _EXT.finditer(task):
        found.append((m.group(1), "ext"))
    for m in _NUMBER.finditer(task):
        found.append((m.group(1), "number"))
    tokens: list[_Token] = []
    seen: set[str] = set()
    counts: dict[str, int] = {}
    for value, kind in found:
        if not value or value in seen:
            continue
        seen.add(value)
        counts[kind] = counts.get(kind, 0) + 1
        slot = kind if counts[kind] == 1 else f"{kind}{counts[kind]}"
        tokens.append(_Token(value, kind, slot))
    return tokens


def _in_command(token: _Token) -> re.Pattern[str]:
    value = re.escape(token.value)
    if token.type == "ext":
        return re.compile(rf"(?<=\.){value}(?![\w.])")
    if token.type == "number":
        return re.compile(rf"(?<![\w.:/-]){value}(?![\w.:/])")
    # a whole word, with the quotes around it if it was quoted
    return re.compile(rf"""(?<![^\s=(])(['"]?){value}\1(?=[\s;|&)<>]|$)""")


def _name(task: str, taken: Collection[str]) -> str:
    words = [w for w in re.findall(r"[a-z]+", task.lower()) if w not in _STOP][:4]
    base = "my_" + ("_".join(words) or "recipe")
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def recipe_from_session(
    task: str,
    commands: Sequence[str],
    *,
    redact: Callable[[str], str],
    kind: Kind = "action",
    taken: Collection[str] = (),
    name: str | None = None,
) -> Recipe:
    """A recipe doing what ``commands`` did for ``task`` (see the module docstring).

    ``redact`` is the transcript redactor's ``redact``; ``taken`` the names already used
    (the new name avoids them). ``InputError`` when there is nothing to make a recipe of.
    """
    task = " ".join(redact(task).split())
    commands = [redact(c).strip() for c in commands if c.strip()]
    if not task or not commands:
        raise InputError("the session has no task text or no command to make a recipe of")
    template = " && ".join(commands)
    phrasing = task.replace("{", "(").replace("}", ")")
    slots: dict[str, Slot] = {}
    for token in _tokens(task):
        try:
            default = slot_type(token.type).validate(token.value)
        except SlotError:
            continue
        candidate = _in_command(token).sub("{" + token.slot + "}", template)
        if candidate == template:
            continue
        types = {**{s.name: s.type for s in slots.values()}, token.slot: token.type}
        if any(True for _ in problems(candidate, types)):
            continue
        template = candidate
        phrasing = phrasing.replace(token.value, "{" + token.slot + "}")
        slots[token.slot] = Slot(token.slot, token.type, default)
    summary = task if len(task) <= 200 else task[:197] + "..."
    recipe = Recipe(
        name=name or _name(task, taken),
        summary=summary,
        kind=kind,
        phrasings=(phrasing,),
        templates=(template,),
        slots=slots,
        area="mine",
    )
    RecipeSpec.model_validate(_as_data(recipe))  # the file format accepts it
    return recipe


def _as_data(recipe: Recipe) -> dict[str, object]:
    data: dict[str, object] = {
        "name": recipe.name,
        "summary": recipe.summary,
        "kind": recipe.kind,
        "phrasings": list(recipe.phrasings),
        "templates": list(recipe.templates),
    }
    if recipe.family:
        data["family"] = recipe.family
    return data


def _string(text: str) -> str:
    # A JSON string is a TOML basic string, but for DEL, which TOML wants escaped.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def recipe_toml(recipe: Recipe) -> str:
    """The ``[[recipe]]`` block of ``recipe`` in the file format."""
    lines = ["[[recipe]]"]
    for key, value in _as_data(recipe).items():
        if isinstance(value, list):
            items = "".join(f"  {_string(v)},\n" for v in value)
            lines.append(f"{key} = [\n{items}]")
        else:
            lines.append(f"{key} = {_string(str(value))}")
    if recipe.family_args:
        pairs = ", ".join(f"{k} = {_string(v)}" for k, v in recipe.family_args.items())
        lines.append(f"family_args = {{ {pairs} }}")
    if recipe.slots:
        lines.append("")
        lines.append("[recipe.slots]")
        for slot in recipe.slots.values():
            fields = [f"type = {_string(slot.type)}"]
            if slot.default is not None:
                fields.append(f"default = {_string(slot.default)}")
            if slot.help:
                fields.append(f"help = {_string(slot.help)}")
            if slot.choices:
                fields.append("choices = [" + ", ".join(map(_string, slot.choices)) + "]")
            if slot.numbers:
                fields.append("numbers = true")
            lines.append(f"{slot.name} = {{ {', '.join(fields)} }}")
    for test in recipe.tests:
        lines.append("")
        lines.append("[[recipe.tests]]")
        lines.append("setup = [" + ", ".join(map(_string, test.setup)) + "]")
        args = ", ".join(f"{k} = {_string(v)}" for k, v in test.args.items())
        lines.append(f"args = {{ {args} }}")
        lines.append(f"check = {_string(test.check)}")
    return "\n".join(lines) + "\n"


def save_recipe(recipe: Recipe, path: Path) -> Path:
    """Append ``recipe`` to the recipe file ``path`` (made with ``area = "mine"`` if new).

    The file is replaced in one step, and only if it still reads without a problem."""
    from shellagent.recipes.loader import read_file

    old = path.read_text(encoding="utf-8") if path.exists() else 'area = "mine"\n'
    text = old.rstrip("\n") + "\n\n" + recipe_toml(recipe)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".mine-", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        loaded, bad = read_file(Path(tmp))
        if recipe.name not in {r.name for r in loaded}:
            why = next((b for b in bad if repr(recipe.name) in b), "; ".join(bad))
            raise InputError(f"the new recipe would not load: {why}")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
