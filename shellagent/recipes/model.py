"""A recipe: an intent, its typed slots, the command templates that do it, and its tests.

The frozen dataclasses here are what the rest of shellagent uses; the pydantic models
(``*Spec``) only read the TOML files (``loader.py``), with ``extra="forbid"`` so a misspelt
key is an error, not a silently ignored setting.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shellagent.recipes.slots import TYPES, SlotError, SlotType, slot_type

Kind = Literal["question", "action"]
Origin = Literal["shipped", "yours"]
NAME = re.compile(r"[a-z][a-z0-9_]*")


def _literal(text: str) -> str:
    # Escape only what the regex dialect of slots.py treats as special (not spaces).
    return "".join("\\" + c if c in "\\.^$*+?{}[]|()" else c for c in text)


@dataclass(frozen=True)
class Slot:
    """One typed argument of a recipe. No ``default``: the slot is required."""

    name: str
    type: str
    default: str | None = None
    help: str = ""
    choices: tuple[str, ...] = ()
    numbers: bool = False  # a key slot whose column or field holds numbers (a sum's)

    @property
    def kind(self) -> SlotType:
        return TYPES[self.type]

    @property
    def required(self) -> bool:
        return self.default is None

    @property
    def regex(self) -> str:
        """The values this slot admits (the type's regex, or its choices)."""
        if self.type == "choice":
            return "(" + "|".join(_literal(c) for c in self.choices) + ")"
        return self.kind.regex

    def validate(self, value: object) -> str:
        """The value in canonical form, or ``SlotError`` naming this slot."""
        try:
            text = self.kind.validate(value)
        except SlotError as exc:
            raise SlotError(f"slot {self.name}: {exc.message}", hint=exc.hint) from None
        if self.type == "choice" and text not in self.choices:
            raise SlotError(
                f"slot {self.name}: {text!r} is not one of " + ", ".join(self.choices),
            )
        return text


@dataclass(frozen=True)
class RecipeTest:
    """Setup commands, slot values, and a check that must fail before and pass after."""

    check: str
    setup: tuple[str, ...] = ()
    args: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Recipe:
    name: str
    summary: str
    kind: Kind
    phrasings: tuple[str, ...]
    templates: tuple[str, ...]
    slots: Mapping[str, Slot] = field(default_factory=dict)
    tests: tuple[RecipeTest, ...] = ()
    plain: str = ""
    """A shorter command of the same meaning, for the worked examples a small model
    imitates. It need not cover every case the templates do (a zip, a nested key, a
    folder to make first): a library line shows it only where it passed that line's
    check with the same output (``taskgen/plain.py``). The recipe step never runs it."""
    family: str | None = None
    family_args: Mapping[str, str] = field(default_factory=dict)
    """Slot -> a format string over the slots of an instance of ``family`` (``"{dir}"``,
    ``"{limit_kb}k"``): the tests may then also run on drawn instances of the family."""
    area: str = ""
    source: str = ""
    """The file it was read from."""
    origin: Origin = "shipped"
    """Who wrote its command templates: ``shipped`` (the package's, tested with it) or
    ``yours`` (a recipe file of yours, or one made from your own commands). A taught
    phrasing of a recipe keeps that recipe's origin: its commands are that recipe's."""
    taught: bool = False
    """Learned from a correction (``recipes add --task``, a correction confirmed in
    ``ask``): kept out of the trained ranker and found by its nearest-phrasing layer, so
    learning one takes no retraining (``shellagent.recipes.nearest``)."""
    base: str | None = None
    """For a taught phrasing of another recipe: that recipe's name (this one is it, with
    the taught values as its defaults)."""

    def args(self, given: Mapping[str, object]) -> dict[str, str]:
        """``given`` validated, with the defaults of the slots not given."""
        unknown = sorted(set(given) - set(self.slots))
        if unknown:
            raise SlotError(
                f"recipe {self.name} has no slot {unknown[0]!r}",
                hint="its slots: " + (", ".join(self.slots) or "none"),
            )
        values: dict[str, str] = {}
        for name, slot in self.slots.items():
            if name in given:
                values[name] = slot.validate(given[name])
            elif slot.default is not None:
                values[name] = slot.default
            else:
                raise SlotError(
                    f"recipe {self.name} needs a value for slot {name} ({slot.kind.expect})"
                )
        return values


# -- the file format ------------------------------------------------------------------------

Scalar = str | int


class SlotSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    type: str
    default: Scalar | None = None
    help: str = ""
    choices: list[str] | None = None
    numbers: bool = False


class TestSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    setup: list[str] = []
    args: dict[str, Scalar] = {}
    check: str = Field(min_length=1)


class RecipeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(pattern=NAME.pattern + "$", max_length=64)
    summary: str = Field(min_length=1, max_length=200)
    kind: Kind
    family: str | None = None
    family_args: dict[str, str] = {}
    phrasings: list[str] = Field(min_length=1)
    templates: list[str] = Field(min_length=1)
    plain: str = ""
    slots: dict[str, SlotSpec] = {}
    tests: list[TestSpec] = []


class PhrasingSpec(BaseModel):
    """A taught phrasing: a request that means recipe ``recipe`` with ``args`` as the values
    the request did not say (``text`` marks the ones it said with ``{slot}``)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(pattern=NAME.pattern + "$", max_length=64)
    recipe: str = Field(pattern=NAME.pattern + "$", max_length=64)
    text: str = Field(min_length=1, max_length=500)
    args: dict[str, Scalar] = {}


class FileSpec(BaseModel):
    """The top of a recipe file; ``recipe`` and ``phrasing`` are read one entry at a time
    (``loader.py``)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    area: str = Field(pattern=NAME.pattern + "$")
    recipe: list[object] = []
    phrasing: list[object] = []


def build_slot(name: str, spec: SlotSpec) -> Slot:
    """A ``Slot`` from its spec; ``SlotError`` for a bad type, default or choice list."""
    kind = slot_type(spec.type)
    choices = tuple(spec.choices or ())
    if (kind.name == "choice") != bool(choices):
        raise SlotError(
            f"slot {name}: choices are given with type = 'choice', and only then",
        )
    if spec.numbers and kind.name != "key":
        raise SlotError(f"slot {name}: numbers = true is for a slot of type 'key'")
    slot = Slot(name, kind.name, None, spec.help, choices)
    default = None if spec.default is None else slot.validate(spec.default)
    return Slot(name, kind.name, default, spec.help, choices, spec.numbers)
