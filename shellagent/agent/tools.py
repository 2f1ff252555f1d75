"""Recipes as tools for a model that writes its own commands well.

Every model gets the recipe step (the ranker chooses, the model fills). When no recipe
did the task and the model writes commands itself, a model that writes them well (a
backend that says ``writes_commands``: a local model of a billion parameters or more, a
served one) is also offered the shortlist's best recipes as tools: the free loop's reply
may then be ``{"use": NAME, "args": {...}}`` for one of them beside a command of its own.
A small model is not: measured, it chooses among recipes worse than the ranker does, so
it only fills the one the ranker chose.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shellagent.agent.actions import ACTION_GBNF, ACTION_JSON_SCHEMA
from shellagent.agent.recipe_grammar import use_format
from shellagent.model.backend import ReplyFormat

if TYPE_CHECKING:
    from shellagent.recipes import Recipe
    from shellagent.recipes.offer import Offer

__all__ = ["TOOLS", "Tools", "offered_as_tools", "tools_format"]

TOOLS = 4  # recipes offered as tools


@dataclass(frozen=True)
class Tools:
    """The recipes a free loop may call, their offers and the reply format admitting them."""

    recipes: Mapping[str, Recipe]
    offers: Sequence[Offer]
    reply_format: ReplyFormat
    message: str = field(default="")


def tools_format(offers: Sequence[Offer]) -> ReplyFormat:
    """The free loop's action format with a ``use`` of one of ``offers`` beside it."""
    use = use_format(offers)
    use_rules = use.gbnf.replace("root ::=", "use ::=", 1)
    root = "root    ::= run | done | sched"
    action = ACTION_GBNF.replace(root, root + " | use", 1)
    if action == ACTION_GBNF:
        raise ValueError("the action grammar's root changed: tools_format must follow it")
    variants = [*_variants(ACTION_JSON_SCHEMA), *_variants(use.json_schema)]
    return ReplyFormat("action+use", action + use_rules, {"title": "action", "anyOf": variants})


def _variants(schema: Mapping[str, object]) -> list[object]:
    found = schema.get("anyOf")
    return list(found) if isinstance(found, list) else [dict(schema)]


def offered_as_tools(recipes: Mapping[str, Recipe], offers: Sequence[Offer]) -> Tools | None:
    """The first ``TOOLS`` of ``offers`` as tools, with the message telling the model."""
    chosen = list(offers[:TOOLS])
    if not chosen:
        return None
    lines = [
        "Verified commands you may use instead of writing one: reply "
        '{"use": NAME, "args": {SLOT: VALUE}} with one of these, or write your own command.'
    ]
    for offer in chosen:
        slots = ", ".join(f"{s.name} ({s.help or s.type})" for s in offer.slots) or "no values"
        lines.append(f"- {offer.name}: {offer.summary}. Values: {slots}")
    lines.append("Example: " + json.dumps(chosen[0].example(), ensure_ascii=False))
    return Tools(
        {o.name: recipes[o.name] for o in chosen if o.name in recipes},
        chosen,
        tools_format(chosen),
        "\n".join(lines),
    )
