"""The ``use`` reply built per task: which recipes may be named and what each slot may hold.

The model's reply for a recipe is ``{"use": "NAME", "args": {"slot": "value", …}}``, every
slot of the recipe present, in its declared order, each value a JSON string. The grammar
enumerates the candidate recipes' names; a slot's value is one of the values the task names
for its type (``shellagent.recipes.candidates``), its default, or, only where nothing else
can say it, a free value matching the type (a pattern or text is always free, one line).
So a 135M model picks, it does not write: it cannot name a recipe that was not offered, nor
put a sentence where a count goes. The renderer still validates every value: the grammar
makes the common case right, the renderer makes every case safe.

``Offer`` is what one recipe contributes; ``use_format`` makes the ``ReplyFormat`` (GBNF
and JSON schema) of a set of offers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from shellagent.agent.actions import PROSE_CLASS, VISIBLE_CLASS
from shellagent.jsontypes import JsonObject, JsonValue
from shellagent.model.backend import ReplyFormat

__all__ = ["FREE", "Offer", "SlotOffer", "use_format"]

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
    "schedule": "schedule",
}
# Types whose value, when the task says one, is what the task means: the default is then
# not offered ("port 5173 is taken" is not about port 80; "in the last 3 days" not 7). Not
# counts and folders: a task's numbers and folders are often there for another slot.
DECISIVE = {"port", "pid", "date", "time", "mode", "size", "days", "minutes"}
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
    if slot_type == "choice":
        return SlotOffer(name, slot_type, tuple(str(c) for c in choices), shown_default)
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


def _literal(value: str) -> str:
    """``value`` as a GBNF string literal of its JSON encoding (quotes included)."""
    encoded = json.dumps(value, ensure_ascii=False)
    return '"' + encoded.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _rule_name(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def use_format(offers: Sequence[Offer]) -> ReplyFormat:
    """The reply format admitting exactly a ``use`` of one of ``offers``."""
    if not offers:
        raise ValueError("a use format needs at least one recipe")
    rules: dict[str, str] = {}
    alternatives = []
    needs_free: set[str] = set()
    for i, offer in enumerate(offers):
        rule = f"r{i}-{_rule_name(offer.name)}"[:60]
        alternatives.append(rule)
        head = _literal(offer.name)
        if offer.slots:
            parts = []
            for j, slot in enumerate(offer.slots):
                value_rule = f"{rule}-v{j}"
                key = '"' + ("" if j == 0 else ", ") + '\\"' + slot.name + '\\": "'
                parts.append(f"{key} {value_rule}")
                options = [_literal(v) for v in slot.values()]
                if slot.free or not options:
                    kind = (
                        "text" if slot.type in ("pattern", "text") else FREE_OF_TYPE.get(slot.type)
                    )
                    if kind is None:
                        raise ValueError(f"slot {slot.name} of type {slot.type} has no value")
                    needs_free.add(kind)
                    options.append(f"free-{kind}")
                rules[value_rule] = " | ".join(options)
            args = " ".join(parts)
            rules[rule] = f'"{{\\"use\\": " {head} ", \\"args\\": {{" {args} "}}}}"'
        else:
            rules[rule] = f'"{{\\"use\\": " {head} ", \\"args\\": {{}}}}"'
    lines = ["root ::= " + " | ".join(alternatives)]
    lines += [f"{name} ::= {body}" for name, body in rules.items()]
    for kind in sorted(needs_free):
        if kind == "text":
            lines.append(f'free-text ::= "\\"" text-lead text-char{{0,{TEXT_MAX - 1}}} "\\""')
        else:
            lines.append(f'free-{kind} ::= "\\"" ({FREE[kind][0]}) "\\""')
    if "text" in needs_free:
        lines.append(f"text-lead ::= {VISIBLE_CLASS}")
        lines.append(f'text-char ::= {PROSE_CLASS} | "\\\\" ["\\\\/]')
    if "schedule" in needs_free:
        field = r"[0-9*/,-]{1,20}"
        lines.append(f'cron ::= {field} " " {field} " " {field} " " {field} " " {field}')
    return ReplyFormat("use", "\n".join(lines) + "\n", use_schema(offers))


def use_schema(offers: Sequence[Offer]) -> JsonObject:
    """The same shape as a JSON schema, for OpenAI-compatible servers."""
    variants: list[JsonValue] = []
    for offer in offers:
        properties: JsonObject = {}
        for slot in offer.slots:
            values: list[JsonValue] = list(slot.values())
            if slot.free or not values:
                kind = "text" if slot.type in ("pattern", "text") else FREE_OF_TYPE.get(slot.type)
                free: JsonObject = {"type": "string", "minLength": 1, "maxLength": TEXT_MAX}
                if kind and kind != "text":
                    free["pattern"] = FREE[kind][1]
                properties[slot.name] = {"anyOf": [{"enum": values}, free]} if values else free
            else:
                properties[slot.name] = {"enum": values}
        variants.append(
            {
                "type": "object",
                "properties": {
                    "use": {"const": offer.name},
                    "args": {
                        "type": "object",
                        "properties": properties,
                        "required": list(properties),
                        "additionalProperties": False,
                    },
                },
                "required": ["use", "args"],
                "additionalProperties": False,
            }
        )
    return {"title": "use", "anyOf": variants}
