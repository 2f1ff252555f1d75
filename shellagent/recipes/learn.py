"""Learning a correction at once: a request, and the command that did it or the recipe picked.

``teach_commands(task, commands)`` (``shellagent recipes add --task TASK -- COMMAND…``, and a
command you edited or typed in ``ask`` and then confirmed): when the command is a rendering
of an existing recipe (``match_commands``: read against each template, the values it holds
rendered again to exactly the same command), the request becomes a **phrasing** of that
recipe with those values (the values the request says marked as ``{slot}``); otherwise a
**recipe of yours** is made from it as ``recipe_from_session`` makes one (values of the
request that appear in the commands become slots). ``teach(task, recipe, args)`` is the
same for a recipe picked among alternatives (one composed for the task only is kept as a
recipe of yours). ``forget(name)`` takes a taught entry out again.

What is learned goes to ``taught.toml`` (``shellagent.recipes.taught``) redacted: the
request through the caller's ``redact``, and a command that holds a secret is refused, not
stored with a placeholder that would not run. The same request taught again replaces what
was taught for it before. Nothing is trained: the ranker's nearest-phrasing layer takes it
in (``shellagent.recipes.nearest``).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from shellagent.errors import InputError
from shellagent.recipes.fromsession import recipe_from_session, recipe_toml
from shellagent.recipes.loader import Catalog, load, phrasing_recipe
from shellagent.recipes.model import Kind, PhrasingSpec, Recipe
from shellagent.recipes.render import render
from shellagent.recipes.slots import SlotError
from shellagent.recipes.taught import append, phrasing_toml, remove, taught_path
from shellagent.recipes.template import Placeholder, TemplateProblem, parse, problems

__all__ = ["Learned", "forget", "match_commands", "teach", "teach_commands"]

Redact = Callable[[str], str]

# One shell word outside quotes (quoted parts and escapes included), and the text inside
# single quotes (``'\''`` stands for a quote).
_WORD = r"""(?:[^\s'"\\;&|<>()]|\\.|'[^']*'|"(?:[^"\\]|\\.)*")+"""
_IN_SINGLE = r"(?:[^']|'\\'')*"
_NAME_MAX = 60


@dataclass(frozen=True)
class Learned:
    """What was learned: the entry ``name`` (what ``recipes rm`` takes) for ``task``, the
    recipe as it now loads (for a phrasing: ``base`` with the taught values), and the
    entries it replaced (taught before for the same request)."""

    name: str
    task: str
    recipe: Recipe
    base: str | None
    path: Path
    replaced: tuple[str, ...] = ()

    def line(self) -> str:
        """One line for the screen: what was learned and how to forget it."""
        what = f"the recipe {self.base}" if self.base else "a recipe of yours"
        task = self.task if len(self.task) <= 60 else self.task[:57] + "..."
        return (
            f'learned: "{task}" now runs {what} ({self.name}); forget it with '
            f"`shellagent recipes rm {self.name}`"
        )


# -- reading a command against the templates --------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _pattern(
    template: str, names: frozenset[str]
) -> tuple[re.Pattern[str], tuple[Placeholder, ...]] | None:
    try:
        parts = parse(template, names)
    except TemplateProblem:
        return None
    regex: list[str] = []
    holes: list[Placeholder] = []
    for part in parts:
        if isinstance(part, str):
            regex.append(r"\s+".join(re.escape(w) for w in re.split(r"\s+", part)))
        else:
            holes.append(part)
            regex.append(f"({_IN_SINGLE if part.context == 'single' else _WORD})")
    return re.compile("".join(regex), re.S), tuple(holes)


def _value(word: str, part: Placeholder) -> str | None:
    """The value a placeholder's text stands for (``None``: not one the renderer writes)."""
    if part.context == "single":
        value = word.replace("'\\''", "'")
    else:
        if word.startswith('"$HOME"/'):
            word = "~/" + word[len('"$HOME"/') :]
        try:
            words = shlex.split(word)
        except ValueError:
            return None
        if len(words) != 1:
            return None
        value = words[0]
    if part.filter in ("sed_re", "sed_repl"):
        value = re.sub(r"\\(.)", r"\1", value)
    elif part.filter == "bytes":
        value = value.removesuffix("c")
    return value


@functools.lru_cache(maxsize=4096)
def _fixed(template: str, names: frozenset[str]) -> tuple[str, ...]:
    """The fixed text of ``template`` between its placeholders, word by word."""
    try:
        parts = parse(template, names)
    except TemplateProblem:
        return ()
    return tuple(w for part in parts if isinstance(part, str) for w in part.split())


def _read_as(recipe: Recipe, index: int, command: str) -> dict[str, str] | None:
    """The values that render template ``index`` of ``recipe`` as ``command`` exactly
    (whitespace aside), or None."""
    names = frozenset(recipe.slots)
    if not all(w in command for w in _fixed(recipe.templates[index], names)):
        return None  # cheap, and exact: a rendering holds every fixed word
    compiled = _pattern(recipe.templates[index], names)
    if compiled is None:
        return None
    pattern, holes = compiled
    found = pattern.fullmatch(command)
    if found is None:
        return None
    values: dict[str, str] = {}
    for part, word in zip(holes, found.groups(), strict=True):
        value = _value(word, part)
        if value is None or values.setdefault(part.name, value) != value:
            return None
    try:
        rendered = render(recipe, values, index)
    except InputError:  # a value its type refuses, or a required slot it does not use
        return None
    return values if rendered.split() == command.split() else None


def match_commands(
    commands: Sequence[str], recipes: Sequence[Recipe]
) -> tuple[Recipe, dict[str, str]] | None:
    """The recipe ``commands`` (joined with ``&&``) are a rendering of, with the values
    they hold; None when they are no recipe's. Of several, a shipped recipe before one of
    yours, then the template with the most fixed text (the most specific)."""
    command = " && ".join(c.strip() for c in commands if c.strip())
    found: list[tuple[bool, int, str, Recipe, dict[str, str]]] = []
    for recipe in recipes:
        if recipe.base is not None:  # a phrasing renders as its recipe: match that
            continue
        for index, template in enumerate(recipe.templates):
            values = _read_as(recipe, index, command)
            if values is None:
                continue
            fixed = len(re.sub(r"\{[a-z][a-z0-9_]*(?:\|[a-z_]+)?\}", "", template))
            found.append((recipe.origin != "shipped", -fixed, recipe.name, recipe, values))
    if not found:
        return None
    best = min(found, key=lambda f: f[:3])
    return best[3], best[4]


# -- learning ----------------------------------------------------------------------------------


def _marked(task: str, values: Mapping[str, str]) -> str:
    """``task`` with the first place it says each value marked ``{slot}``."""
    text = task.replace("{", "(").replace("}", ")")
    for name, value in sorted(values.items(), key=lambda kv: -len(kv[1])):
        if not value.strip():
            continue
        said = re.compile(rf"(?<![\w/~.{{-]){re.escape(value)}(?![\w/}}-])")
        text = said.sub("{" + name + "}", text, count=1)
    return text


def _free_name(base: str, taken: set[str]) -> str:
    base = base[:_NAME_MAX].rstrip("_")
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def _same(a: str, b: str) -> bool:
    from shellagent.recipes.rank import normalise

    return normalise(a) == normalise(b)


def _taught_for(task: str, catalog: Catalog, path: Path) -> set[str]:
    """What ``path`` holds for the same request (values aside), and what depends on it."""
    here = [r for r in catalog.recipes.values() if r.taught and _in(r, path)]
    same = {r.name for r in here if any(_same(_filled(r, p), task) for p in r.phrasings)}
    return same | {r.name for r in here if r.base in same}


def _filled(recipe: Recipe, phrasing: str) -> str:
    for name, slot in recipe.slots.items():
        if slot.default is not None:
            phrasing = phrasing.replace("{" + name + "}", slot.default)
    return phrasing


def _in(recipe: Recipe, path: Path) -> bool:
    return bool(recipe.source) and Path(recipe.source).resolve() == path.resolve()


def _clean(task: str, redact: Redact) -> str:
    task = " ".join(redact(task).split())
    if not task:
        raise InputError("the task is empty: say what the command does", hint='--task "…"')
    return task


def _no_secret(values: Sequence[str], redact: Redact) -> None:
    for value in values:
        if redact(value) != value:
            raise InputError(
                "a command or value holds a secret: it is not learned",
                hint="teach it with the secret in a variable or file instead",
            )


def teach_commands(
    task: str,
    commands: Sequence[str],
    *,
    redact: Redact,
    kind: Kind,
    catalog: Catalog | None = None,
    name: str | None = None,
    path: Path | None = None,
) -> Learned:
    """Learn that ``commands`` do ``task`` (see the module docstring). ``kind`` is the
    new recipe's, when one is made ("question" when the commands only read). ``InputError``
    with one line for what cannot be learned."""
    task = _clean(task, redact)
    cleaned = [c.strip() for c in commands if c.strip()]
    if not cleaned:
        raise InputError("no command to learn", hint="give the command(s) after --")
    _no_secret(cleaned, redact)
    joined = " && ".join(cleaned)
    for why in problems(joined, {}):
        raise InputError(f"cannot learn `{joined[:80]}`: {why}")
    catalog = catalog or load()
    path = path or taught_path()
    replaced = _taught_for(task, catalog, path)
    usable = [r for r in catalog.recipes.values() if r.name not in replaced]
    found = match_commands(cleaned, usable)
    if found is not None:
        return _phrasing(task, found[0], found[1], catalog, name, path, replaced)
    taken = set(catalog.recipes) - replaced
    _free(name, taken)
    recipe = recipe_from_session(task, cleaned, redact=redact, kind=kind, taken=taken, name=name)
    return _recipe(task, recipe, path, replaced)


def teach(
    task: str,
    recipe: Recipe | str,
    args: Mapping[str, object],
    *,
    redact: Redact,
    catalog: Catalog | None = None,
    name: str | None = None,
    path: Path | None = None,
) -> Learned:
    """Learn that ``recipe`` with ``args`` does ``task``: an alternative the user picked
    and confirmed. A recipe of the catalog (or a phrasing of one) gets ``task`` as a
    phrasing with ``args``; a recipe made for the task alone (composed: "find … then
    delete") is kept as a recipe of yours with ``args`` as its defaults."""
    task = _clean(task, redact)
    catalog = catalog or load()
    path = path or taught_path()
    if isinstance(recipe, str):
        recipe = catalog.get(recipe)
    try:
        values = recipe.args(args)
    except SlotError as exc:
        raise InputError(exc.message, hint=exc.hint) from None
    given = {k: values[k] for k in args}
    _no_secret(list(given.values()), redact)
    replaced = _taught_for(task, catalog, path)
    known = catalog.recipes.get(recipe.name)
    if known is not None and known.templates == recipe.templates:
        if known.base is not None and known.base in catalog.recipes:
            taught = {k: s.default for k, s in known.slots.items() if s.default is not None}
            base = catalog.recipes[known.base]
            given = {k: v for k, v in {**taught, **given}.items() if k in base.slots}
            return _phrasing(task, base, given, catalog, name, path, replaced)
        return _phrasing(task, known, given, catalog, name, path, replaced)
    taken = set(catalog.recipes) - replaced
    _free(name, taken)
    slots = {n: dataclasses.replace(s, default=values[n]) for n, s in recipe.slots.items()}
    own = Recipe(
        name=name or _free_name(f"my_{recipe.name}", taken),
        summary=recipe.summary,
        kind=recipe.kind,
        phrasings=(_marked(task, given),),
        templates=recipe.templates,
        slots=slots,
    )
    return _recipe(task, own, path, replaced)


def _free(name: str | None, taken: set[str]) -> None:
    if name is not None and name in taken:
        raise InputError(f"a recipe named {name!r} exists", hint="choose another name")


def _phrasing(
    task: str,
    base: Recipe,
    values: Mapping[str, str],
    catalog: Catalog,
    name: str | None,
    path: Path,
    replaced: set[str],
) -> Learned:
    taken = set(catalog.recipes) - replaced
    _free(name, taken)
    name = name or _free_name(f"my_{base.name}", taken)
    text = _marked(task, values)
    spec = PhrasingSpec(name=name, recipe=base.name, text=text, args=dict(values))
    recipe = phrasing_recipe(spec, {base.name: base}, "taught", str(path))
    append(phrasing_toml(name, base.name, text, values), name, path, replaces=replaced)
    return Learned(name, task, recipe, base.name, path, tuple(sorted(replaced)))


def _recipe(task: str, recipe: Recipe, path: Path, replaced: set[str]) -> Learned:
    recipe = dataclasses.replace(
        recipe, area="taught", source=str(path), origin="yours", taught=True
    )
    append(recipe_toml(recipe), recipe.name, path, replaces=replaced)
    return Learned(recipe.name, task, recipe, None, path, tuple(sorted(replaced)))


def forget(name: str, *, catalog: Catalog | None = None, path: Path | None = None) -> list[str]:
    """Take the taught entry ``name`` out (with the phrasings taught of it); the names
    taken out. ``InputError`` for a shipped recipe or one in a file you wrote."""
    catalog = catalog or load()
    path = path or taught_path()
    recipe = catalog.recipes.get(name)
    if recipe is None:
        gone = remove({name}, path)  # one that no longer loads can still be taken out
        if gone:
            return gone
        raise InputError(f"no recipe named {name!r}", hint="see `shellagent recipes list`")
    if not _in(recipe, path):
        if recipe.origin == "shipped":
            raise InputError(f"{name} is a shipped recipe: it cannot be removed")
        raise InputError(f"{name} is in {recipe.source}, a file you wrote: remove it there")
    dependants = {r.name for r in catalog.recipes.values() if r.base == name and _in(r, path)}
    return remove({name, *dependants}, path)
