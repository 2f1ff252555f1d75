"""The ``use`` reply built per task: which recipes may be named and what each slot may hold.

The model's reply for a recipe is ``{"use": "NAME", "args": {"slot": "value", …}}``, every
slot of the recipe present, in its declared order, each value a JSON string. The grammar
enumerates the candidate recipes' names; a slot's value is one of the values the task names
for its type, its default, or, only where nothing else
can say it, a free value matching the type (a pattern or text is always free, one line).
So a 135M model picks, it does not write: it cannot name a recipe that was not offered, nor
put a sentence where a count goes. The renderer still validates every value: the grammar
makes the common case right, the renderer makes every case safe.

``Offer`` (``shellagent.recipes.offer``, built with the shortlist) is what one recipe
contributes; ``use_format`` makes the ``ReplyFormat`` (GBNF and JSON schema) of a set of
offers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from shellagent.agent.actions import PROSE_CLASS, VISIBLE_CLASS
from shellagent.jsontypes import JsonObject, JsonValue
from shellagent.model.backend import ReplyFormat
from shellagent.recipes.offer import FREE, FREE_OF_TYPE, TEXT_MAX, Offer

__all__ = ["use_format", "use_schema"]


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
