"""Trying a recipe's rendering before it is shown, and how well what it did fits the task.

An uncertain shortlist is decided by running each rendering where it cannot change the
real files (``trial``): a read-only one confined in the session's own shell, in a
subshell (the kernel refuses its writes); a writer on its own overlay copy of the working
directory (``WriterTrial``), when the policy allows it or asks only because it changes
files (``triable``). ``fit`` scores what each did against the task's reading; the
recipe step (``shellagent.agent.recipe_step``) keeps the best. A rendering tried beside
the model's filling, and an alternative offered when a result is not claimed, take each
slot's first value (``first_values``, ``fill_first``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from shellagent.agent.actions import UseAction
from shellagent.agent.approval import file_changes_only
from shellagent.agent.confidence import one_number
from shellagent.agent.session import SessionState, in_subshell
from shellagent.errors import InputError, ShellagentError
from shellagent.recipes.shortlist import make_offer

if TYPE_CHECKING:
    from shellagent.policy import Evaluation
    from shellagent.recipes import Recipe
    from shellagent.recipes.offer import Offer
    from shellagent.recipes.reading import TaskReading
    from shellagent.recipes.values import TaskValues
    from shellagent.sandbox import CommandResult

__all__ = [
    "SIGPIPE_EXIT",
    "UNTRIED",
    "UNTRIED_ACTION_FOR_A_QUESTION",
    "WON_BY",
    "Tried",
    "WriterTrial",
    "agreed",
    "answered",
    "fill_first",
    "first_values",
    "fit",
    "trial",
    "triable",
]


@dataclass(frozen=True)
class Tried:
    """One rendering tried before showing, and how well its result fits the task."""

    recipe: str
    args: Mapping[str, str]
    command: str
    result: CommandResult | None
    score: float
    read_only: bool


class WriterTrial(Protocol):
    """Runs a command that changes files on a throwaway copy; never on the real files."""

    def __call__(self, command: str, cwd: str, timeout: float) -> CommandResult | None: ...


# How much better a tried result must fit than every other recipe's for the trial to have
# chosen it (a clean run against one with error output is 1.0 apart: ``fit``).
WON_BY = 1.0


def triable(recipe: Recipe, decision: Evaluation, functions: frozenset[str]) -> bool:
    """Whether a rendering may run before the user has seen it: what the policy *allows*
    read-only, or a writer whose every part the policy either allows or asks about only
    because it changes files (``approval.file_changes_only``: no interpreter, network,
    process or scheduling effect, no code it could not read). Never a command the
    session's shell would run as one of its own functions, and never a user's own recipe
    that writes (one approval given once must not become an unprompted run for every later
    task that ranks it)."""
    if any(
        s.program in functions or (s.argv and s.argv[0] in functions) for s in decision.segments
    ):
        return False
    if decision.read_only:
        return True
    return not _users(recipe) and file_changes_only(decision)


def _users(recipe: Recipe) -> bool:
    """Whether ``recipe`` is one of the user's own (``recipes add``)."""
    from shellagent.recipes import user_dir

    return bool(recipe.source) and Path(recipe.source).parent == user_dir()


def trial(
    state: SessionState, writer_trial: WriterTrial | None, command: str, decision: Evaluation
) -> CommandResult | None:
    """``command`` run where it cannot change the real files (confined in the session's
    shell when read-only, else on ``writer_trial``'s copy), or None when it cannot be."""
    try:
        if decision.read_only:
            wrapped, judged = in_subshell(command, decision)
            return state.shell.run(
                wrapped, timeout=state.config.command_timeout, confined=True, judged=judged
            )
        if writer_trial is not None:
            return writer_trial(command, state.shell.cwd, state.config.command_timeout)
    except ShellagentError:
        return None
    return None


# What a tool prints on stderr when it fails ("find: 'x': No such file or directory",
# "usage: …", "fatal: not a git repository"); output is stdout and stderr together, and a
# log line that says ERROR is an answer, not a failure.
_ERRORS = re.compile(
    r"^(?:[\w./-]+: (?:.*: )?(?:no such file|cannot|can't|permission denied|not found|"
    r"invalid|unrecognized|missing operand|syntax error|is a directory|not a directory)|"
    r"usage: |fatal: |error: )",
    re.I | re.M,
)


def fit(reading: TaskReading, kind: str, result: CommandResult | None) -> float:
    """How well a tried result fits the task: exit 0, no error output, and for a question
    output that is there and mentions what the task names. A rendering that could not be
    tried (a writer with no copy to try it on, a command the policy does not call
    read-only) scores as one that ran cleanly: not knowing is no reason to prefer a
    lower-ranked recipe that could be tried."""
    # (a question whose answer is saved to a file is answered by an action that writes it)
    asked_a_question = kind == "action" and reading.kind == "question" and not reading.output
    if result is None:
        # an action that could not be tried is no answer to a question: it never wins the
        # trial over a question recipe that answered ("what's the name of the empty
        # file" kept an untried delete of "name (1)" copies over the names it printed)
        return UNTRIED_ACTION_FOR_A_QUESTION if asked_a_question else UNTRIED[kind == "question"]
    if result.timed_out or result.refused:
        return -3.0
    score = 2.0 if answered(kind, result) else -2.0
    output = result.output
    if _ERRORS.search(output):
        score -= 1.0
    if kind == "question":
        score += 1.0 if output.strip() else -1.0
        if reading.named_words and any(w in output.lower() for w in reading.named_words):
            score += 0.5
        if reading.count:  # a count is asked: a number is the answer, a list is not
            score += 0.25 if one_number(output) else -0.5
        elif reading.ranked:  # "the top 3": at most that many lines, not every one
            lines = [line for line in output.splitlines() if line.strip()]
            score += 0.25 if len(lines) <= reading.ranked else -0.5
    elif result.exit_code == 0:
        score += 1.5  # a change made on the copy without complaint: as good as an answer
    return score


def agreed(mine: Tried, others: Sequence[Tried]) -> bool:
    """Whether the other renderings tried beside ``mine`` did exactly what it did, so the
    ranking's doubt between them does not matter: each of ``others`` that ran cleanly
    printed the same output (a question's; exit 0) or made the same changes on its copy (a
    writer's, ``trial.changed``: the same paths with the same contents), at least one did,
    and none could not be tried. A rendering that failed is no other reading of the task."""
    from shellagent.agent.trial import changed

    if mine.result is None or mine.result.exit_code != 0:
        return False
    made = changed(mine.result)
    if made == ():  # a writer that changed nothing agrees with nothing
        return False
    same = 0
    for other in others:
        if other.result is None:
            return False
        if other.result.exit_code != 0 or other.result.timed_out or other.result.refused:
            continue
        if made is not None:
            if changed(other.result) != made:
                return False
        elif other.result.output.strip() != mine.result.output.strip() or not other.read_only:
            return False
        same += 1
    return same > 0


def answered(kind: str, result: CommandResult) -> bool:
    """Whether a recipe's command did its job: exit 0; or, for a question, output ending a
    pipeline whose reader stopped early: with ``pipefail`` on, ``sort … | head -n 1``
    exits 141 (SIGPIPE) whenever ``sort`` still had output when ``head`` had enough, a
    race the size of the input decides."""
    if result.exit_code == 0:
        return True
    return kind == "question" and result.exit_code == SIGPIPE_EXIT and bool(result.output.strip())


SIGPIPE_EXIT = 128 + 13
# An untried rendering's fit (action, question): as a clean run that says what the task
# names. Trying is for catching renderings that fail; a lower-ranked one that merely ran
# should not win over a better-ranked one that could not be tried.
UNTRIED = (3.5, 3.5)
# An untried action's fit when the task asks a question: as a clean run that printed
# nothing, below every tried answer that printed something.
UNTRIED_ACTION_FOR_A_QUESTION = 2.0


def first_values(offer: Offer) -> UseAction | None:
    """``offer`` filled with each slot's first value; None if a slot has none."""
    args = []
    for slot in offer.slots:
        values = slot.values()
        if not values:
            return None
        args.append((slot.name, values[0]))
    return UseAction(use=offer.name, args=tuple(args))


def fill_first(
    recipe: Recipe, values: TaskValues, given: Mapping[str, tuple[str, str]] | None = None
) -> tuple[str, Mapping[str, str]] | None:
    """``recipe`` filled with each slot's first value for the task and rendered; None when
    a slot has no value or a value its type refuses. ``given``: what the model gave the
    recipe that ran (slot name: (type, value)); a slot of the same name and type the task
    names no value for takes that, before its default (the pattern "ERROR" the model read
    from the task for one recipe is the pattern of the next)."""
    offer = make_offer(recipe, values)
    if given:
        offer = replace(
            offer,
            slots=tuple(
                replace(slot, candidates=(given[slot.name][1],))
                if not slot.candidates
                and slot.name in given
                and given[slot.name][0] == slot.type
                and given[slot.name][1]
                else slot
                for slot in offer.slots
            ),
        )
    action = first_values(offer)
    if action is None:
        return None
    from shellagent.recipes import render

    try:
        return render(recipe, action.arguments), action.arguments
    except InputError:
        return None
