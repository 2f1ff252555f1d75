"""The recipe step's question to the model: the messages that ask for a ``use`` reply,
and that reply, generated under the grammar built for the offered recipes.

The messages are recorded with the reply (``ModelTurn.prompt``), so an export writes the
reply under the prompt that asked for it, not under the free loop's conversation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from shellagent.agent.actions import UseAction, parse_action
from shellagent.agent.recipe_grammar import use_format
from shellagent.agent.session import SessionEnd, SessionState
from shellagent.errors import Cancelled, InputError, ShellagentError
from shellagent.events import PromptMessage, Role

if TYPE_CHECKING:
    from shellagent.model.backend import Generation
    from shellagent.recipes.offer import Offer

__all__ = ["USE_MAX_TOKENS", "generate", "prompt", "recorded"]

USE_MAX_TOKENS = 120


def prompt(task: str, offers: Sequence[Offer]) -> list[dict[str, str]]:
    """The messages that ask the model for a ``use`` reply: the offered recipes with their
    slots and the values the task names, and the reply's format on the first of them."""
    lines = [
        "You choose a ready-made command for the user's task and fill in its values.",
        'Reply with one JSON object: {"use": recipe name, "args": {slot: value}}.',
        "Recipes:",
    ]
    for offer in offers:
        slots = []
        for slot in offer.slots:
            text = f"{slot.name} ({slot.help or slot.type})"
            values = slot.values()
            if values:
                text += " one of: " + ", ".join(values[:6])
            slots.append(text)
        lines.append(f"- {offer.name}: {offer.summary}. " + ("; ".join(slots) or "no values"))
    lines.append("Example reply:")
    lines.append(json.dumps(offers[0].example(), ensure_ascii=False))
    return [
        {"role": "system", "content": "\n".join(lines)},
        {"role": "user", "content": f"Task: {task}"},
    ]


def recorded(messages: Sequence[dict[str, str]]) -> tuple[PromptMessage, ...]:
    """``messages`` (``prompt``'s: a system and a user message) as a ``model_turn`` records
    them."""
    return tuple(PromptMessage(cast("Role", m["role"]), m["content"]) for m in messages)


def generate(
    state: SessionState, offers: Sequence[Offer]
) -> tuple[Generation, UseAction, list[dict[str, str]]]:
    """The model's ``use`` reply for ``offers``, with the messages that asked for it;
    ``InputError`` when the reply is no use of an offered recipe."""
    messages = prompt(state.task, offers)
    try:
        generation = state.backend.generate(
            messages,
            reply_format=use_format(offers),
            max_tokens=USE_MAX_TOKENS,
            capture_logprobs=state.config.capture_logprobs,
        )
    except Cancelled:  # while it waited for the model (the pool)
        raise SessionEnd("cancelled", "cancelled while the model was thinking") from None
    except ShellagentError as exc:
        raise SessionEnd("error", "the model failed", exc.show(), cause=exc) from None
    except (RuntimeError, OSError, ValueError) as exc:
        raise SessionEnd("error", "the model failed", f"{type(exc).__name__}: {exc}") from None
    action = parse_action(generation.text)
    if not isinstance(action, UseAction):
        raise InputError("the reply is not a use action")
    if action.use not in {offer.name for offer in offers}:  # a server that ignored the schema
        raise InputError(f"the reply names {action.use}, which was not offered")
    return generation, action, messages
