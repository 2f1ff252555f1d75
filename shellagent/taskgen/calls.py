"""Recipe calls as training data: (task → ``{"use", "args"}``) pairs, prompted exactly as
the recipe step prompts the model at run time (``shellagent recipes sft``).

The tasks come from the generator, never from a set that measures: drawn instances of
each task family a recipe maps (``family_args`` turns the instance's slots into the
recipe's arguments), and each recipe's phrasings written out with its tests' arguments.
The model is asked as the recipe step asks it: to fill one recipe, the one the ranker
chose, its slots offered the values the task and its working directory give (the ranker
chooses, the model fills). A call is prompted with its gold recipe alone, its values read
by the recipe step's own ``shortlist``: a drawn instance's setup is run in a throwaway
sandbox and its working directory listed and read as the recipe step reads a user's
(``listing.read_values``), so the offers name the files as they are named at run time; a phrasing
has no working directory to list. The reply is the gold call, written as the grammar
writes it.

A task the ranker does not fit is left out (at run time it goes to the free loop, so
there is no call to learn), as is one whose gold values the grammar would not admit (a
value the task does not say, for a slot that takes only what the task says).
"""

from __future__ import annotations

import contextlib
import json
import random
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypedDict

from shellagent.agent.recipe_step import RecipeBook, prompt
from shellagent.errors import InputError
from shellagent.recipes import Recipe, SlotError, phrase, render
from shellagent.recipes.listing import read_only, read_values
from shellagent.recipes.offer import FREE, FREE_OF_TYPE, TEXT_MAX, Offer
from shellagent.recipes.reading import read_task
from shellagent.recipes.shortlist import Shortlist, make_offer, shortlist

__all__ = [
    "Call",
    "CallRecord",
    "admits",
    "check_reply",
    "conversation",
    "family_calls",
    "gold_offer",
    "offer_for",
    "offered",
    "phrasing_calls",
    "records",
]


@dataclass(frozen=True)
class Call:
    """A task and the recipe call that does it (every slot's value, defaults included)."""

    task: str
    recipe: str
    args: dict[str, str]
    source: str  # "family NAME#N" or "phrasing N"
    setup: tuple[str, ...] = ()  # makes the working directory the task is about

    def reply(self, offer: Offer) -> str:
        """The call as the grammar writes it: slots in the offer's order."""
        args = {slot.name: self.args[slot.name] for slot in offer.slots}
        return json.dumps({"use": self.recipe, "args": args}, ensure_ascii=False)


class CallRecord(TypedDict):
    """One line of the SFT file: the chat, and where its task came from."""

    messages: list[dict[str, str]]
    recipe: str
    source: str


def family_calls(recipes: Iterable[Recipe], instances: int, seed: str) -> Iterator[Call]:
    """``instances`` drawn instances of each task family a recipe maps, as calls of it.
    ``seed`` makes the draws; the recipe tests draw with their own."""
    import shellagent.taskgen.families  # noqa: F401 - registers the families
    from shellagent.taskgen.family import FAMILIES, Draw

    for recipe in recipes:
        family = FAMILIES.get(recipe.family) if recipe.family else None
        if family is None or not recipe.family_args:
            continue
        for n in range(instances):
            drawn = family.make(Draw(random.Random(f"{seed}:{recipe.name}:{n}")))
            try:
                given = {k: form.format_map(drawn.slots) for k, form in recipe.family_args.items()}
                args = recipe.args(given)
                render(recipe, args)
            except (KeyError, SlotError):
                continue  # the recipe tests report these
            source = f"family {recipe.family}#{n + 1}"
            yield Call(drawn.task, recipe.name, args, source, drawn.setup)


def phrasing_calls(recipes: Iterable[Recipe]) -> Iterator[Call]:
    """Each phrasing of each recipe written out with its tests' arguments, in turn."""
    for recipe in recipes:
        for test_args in (t.args for t in recipe.tests):
            try:
                args = recipe.args(test_args)
            except SlotError:
                continue
            for i in range(len(recipe.phrasings)):
                try:
                    text = phrase(recipe, test_args, i)
                except SlotError:
                    continue
                if "{" not in text:  # every placeholder has a value
                    yield Call(text, recipe.name, args, f"phrasing {i + 1}")


def offered(book: RecipeBook, call: Call) -> Shortlist | None:
    """The run-time shortlist for ``call``'s task, its working directory made by the
    call's setup (the task's words alone when it has none)."""
    with _working_directory(call.setup) as read:
        reading = read_task(call.task)
        return shortlist(book, reading, lambda: read_values(reading, read))


@contextlib.contextmanager
def _working_directory(setup: Sequence[str]) -> Iterator[Callable[[str], list[str]]]:
    """A reader of read-only commands' output in a throwaway sandbox where ``setup`` has
    run (started only when first read); it reads nothing when there is no setup or the
    setup fails."""
    from shellagent.eval.runner import fresh_shell_command, pristine_environment
    from shellagent.sandbox import Sandbox

    shell: Sandbox | None = None
    ready: bool | None = None if setup else False

    def read(command: str) -> list[str]:
        nonlocal shell, ready
        if ready is None:
            shell = Sandbox("ephemeral", timeout=60)
            env, cwd = pristine_environment(shell)
            ready = all(
                shell.run(fresh_shell_command(part, env, cwd)).exit_code == 0 for part in setup
            )
        return read_only(shell, command) if ready and shell is not None else []

    try:
        yield read
    finally:
        if shell is not None:
            shell.close()


def offer_for(book: RecipeBook, call: Call) -> Offer | None:
    """The one recipe the model is asked to fill for ``call.task``, the gold one, with the
    values the recipe step offers its slots; None when the ranker fits no recipe."""
    return gold_offer(offered(book, call), call)


def gold_offer(listed: Shortlist | None, call: Call) -> Offer | None:
    """``call``'s recipe offered with the values of ``listed`` (``offered``'s result)."""
    if listed is None or call.recipe not in listed.recipes:
        return None
    return make_offer(listed.recipes[call.recipe], listed.values)


def conversation(book: RecipeBook, call: Call) -> CallRecord | None:
    """The prompt the recipe step would give to fill ``call``'s recipe (``offer_for``) and
    the gold reply; None when no recipe fits or the grammar could not write the gold
    values."""
    gold = offer_for(book, call)
    if gold is None or not admits(gold, call.args):
        return None
    messages = prompt(call.task, [gold])
    messages.append({"role": "assistant", "content": call.reply(gold)})
    return CallRecord(messages=messages, recipe=call.recipe, source=call.source)


def admits(offer: Offer, args: dict[str, str]) -> bool:
    """Whether the ``use`` grammar of ``offer`` admits ``args`` (``use_format``'s rules)."""
    for slot in offer.slots:
        value = args.get(slot.name)
        if value is None:
            return False
        if value in slot.values():
            continue
        if not (slot.free or not slot.values()):
            return False
        kind = "text" if slot.type in ("pattern", "text") else FREE_OF_TYPE.get(slot.type)
        if kind is None:
            return False
        if kind == "text":  # printable, no quote (JSON writes a backslash as two)
            if not 0 < len(value) <= TEXT_MAX or not value.isprintable() or '"' in value:
                return False
            if value[0].isspace():
                return False
        elif not re.fullmatch(FREE[kind][1].strip("^$"), value):
            return False
    return True


def records(book: RecipeBook, calls: Iterable[Call]) -> Iterator[CallRecord]:
    """The conversations of ``calls``, those that can be written."""
    for call in calls:
        record = conversation(book, call)
        if record is not None:
            yield record


def check_reply(book: RecipeBook, call: Call, reply: str) -> tuple[bool, bool]:
    """(right recipe, right command) for a model's ``reply`` to ``call``'s prompt: the
    command the reply renders is the gold call's."""
    try:
        data = json.loads(reply)
        name, args = str(data["use"]), {str(k): str(v) for k, v in data["args"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        return False, False
    if name != call.recipe:
        return False, False
    recipe = book.recipes[name]
    try:
        return True, render(recipe, args) == render(recipe, call.args)
    except (SlotError, InputError):
        return True, False
