"""A family of tasks: a function that draws one random instance of a kind of shell work.

    @family("largest_files", "files", "the N largest files of a folder")
    def largest_files(d: Draw) -> Instance: ...

A family gets a ``Draw`` (a seeded ``random.Random`` with the vocabulary at hand) and
returns an ``Instance``: the task as a user would phrase it, the setup, gold commands, the
success check, the template of the final answer, answers the check must refuse, and the
``slots`` (every path and name the instance was made with, so an example can later be
rewritten to another task's paths). Families are registered in ``FAMILIES`` when their
module (under ``families/``) is imported.

A family that stands for a recipe takes its gold command from it: ``d.recipe("largest_files",
dir=where, count=k)`` renders the shipped recipe (``shellagent/recipes/data/*.toml``) with
those values, one of its templates drawn when it has several, and the instance lists the
``RecipeUse`` in ``recipes``. The command a user's recipe runs and the one the training data
teaches are then one and the same (a test re-renders every use). A family whose task no
recipe does keeps gold of its own, with a comment that says why.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Literal, TypeVar

from shellagent.errors import InternalError
from shellagent.taskgen import vocab

if TYPE_CHECKING:
    from shellagent.recipes import Catalog

Kind = Literal["action", "question"]
T = TypeVar("T")


@dataclass(frozen=True)
class RecipeUse:
    """A gold command rendered from a shipped recipe: which one, with what, and the result."""

    recipe: str
    args: Mapping[str, str]
    """The values the family gave (validated; the slots left out take their defaults)."""
    template: int
    command: str
    plain: str = ""
    """The recipe's plain form with the same values ("" when it has none): what a worked
    example may show instead, once it passed the task's check (``plain.py``)."""


@dataclass(frozen=True)
class Instance:
    """One drawn task, before it is given an id (see ``generate``)."""

    task: str
    setup: tuple[str, ...]
    gold: tuple[str, ...]
    check: str
    answer: str
    """Template of the final answer (``shellagent.taskgen.answers``)."""
    slots: Mapping[str, str] = field(default_factory=dict)
    wrong_answers: tuple[str, ...] = ()
    kind: Kind = "action"
    recipes: tuple[RecipeUse, ...] = ()
    """The recipes whose rendered commands are among ``gold`` (see the module docstring;
    a ``_to_file`` twin's last one is saved to a file: ``cmd > out``)."""


@dataclass(frozen=True)
class Family:
    name: str
    area: str
    summary: str
    make: Callable[[Draw], Instance]
    share: float = 1.0
    """How often it is drawn: ``share`` × the instances asked for per family (at least 1)."""
    composed_from: str = ""
    """The shipped recipe whose selection the recipe step composes into what this family
    asks (a count, the newest, the oldest): no shipped recipe renders its gold, so it is
    written by the family."""


FAMILIES: dict[str, Family] = {}


def family(
    name: str, area: str, summary: str, *, composed_from: str = ""
) -> Callable[[Callable[[Draw], Instance]], Family]:
    """Register a family under ``name``; names are unique."""

    def register(make: Callable[[Draw], Instance]) -> Family:
        if name in FAMILIES:
            raise ValueError(f"family {name!r} is registered twice")
        FAMILIES[name] = Family(name, area, summary, make, composed_from=composed_from)
        return FAMILIES[name]

    return register


_SPACES = re.compile(r"\s+")
# First words of the templates that are instructions (others are statements or questions).
IMPERATIVES = frozenset(
    _SPACES.split(
        "add archive back change clean clear commit compress copy count create deduplicate "
        "delete disable extract find get give grep gzip hand list lock look make mark move "
        "pack point print put read remove rename replace restore rotate save schedule set "
        "show stop swap switch tag take tell terminate tidy truncate turn unpack write zip "
        "kill prefix"
    )
)


class Draw:
    """The random choices of one instance, and the vocabulary to choose from."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def pick(self, items: Sequence[T]) -> T:
        return self.rng.choice(items)

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        return self.rng.sample(list(items), k)

    def num(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def shuffled(self, items: Sequence[T]) -> list[T]:
        out = list(items)
        self.rng.shuffle(out)
        return out

    def recipe(self, name: str, /, template: int | None = None, **args: object) -> RecipeUse:
        """The shipped recipe ``name`` rendered with ``args``: template number ``template``,
        or one drawn when the recipe has several (none drawn when it has one, so a family's
        stream of choices stays as it was). A name no shipped recipe has, a slot it lacks or
        a value its type refuses is a bug of the family: ``InternalError``."""
        from shellagent.recipes import SlotError, render, render_plain

        catalog = shipped_recipes()
        recipe = catalog.recipes.get(name)
        if recipe is None:  # misspelt, or left out of the catalog for a problem of its file
            hint = catalog.problems[0] if catalog.problems else "name a recipe of its data files"
            raise InternalError(f"no shipped recipe named {name!r}", hint=hint)
        count = len(recipe.templates)
        if template is None:
            template = self.num(0, count - 1) if count > 1 else 0
        if not 0 <= template < count:
            raise InternalError(f"recipe {name} has no template number {template}")
        try:
            values = recipe.args(args)
            command = render(recipe, values, template)
            plain = render_plain(recipe, values)
        except SlotError as exc:  # its message names the recipe, or the value it refused
            where = "" if name in exc.message else f"recipe {name}: "
            raise InternalError(where + exc.message, hint=exc.hint) from None
        given = {k: v for k, v in values.items() if k in args}
        return RecipeUse(name, given, template, command, plain)

    def phrase(self, templates: Sequence[str], **values: object) -> str:
        """One of ``templates`` filled in, with light variation in how it is put: an
        instruction that starts with a verb may get "Please", "Could you …?" and the like."""
        text = _SPACES.sub(" ", self.pick(templates).format(**values)).strip()
        if text.split(maxsplit=1)[0] in ("my", "the"):  # "{dir} is full …" with dir "my Music"
            text = text[0].upper() + text[1:]
        if text.endswith("?") or not self.chance(0.35):
            return text
        one_sentence = ". " not in text.rstrip(".")
        openers = ("Please ", "I need you to ") + (("Could you ", "Can you ") * one_sentence)
        opener = self.pick(openers)
        if text.split(maxsplit=1)[0].lower() not in IMPERATIVES:
            return text  # "Please /var/log/x.log has grown" would not be English
        text = text[0].lower() + text[1:]
        if opener in ("Could you ", "Can you "):
            return opener + text.rstrip(".") + "?"
        return opener + text

    # -- vocabulary ------------------------------------------------------------------------

    def service(self) -> str:
        return self.pick(vocab.SERVICES)

    def people(self, k: int) -> list[tuple[str, str]]:
        return self.sample(vocab.PEOPLE, k)

    def words(self, k: int) -> list[str]:
        return self.sample(vocab.WORDS, k)

    def home_dir(self) -> tuple[str, str]:
        """A folder of the home directory: (path, how a user names it)."""
        where, spoken = self.pick(vocab.HOME_DIRS)
        return where, self.pick((where, spoken))

    def app_dir(self, kind: str = "data", app: str | None = None) -> str:
        """A folder a service would use: ``kind`` is data, log, config, web or any."""
        app = app or self.service()
        places = {
            "data": ("/srv/{a}/data", "/var/lib/{a}", "/opt/{a}/data", "/data/{a}"),
            "log": ("/var/log/{a}", "/opt/{a}/logs", "/srv/{a}/logs"),
            "config": ("/etc/{a}", "/opt/{a}/conf", "/srv/{a}/config"),
            "web": ("/var/www/{a}", "/srv/www/{a}", "/opt/{a}/public"),
        }
        if kind == "any":
            kind = self.pick(tuple(places))
        return self.pick(places[kind]).format(a=app)

    def some_dir(self) -> tuple[str, str]:
        """A home folder or a service's data folder: (path, how a user names it)."""
        if self.chance(0.5):
            return self.home_dir()
        where = self.app_dir("any")
        return where, where

    def stems(self, k: int, pool: Sequence[str]) -> list[str]:
        """``k`` distinct stems from ``pool``, some with a number to vary them."""
        picked = self.sample(pool, k)
        return [s if self.chance(0.6) else f"{s}-{self.num(2, 98)}" for s in picked]


@cache
def shipped_recipes() -> Catalog:
    """The recipes shipped with the package (never a user's: a family's gold must not depend
    on who generates it)."""
    from shellagent.recipes import DATA_DIR, load

    return load([DATA_DIR])
