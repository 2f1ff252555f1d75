"""What the model is offered for one recipe: per slot, the values it may take.

A 135M model fills a slot well when it only has to pick, so a slot is offered the values
the task names for its type (``shellagent.recipes.values``), then its default; a free
value of the type only where nothing else can say it (a pattern or text always). The
grammar the reply is generated under (``shellagent.agent.recipe_grammar``) is built from
these offers; ``FREE`` holds, per kind of free value, its GBNF body and its JSON-schema
pattern, so the two say the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from shellagent.jsontypes import JsonObject

__all__ = [
    "DECISIVE",
    "FREE",
    "FREE_OF_TYPE",
    "Offer",
    "SIGNALS",
    "SlotOffer",
    "TEXT_MAX",
    "offer_slot",
]

TEXT_MAX = 120

# A free value of each type, as a GBNF body between the JSON quotes and as a JSON-schema
# pattern. Paths: no quote, backslash, space at the ends or control character; the renderer
# quotes them. Types missing here are never free (they are enumerated, or fall to their
# default).
FREE: dict[str, tuple[str, str]] = {
    "path": (
        r"[A-Za-z0-9._~/+@-] ([A-Za-z0-9._~/+@ -]{0,118} [A-Za-z0-9._~/+@-])?",
        r"^[A-Za-z0-9._~/+@-]([A-Za-z0-9._~/+@ -]{0,118}[A-Za-z0-9._~/+@-])?$",
    ),
    "glob": (r"[A-Za-z0-9._*?+@-]{1,60}", r"^[A-Za-z0-9._*?+@-]{1,60}$"),
    "ext": (r"[A-Za-z0-9]{1,10}", r"^[A-Za-z0-9]{1,10}$"),
    "name": (r"[A-Za-z0-9._@+] [A-Za-z0-9._@+-]{0,59}", r"^[A-Za-z0-9._@+][A-Za-z0-9._@+-]{0,59}$"),
    "user": (r"[a-z_] [a-z0-9_-]{0,31}", r"^[a-z_][a-z0-9_-]{0,31}$"),
    "key": (r"[A-Za-z0-9_.-]{1,60}", r"^[A-Za-z0-9_.-]{1,60}$"),
    "branch": (r"[A-Za-z0-9_] [A-Za-z0-9._/-]{0,99}", r"^[A-Za-z0-9_][A-Za-z0-9._/-]{0,99}$"),
    "positive": (r"[1-9] [0-9]{0,5}", r"^[1-9][0-9]{0,5}$"),
    "natural": (r"[0-9]{1,6}", r"^[0-9]{1,6}$"),
    "size": (r"[1-9] [0-9]{0,5} [kMG]?", r"^[1-9][0-9]{0,5}[kMG]?$"),
    "mode": (
        r"[0-7]{3,4} | [ugoa]{0,4} [-+=] [rwxX]{1,4}",
        r"^([0-7]{3,4}|[ugoa]{0,4}[-+=][rwxX]{1,4})$",
    ),
    "time": ('([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]', r"^([01][0-9]|2[0-3]):[0-5][0-9]$"),
    "date": (
        '[12] [0-9]{3} "-" [01] [0-9] "-" [0-3] [0-9]',
        r"^[12][0-9]{3}-[01][0-9]-[0-3][0-9]$",
    ),
    "day": ('[01] [0-9] "-" [0-3] [0-9]', r"^[01][0-9]-[0-3][0-9]$"),
    "zone": (
        r'[A-Za-z] [A-Za-z0-9_+-]{0,29} ("/" [A-Za-z0-9_+-]{1,30}){0,2}',
        r"^[A-Za-z][A-Za-z0-9_+-]{0,29}(/[A-Za-z0-9_+-]{1,30}){0,2}$",
    ),
    "schedule": (
        '"@daily" | "@weekly" | "@monthly" | "@hourly" | cron',
        r"^(@daily|@weekly|@monthly|@hourly|[0-9*/,-]+( [0-9*/,-]+){4})$",
    ),
}
FREE_OF_TYPE = {
    "dir": "path",
    "file": "path",
    "path": "path",
    "output": "path",
    "archive": "path",
    "glob": "glob",
    "ext": "ext",
    "name": "name",
    "word": "name",
    "user": "user",
    "group": "user",
    "key": "key",
    "branch": "branch",
    "count": "positive",
    "column": "positive",
    "port": "positive",
    "pid": "positive",
    "number": "natural",
    "days": "natural",
    "minutes": "natural",
    "size": "size",
    "mode": "mode",
    "time": "time",
    "date": "date",
    "day": "day",
    "zone": "zone",
    "schedule": "schedule",
}
# Types whose value, when the task says one, is what the task means: the default is then
# not offered ("port 5173 is taken" is not about port 80; "in the last 3 days" not 7). Not
# counts and folders: a task's numbers and folders are often there for another slot.
DECISIVE = {"port", "pid", "date", "day", "time", "mode", "size", "days", "minutes"}
SIGNALS = ("TERM", "KILL", "HUP", "INT", "USR1", "USR2", "STOP", "CONT")


@dataclass(frozen=True)
class SlotOffer:
    """One slot as the grammar offers it: ``candidates`` from the task (best first), the
    ``default`` if it has one, and whether a free value of its type is allowed."""

    name: str
    type: str
    candidates: tuple[str, ...] = ()
    default: str | None = None
    free: bool = False
    help: str = ""

    def values(self) -> tuple[str, ...]:
        """The enumerated values: the candidates, then the default."""
        listed = list(dict.fromkeys(self.candidates))
        if self.default is not None and self.default not in listed:
            listed.append(self.default)
        return tuple(listed)


@dataclass(frozen=True)
class Offer:
    """A recipe the model may name, with its slots in declared order."""

    name: str
    summary: str
    slots: tuple[SlotOffer, ...] = ()

    def example(self) -> JsonObject:
        """The reply with each slot's first value: how the prompt shows the format."""
        args: JsonObject = {s.name: (s.values() or ("",))[0] for s in self.slots}
        return {"use": self.name, "args": args}


def offer_slot(
    name: str,
    slot_type: str,
    candidates: Sequence[str],
    default: object = None,
    choices: Sequence[str] = (),
    help: str = "",
) -> SlotOffer:
    """A slot's offer: enumerated where the type or the task allow, free where they do not
    (a pattern or text always; any other type only when the task names no value for it
    and it has no default)."""
    shown_default = None if default is None else str(default)
    if slot_type == "choice":  # every choice: those the task says first, then the default
        said = [str(c) for c in candidates if c in choices]
        ordered = dict.fromkeys(
            [*said, *([shown_default] if shown_default else []), *map(str, choices)]
        )
        return SlotOffer(
            name, slot_type, tuple(c for c in ordered if c in map(str, choices)), shown_default
        )
    if slot_type == "signal":
        first = [c for c in candidates if c in SIGNALS]
        rest = [s for s in SIGNALS if s not in first]
        return SlotOffer(name, slot_type, (*first, *rest), shown_default)
    usable = tuple(c for c in candidates if _admissible(slot_type, c))
    if usable and slot_type in DECISIVE:
        shown_default = None  # "port 5173 is taken": not the default port 80
    free = slot_type in ("pattern", "text") or (not usable and shown_default is None)
    return SlotOffer(name, slot_type, usable, shown_default, free=free, help=help)


def _admissible(slot_type: str, value: str) -> bool:
    """Whether a candidate can be written in the grammar for its type at all."""
    if not value or "\n" in value or len(value) > TEXT_MAX:
        return False
    kind = FREE_OF_TYPE.get(slot_type)
    if kind is None:
        return slot_type in ("pattern", "text")
    pattern = FREE[kind][1]
    if kind == "path":
        return bool(re.fullmatch(r"[^\x00-\x1f\"\\]+", value)) and not value.endswith(" ")
    return bool(re.fullmatch(pattern, value))
