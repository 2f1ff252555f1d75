"""Finding and reading recipe files: the shipped ones and the user's own.

``load()`` reads every ``shellagent/recipes/data/*.toml`` and then every
``<config dir>/recipes/*.toml``. A file or a recipe that is malformed never stops the
others: it becomes a one-line problem naming the file (and line), the recipe and the
field, and is left out. Names are unique across all files; a second recipe of the same
name is a problem too (rename one of them).

A file may also hold ``[[phrasing]]`` entries (``taught.toml`` does: what you taught,
``shellagent.recipes.learn``): a request that means another recipe with some values. Each
becomes a recipe of its own, that recipe with the taught values as defaults (``base``
names it), once every file is read. Recipes of a ``taught.toml`` and every phrasing are
``taught``: the nearest-phrasing layer finds them, not the trained ranker.
"""

from __future__ import annotations

import dataclasses
import re
import string
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shellagent import paths
from shellagent.errors import ConfigError, InputError
from shellagent.recipes.model import (
    FileSpec,
    Origin,
    PhrasingSpec,
    Recipe,
    RecipeSpec,
    RecipeTest,
    Slot,
    build_slot,
)
from shellagent.recipes.slots import SlotError
from shellagent.recipes.template import problems
from shellagent.tomlfile import line_of, parse

__all__ = [
    "DATA_DIR",
    "TAUGHT_FILE",
    "Catalog",
    "FileContents",
    "load",
    "origin_of",
    "phrasing_recipe",
    "read_contents",
    "read_file",
    "user_dir",
]

DATA_DIR = Path(__file__).parent / "data"
TAUGHT_FILE = "taught.toml"  # in the user's recipe folder: what was taught
_PHRASING_SLOT = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def user_dir() -> Path:
    """Where a user's own recipes live: ``<config dir>/recipes``."""
    return paths.config_dir() / "recipes"


@dataclass(frozen=True)
class Catalog:
    """The recipes that loaded, by name, and the one-line problems of those that did not."""

    recipes: Mapping[str, Recipe]
    problems: tuple[str, ...] = ()

    def get(self, name: str) -> Recipe:
        try:
            return self.recipes[name]
        except KeyError:
            raise InputError(
                f"no recipe named {name!r}", hint="see `shellagent recipes list`"
            ) from None

    def areas(self) -> list[str]:
        return sorted({r.area for r in self.recipes.values()})


def files(dirs: Iterable[Path]) -> list[Path]:
    return [p for d in dirs if d.is_dir() for p in sorted(d.glob("*.toml"))]


def origin_of(path: Path) -> Origin:
    """Whose recipes a file holds: the package's (its data folder) or the user's."""
    return "shipped" if path.resolve().parent == DATA_DIR.resolve() else "yours"


def load(dirs: Iterable[Path] | None = None) -> Catalog:
    """Every recipe of ``dirs`` (default: the shipped data, then the user's folder), and
    every phrasing of theirs as a recipe (see the module docstring)."""
    found: dict[str, Recipe] = {}
    trouble: list[str] = []
    phrasings: list[_Phrasing] = []
    for path in files([DATA_DIR, user_dir()] if dirs is None else dirs):
        read = read_contents(path)
        trouble.extend(read.problems)
        phrasings.extend(read.phrasings)
        for recipe in read.recipes:
            _add(found, recipe, trouble)
    plain = dict(found)  # a phrasing is of a recipe, never of another phrasing
    for phrasing in phrasings:
        try:
            recipe = phrasing_recipe(phrasing.spec, plain, phrasing.area, str(phrasing.path))
        except _FieldProblem as exc:
            line = line_of(phrasing.text, (*phrasing.loc, *exc.loc))
            where = f"{phrasing.path}:{line}" if line else str(phrasing.path)
            label = f"phrasing {phrasing.spec.name!r}"
            trouble.append(f"{where}: {label}: {exc.field}: {exc.message}")
            continue
        _add(found, recipe, trouble, "phrasing")
    return Catalog(found, tuple(trouble))


def _add(
    found: dict[str, Recipe], recipe: Recipe, trouble: list[str], kind: str = "recipe"
) -> None:
    if recipe.name in found:
        trouble.append(
            f"{recipe.source}: {kind} {recipe.name!r}: the name is already used by "
            f"{found[recipe.name].source} (rename one of them)"
        )
        return
    found[recipe.name] = recipe


@dataclass(frozen=True)
class _Phrasing:
    spec: PhrasingSpec
    path: Path
    area: str
    text: str  # the file's text, for line numbers
    loc: tuple[int | str, ...]


@dataclass(frozen=True)
class FileContents:
    """What one recipe file holds: its recipes, its phrasings (resolved by ``load``)
    and the problems of what was left out."""

    recipes: list[Recipe]
    phrasings: list[_Phrasing]
    problems: list[str]


def read_file(path: Path) -> tuple[list[Recipe], list[str]]:
    """The recipes of one file, and the problems of those that are left out (its
    phrasings need the other files' recipes: ``load`` reads them)."""
    read = read_contents(path)
    return read.recipes, read.problems


def read_contents(path: Path) -> FileContents:
    try:
        text = path.read_text(encoding="utf-8")
        data = parse(text, path, "recipe file")
    except UnicodeDecodeError:
        return FileContents([], [], [f"{path}: recipe file is not UTF-8 text"])
    except OSError as exc:
        return FileContents([], [], [f"{path}: cannot read the recipe file: {exc.strerror}"])
    except ConfigError as exc:
        return FileContents([], [], [exc.message])
    from pydantic import ValidationError

    try:
        top = FileSpec.model_validate(data)
    except ValidationError as exc:
        return FileContents([], [], [_pydantic_problem(exc, text, path, ())])
    origin = origin_of(path)
    taught = origin == "yours" and path.name == TAUGHT_FILE
    recipes, bad = [], []
    for index, raw in enumerate(top.recipe):
        loc: tuple[int | str, ...] = ("recipe", index)
        label = _label(raw, index)
        try:
            spec = RecipeSpec.model_validate(raw)
        except ValidationError as exc:
            bad.append(_pydantic_problem(exc, text, path, loc, label))
            continue
        try:
            recipe = build(spec, top.area, str(path))
        except _FieldProblem as exc:
            line = line_of(text, (*loc, *exc.loc))
            where = f"{path}:{line}" if line else str(path)
            bad.append(f"{where}: {label}: {exc.field}: {exc.message}")
            continue
        recipes.append(dataclasses.replace(recipe, origin=origin, taught=taught))
    phrasings = []
    for index, raw in enumerate(top.phrasing):
        loc = ("phrasing", index)
        try:
            phrasing = PhrasingSpec.model_validate(raw)
        except ValidationError as exc:
            bad.append(_pydantic_problem(exc, text, path, loc, _label(raw, index, "phrasing")))
            continue
        phrasings.append(_Phrasing(phrasing, path, top.area, text, loc))
    return FileContents(recipes, phrasings, bad)


def _label(raw: object, index: int, kind: str = "recipe") -> str:
    name = raw.get("name") if isinstance(raw, dict) else None
    return f"{kind} {name!r}" if isinstance(name, str) else f"{kind} number {index + 1}"


def phrasing_recipe(
    spec: PhrasingSpec, recipes: Mapping[str, Recipe], area: str, source: str
) -> Recipe:
    """The recipe a taught phrasing stands for: the recipe it names, with the taught
    values as its defaults and the phrasing as its only one (``taught``, ``base`` set)."""
    base = recipes.get(spec.recipe)
    if base is None:
        raise _FieldProblem(
            ("recipe",),
            f"no recipe named {spec.recipe!r} (`shellagent recipes rm {spec.name}` forgets "
            "this phrasing)",
        )
    for name in _PHRASING_SLOT.findall(spec.text):
        if name not in base.slots:
            raise _FieldProblem(("text",), f"{{{name}}} is not a slot of {base.name}")
    defaults: dict[str, str] = {}
    for name, value in spec.args.items():
        slot = base.slots.get(name)
        if slot is None:
            raise _FieldProblem(("args", name), f"{name} is not a slot of {base.name}")
        try:
            defaults[name] = slot.validate(value)
        except SlotError as exc:
            raise _FieldProblem(("args", name), exc.text()) from None
    slots = {
        name: dataclasses.replace(slot, default=defaults.get(name, slot.default))
        for name, slot in base.slots.items()
    }
    return Recipe(
        name=spec.name,
        summary=base.summary,
        kind=base.kind,
        phrasings=(spec.text,),
        templates=base.templates,
        slots=slots,
        area=area,
        source=source,
        origin=base.origin,
        taught=True,
        base=base.name,
    )


def _pydantic_problem(
    exc: Any, text: str, path: Path, prefix: tuple[int | str, ...], label: str = ""
) -> str:
    # An unknown field first: it is most often a misspelt one, the cause of "Field required".
    err = min(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
    loc = tuple(err["loc"])
    message = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
    line = line_of(text, (*prefix, *loc))
    where = f"{path}:{line}" if line else str(path)
    field = ".".join(str(p) for p in loc) or "file"
    return f"{where}: {label + ': ' if label else ''}{field}: {message}"


class _FieldProblem(Exception):
    def __init__(self, loc: tuple[int | str, ...], message: str) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message

    @property
    def field(self) -> str:
        return ".".join(str(p) for p in self.loc)


def build(spec: RecipeSpec, area: str, source: str) -> Recipe:
    """A ``Recipe`` from its spec, after the checks a schema cannot make."""
    slots: dict[str, Slot] = {}
    for name, slot_spec in spec.slots.items():
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise _FieldProblem(("slots", name), "a slot name is lower-case snake_case")
        try:
            slots[name] = build_slot(name, slot_spec)
        except SlotError as exc:
            raise _FieldProblem(("slots", name), exc.text()) from None
    types = {name: slot.type for name, slot in slots.items()}
    for i, template in enumerate(spec.templates):
        for why in problems(template, types):
            raise _FieldProblem(("templates", i), why)
    for why in problems(spec.plain, types) if spec.plain else ():
        raise _FieldProblem(("plain",), why)
    for i, phrasing in enumerate(spec.phrasings):
        for name in _PHRASING_SLOT.findall(phrasing):
            if name not in slots:
                raise _FieldProblem(("phrasings", i), f"{{{name}}} is not a declared slot")
    if spec.family_args and not spec.family:
        raise _FieldProblem(("family_args",), "family_args needs a family")
    for name, form in spec.family_args.items():
        if name not in slots:
            raise _FieldProblem(("family_args", name), f"{name} is not a declared slot")
        try:
            list(string.Formatter().parse(form))
        except ValueError as exc:
            raise _FieldProblem(("family_args", name), f"not a format string: {exc}") from None
    recipe = Recipe(
        name=spec.name,
        summary=spec.summary,
        kind=spec.kind,
        phrasings=tuple(spec.phrasings),
        templates=tuple(spec.templates),
        slots=slots,
        plain=spec.plain,
        family=spec.family,
        family_args=dict(spec.family_args),
        area=area,
        source=source,
    )
    tests = []
    for i, test in enumerate(spec.tests):
        try:
            args = recipe.args(test.args)
        except SlotError as exc:
            raise _FieldProblem(("tests", i, "args"), exc.text()) from None
        given = {k: v for k, v in args.items() if k in test.args}
        tests.append(RecipeTest(check=test.check, setup=tuple(test.setup), args=given))
    return dataclasses.replace(recipe, tests=tuple(tests))


def iter_recipes(catalog: Catalog, area: str | None = None) -> Iterator[Recipe]:
    for recipe in sorted(catalog.recipes.values(), key=lambda r: (r.area, r.name)):
        if area is None or recipe.area == area:
            yield recipe
