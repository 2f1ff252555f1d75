"""The recipe step: before the model writes any command, try the verified recipes.

A 135M model cannot plan a command; it can pick and copy. So a session with a recipe book
starts here (``attempt``), and only falls through to the free loop when no recipe fits:

1. The shortlist (``shellagent.recipes.shortlist``): the ranker scores every recipe for
   the task by its words, the best are reordered by their shapes against what the task
   names, and the offered few get, per slot, the values the task names. None fits: the
   free loop.
2. **Confident** (the best score at least ``RecipeBook.confident``): the model fills the
   best recipe's slots in one reply, under a grammar that admits only its name and, per
   slot, the values the task names (``recipe_grammar``). The recipe renders the command.
   The ranker chooses, the model fills: measured on unseen draws of the task families,
   the held-out phrasings and the everyday labels (``bench/recipes_bench.py calls``),
   the ranker's first is the right recipe more often than a 135M model's pick among
   several, with or without an adapter trained on recipe calls, while the model fills
   the slots better than the first values do.
3. **Uncertain** (at least ``RecipeBook.fits``): the best ``offered`` recipes are
   filled, the ranker's first by the model's reply, the others with each slot's first
   value, and each rendering is *tried before it is shown*: a read-only one confined in
   the session's shell (the kernel refuses its writes), a writer on its own overlay copy
   of the working directory (``WriterTrial``; without one, writers are not tried). The
   one whose result fits best (``fit``) is chosen, the ranker's order breaking ties.
4. The chosen command then goes through the policy and approval exactly as a ``cmd``
   would (the loop's own path). If it runs and exits 0, the session ends: a question's
   answer is its output, an action says what ran.
5. Otherwise the free loop runs as before: the model writes commands itself, each marked
   ``origin: free`` in the transcript and on screen. If that fails too, ``honest`` says so
   plainly and names the next step (a larger model, or the command to edit).

Every model gets the recipes (``book_for``; ``ask.recipes = off`` turns them off), in
``ask`` as in ``eval``; any model still writes its own commands when no recipe fits.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from shellagent.agent import observation
from shellagent.agent.actions import RunAction, UseAction
from shellagent.agent.approval import Choice
from shellagent.agent.claims import Watch, alternatives, expected, judge, ranking
from shellagent.agent.confidence import Confidence, Ranking, says
from shellagent.agent.learning import BookWatch
from shellagent.agent.recipe_prompt import USE_MAX_TOKENS, generate, prompt, recorded
from shellagent.agent.session import SessionEnd, SessionState, shell_state
from shellagent.agent.trying import (
    WON_BY,
    Tried,
    WriterTrial,
    agreed,
    answered,
    fill_first,
    first_values,
    fit,
    triable,
    trial,
)
from shellagent.errors import InputError, ShellagentError
from shellagent.events import Alternative, ChatMessage, ModelTurn
from shellagent.recipes.listing import read_only, read_values
from shellagent.recipes.reading import read_task
from shellagent.recipes.shortlist import (
    CONFIDENT,
    FITS,
    OFFERED,
    make_offer,
    ranked_with_reason,
    shortlist,
)

if TYPE_CHECKING:
    from shellagent.model.backend import Generation
    from shellagent.recipes import Recipe
    from shellagent.recipes.offer import Offer
    from shellagent.recipes.rank import Candidate, Ranker
    from shellagent.recipes.reading import TaskReading
    from shellagent.recipes.shortlist import Shortlist
    from shellagent.recipes.values import TaskValues
    from shellagent.sandbox import CommandResult

__all__ = [
    "CONFIDENT",
    "FITS",
    "USE_MAX_TOKENS",
    "RecipeBook",
    "Tried",
    "WriterTrial",
    "attempt",
    "book_for",
    "indexing",
    "honest",
    "prompt",
]

# What the model's own filling adds to a tried rendering's score: a tie-break only (with
# 0.25 the model's pick beat better-ranked renderings that ran as cleanly).
MODEL_CHOICE = 0.01
ANSWER_MAX = 1500
# The next step named when nothing worked: a model that writes its own commands well.
LARGER_MODEL = "qwen2.5-coder-1.5b"

RunCommand = Callable[[SessionState, RunAction, int], None]


@dataclass(frozen=True)
class RecipeBook:
    """The recipes a session may use, their ranker, and the thresholds that decide."""

    recipes: Mapping[str, Recipe]
    ranker: Ranker
    confident: float = CONFIDENT
    fits: float = FITS
    offered: int = OFFERED
    try_uncertain: bool = True
    shapes: bool = True  # rerank by what the task names against each recipe's slots
    writer_trial: WriterTrial | None = None
    # the recipe the user picked when the last answer did not do it: run first, unranked
    pick: str | None = None

    @classmethod
    def load(
        cls,
        *,
        cache_dir: Path | None = None,
        writer_trial: WriterTrial | None = None,
        dirs: Sequence[Path] | None = None,
    ) -> RecipeBook:
        """The recipes of ``dirs`` (default: the shipped and the user's), ranked by a model
        cached in ``cache_dir``."""
        from shellagent.recipes import load
        from shellagent.recipes.rank import Ranker

        catalog = load(dirs)
        recipes = dict(catalog.recipes)
        ranker = Ranker.build(list(recipes.values()), cache_dir)
        return cls(recipes, ranker, writer_trial=writer_trial)


RecipesSetting = Literal["auto", "on", "off"]
"""``ask.recipes``: whether the recipe step runs (``auto``: for every model)."""
_DEFAULT: RecipeBook | None = None
_DEFAULT_LOCK = threading.Lock()
_WATCH = BookWatch()
_TRAINING: threading.Thread | None = None


def indexing(setting: RecipesSetting = "auto") -> bool:
    """Whether a task goes without recipes only because the ranker is being trained in the
    background now."""
    if setting == "off":
        return False
    with _DEFAULT_LOCK:
        return _DEFAULT is None and _TRAINING is not None and _TRAINING.is_alive()


def book_for(setting: RecipesSetting = "auto") -> RecipeBook | None:
    """The process-wide recipe book (the shipped and the user's recipes, the ranker cached
    in the cache directory, writers tried on overlay copies) for any model, as ``eval``
    gives one; None when ``setting`` is ``off``, or when the recipes cannot be loaded (then
    the model writes commands).

    A ranker already trained on this recipe set loads in a second or two. One that must be
    trained first (a new install, a recipe added) takes tens of seconds on a small
    machine: it is trained in the background, and tasks asked meanwhile go without."""
    global _DEFAULT, _TRAINING
    if setting == "off":
        return None
    with _DEFAULT_LOCK:
        if _DEFAULT is not None:
            _DEFAULT = _WATCH(_DEFAULT)  # what was taught since, taken in at once
            return _DEFAULT
        if _TRAINING is not None:
            return None
        from shellagent import paths
        from shellagent.agent.trial import OverlayTrial
        from shellagent.recipes import load
        from shellagent.recipes.rank import Ranker

        try:
            _WATCH.mark()
            recipes = dict(load().recipes)
        except (ShellagentError, OSError, ValueError):
            return None
        cache = paths.cache_dir()
        ranker = Ranker.cached(list(recipes.values()), cache)
        if ranker is not None:
            _DEFAULT = RecipeBook(recipes, ranker, writer_trial=OverlayTrial())
            return _DEFAULT

        def train() -> None:
            global _DEFAULT
            try:
                trained = Ranker.build(list(recipes.values()), cache)
            except (ShellagentError, OSError, ValueError):
                return
            with _DEFAULT_LOCK:
                _DEFAULT = RecipeBook(recipes, trained, writer_trial=OverlayTrial())

        _TRAINING = threading.Thread(target=train, name="recipe-ranker", daemon=True)
        _TRAINING.start()
        return None


@dataclass
class _Filled:
    use: UseAction
    recipe: Recipe
    command: str
    generation: Generation | None = None
    # the messages the reply answers: those the model was sent, or for a first-values
    # fill those the recipe step sends for its recipe (``recipe_prompt.prompt``)
    asked: list[dict[str, str]] = field(default_factory=list)
    tried: list[Tried] = field(default_factory=list)
    # chosen by its trial: its result fitted clearly better than every other recipe's
    won: bool = False
    # the other recipes it was unsure between, tried, did the same (``trying.agreed``)
    agreed: bool = False


def attempt(state: SessionState, book: RecipeBook, run: RunCommand) -> None:
    """Answer the task with a recipe if one fits; raises ``SessionEnd`` when it did.
    Returns when the free loop should take over (``state.origin`` is then ``"free"``)."""
    trying = book.try_uncertain and not state.config.dry_run  # a dry run runs nothing
    reading = read_task(state.task)  # the one reading every step below takes
    chosen = shortlist(book, reading, lambda: _task_values(state, reading), trying=trying)
    if book.pick is not None:
        _run_picked(state, book, chosen, run, reading)
    if chosen is None:
        _to_free(state, "no recipe fits the task")
        return
    book = replace(book, recipes=chosen.recipes)  # with the composed ones the task asks for
    usable, values = chosen.usable, chosen.values
    missing = _missing(state, chosen)
    if missing:  # never an answer about another folder ("." for a missing ~/Downloads)
        raise SessionEnd("finished", f"{missing} does not exist", claimed=False)
    state.turn += 1
    turn = state.turn
    if chosen.confident:
        filled = _fill(state, book, chosen.offers, chosen.shortlist)
    else:
        filled = _try_each(state, book, chosen.offers, chosen.shortlist, reading)
    if filled is None:
        _to_free(state, "the recipes that might fit could not be filled from the task", chosen)
        return
    chose = ranking(
        usable,
        filled.recipe.name,
        confident=chosen.confident,
        tried=filled.won,
        agreed=filled.agreed,
    )
    after = _Next(state, book.recipes, usable, values, run, book.ranker, book.shapes)
    failed = _run_filled(state, filled, values, run, turn, chose, after)
    if filled.command.strip() in state.refusals and not state.cancel.is_set():
        # refused: the next recipes that fit the request and the reason, before the model
        # writes anything itself
        picked = after.after_refusal(filled)
        if picked is not None:
            raise picked
    # A second chance without the model when the command ran and failed (not when it was
    # denied or refused): the other candidates filled with the task's first values and
    # tried; one that runs cleanly is shown. Only then the free loop.
    if failed and book.try_uncertain and not state.config.dry_run and not state.cancel.is_set():
        rest = [c for c in usable[: book.offered] if c.name != filled.recipe.name]
        offers = [make_offer(book.recipes[c.name], values) for c in rest]
        again = _try_each(state, book, offers, rest, reading, ask_model=False) if rest else None
        if again is not None and max(t.score for t in again.tried) > 0:
            state.turn += 1
            # the first choice failed: the second is never sure of itself
            second = ranking(usable, again.recipe.name, confident=False)
            failed = _run_filled(state, again, values, run, state.turn, second, after)
            filled = again
    if (
        failed
        and not state.cancel.is_set()
        and not getattr(state.backend, "writes_commands", False)
    ):
        # A small model's own commands after a recipe that ran and failed solved 0 of 36
        # tasks (dev, everyday, newcomer; 7 s each): the session ends here, saying what
        # ran and how it failed, with the next recipes that fit. A model that writes
        # commands well goes on with the shortlist as tools.
        raise after.failed(filled)
    _to_free(state, f"the recipe {filled.recipe.name} did not do it", chosen)


def _run_picked(
    state: SessionState,
    book: RecipeBook,
    chosen: Shortlist | None,
    run: RunCommand,
    reading: TaskReading,
) -> None:
    """The recipe the user picked (``RecipeBook.pick``) runs first, filled with the task's
    first values, as the user's pick; raises ``SessionEnd`` when it did the task."""
    recipes = chosen.recipes if chosen is not None else book.recipes
    values = chosen.values if chosen is not None else _task_values(state, reading)
    usable = chosen.usable if chosen is not None else []
    pick = book.pick
    if pick is None or pick not in recipes:
        return
    after = _Next(state, recipes, usable, values, run, book.ranker, book.shapes)
    done = after.run_pick(Alternative(pick, "", ""))
    if done is not None:
        raise done


def _run_filled(
    state: SessionState,
    filled: _Filled,
    values: TaskValues,
    run: RunCommand,
    turn: int,
    chose: Ranking,
    after: _Next,
) -> bool:
    """Record and run a filled recipe (policy, approval, execution: the loop's own path);
    ends the session if it did the task, else says whether it ran (and failed)."""
    from shellagent.recipes.compose import the_one_of_a_ranking

    if filled.recipe.kind == "question" and not any(
        slot.type == "count" for slot in filled.recipe.slots.values()
    ):
        filled.command = the_one_of_a_ranking(filled.command, values.reading.ranking_end)
    saved_to = _save_target(filled.recipe, values, filled.use.arguments)
    if saved_to is not None:
        filled.command = redirect(filled.command, *saved_to)
    ran = len(state.commands)
    done = _execute(state, filled, values, run, turn, chose, saved=saved_to is not None)
    if done is not None:
        result, seen = done
        if saved_to is not None:
            answer = f"Saved to {saved_to[0]}: {result.command}"
        else:
            answer = _answer(filled.recipe, result)
        raise after.settle(filled, answer, seen)
    state.origin = ""
    return len(state.commands) > ran


def _execute(
    state: SessionState,
    filled: _Filled,
    values: TaskValues,
    run: RunCommand,
    turn: int,
    chose: Ranking,
    *,
    saved: bool = False,
    why: str = "",
) -> tuple[CommandResult, Confidence] | None:
    """Record a filled recipe and run it through ``run`` (policy, approval, execution);
    when it did its job, what ran and the evidence about it, else None."""
    _record(state, filled, turn, chose, why)
    ran = len(state.commands)
    wanted = expected(values)
    watch = Watch.start(state, filled.recipe, filled.use.arguments, wanted)
    # Set while the recipe's command runs, and kept when the session ends on it (the
    # outcome says a recipe did the task); cleared when the session goes on without it.
    state.origin = f"recipe {filled.recipe.name}"
    run(state, RunAction(cmd=filled.command, why=why or _why(filled)), turn)
    if len(state.commands) <= ran:
        return None
    result = state.commands[-1]
    if not answered(filled.recipe.kind, result) or result.timed_out or result.refused:
        return None
    args = filled.use.arguments
    seen = judge(state, filled.recipe, args, result, wanted, chose, watch, saved=saved)
    state.emit(
        ChatMessage(
            role="system",
            content=f"(recipes: evidence {json.dumps(seen.to_json())})",
            turn=turn,
        )
    )
    return result, seen


@dataclass
class _Next:
    """The recipes after the one that ran, best first: offered when its result is unsure
    or its command was refused, and run when the user picks one (``SessionState.chooser``:
    a person; nobody picks for an automatic approver, so nothing unsure is chosen for the
    user)."""

    state: SessionState
    recipes: Mapping[str, Recipe]
    usable: Sequence[Candidate]
    values: TaskValues
    run: RunCommand
    ranker: Ranker | None = None
    shapes: bool = True  # the shortlist's shape penalties apply (``Shelf.shapes``)
    # what the model gave the recipe that ran, by slot: (type, value); the next recipes'
    # slots of the same name and type the task names no value for take it (``fill_first``)
    given: dict[str, tuple[str, str]] = field(default_factory=dict)

    def ran(self, filled: _Filled) -> None:
        """Remember what the model gave ``filled``'s recipe, for the recipes after it."""
        slots = filled.recipe.slots
        self.given = {
            name: (slots[name].type, value)
            for name, value in filled.use.arguments.items()
            if name in slots
        }

    def fill(self, recipe: Recipe) -> tuple[str, Mapping[str, str]] | None:
        return fill_first(recipe, self.values, self.given)

    def offers(self, ran: str, reason: str = "") -> tuple[Alternative, ...]:
        """Up to ``claims.ALTERNATIVES`` recipes after ``ran``; with a refusal's
        ``reason``, those that fit the request and the reason together first."""
        usable = list(self.usable)
        if reason and self.ranker is not None:
            again = ranked_with_reason(
                self.ranker, self.recipes, self.values, reason, shapes=self.shapes
            )
            usable = again + usable
        return alternatives(self.state, self.recipes, usable, self.fill, ran)

    def settle(self, filled: _Filled, answer: str, seen: Confidence) -> SessionEnd:
        """The end of a session a recipe answered: claimed when what was observed supports
        it; else with what ran in plain words, why it may not be what was asked, and the
        next recipes that fit, one of which the user may pick and run instead."""
        self.ran(filled)
        if seen.claimed:
            # a person may still say it did not do it: the next ones are offered then
            later = self.offers(filled.recipe.name) if self.state.chooser is not None else ()
            return SessionEnd("finished", answer, claimed=True, alternatives=later)
        ran = says(filled.recipe, filled.use.arguments)
        doubts = tuple(d.says for d in seen.doubts)
        offered = self.offers(filled.recipe.name)
        unsure = SessionEnd(
            "finished", answer, claimed=False, ran=ran, doubts=doubts, alternatives=offered
        )
        picked = self.ask(Choice(ran, doubts, offered, answer))
        if picked is None:
            return unsure
        return self.run_pick(picked) or unsure

    def failed(self, filled: _Filled) -> SessionEnd:
        """The end of a session whose recipe ran and failed: not done, what ran in plain
        words and how it failed, and the next recipes that fit for the user to pick."""
        self.ran(filled)
        result = self.state.commands[-1]
        lines = [line for line in result.output.strip().splitlines() if line.strip()]
        said = f": {lines[-1].strip()[:160]}" if lines else ", printing nothing"
        how = f"{says(filled.recipe, filled.use.arguments)}: the command failed"
        summary = f"{how} (exit code {result.exit_code}){said}"
        offered = self.offers(filled.recipe.name)
        not_done = SessionEnd("finished", summary, claimed=False, alternatives=offered)
        picked = self.ask(Choice("", (summary,), offered))
        if picked is None:
            return not_done
        return self.run_pick(picked) or not_done

    def ask(self, choice: Choice) -> Alternative | None:
        """The alternative the user picks, or None (kept as it is, or nobody to ask)."""
        chooser = self.state.chooser
        if chooser is None or not choice.alternatives or self.state.cancel.is_set():
            return None
        pick = chooser(choice)
        return choice.alternatives[pick - 1] if 0 < pick <= len(choice.alternatives) else None

    def run_pick(self, alternative: Alternative) -> SessionEnd | None:
        """Run the alternative the user picked, as any recipe runs (policy, approval; a
        writer's changes land in the session's copy, shown in the change set). The pick is
        the user's: the ranking is no doubt, its result's shape still may be."""
        recipe = self.recipes.get(alternative.recipe)
        filled_first = self.fill(recipe) if recipe is not None else None
        if recipe is None or filled_first is None:
            return None
        command, args = filled_first
        state = self.state
        state.turn += 1
        use = UseAction(use=recipe.name, args=tuple(args.items()))
        asked = prompt(state.task, [make_offer(recipe, self.values)])
        filled = _Filled(use, recipe, command, asked=asked)
        chose = Ranking(score=0.0, margin=float("inf"), confident=True)
        why = f"{_why(filled)} (your pick)"[:160]
        done = _execute(state, filled, self.values, self.run, state.turn, chose, why=why)
        if done is None:
            return None
        result, seen = done
        state.picked = (recipe, tuple(args.items()))
        if seen.claimed:
            return SessionEnd("finished", _answer(recipe, result), claimed=True)
        return SessionEnd(
            "finished",
            _answer(recipe, result),
            claimed=False,
            ran=says(recipe, args),
            doubts=tuple(d.says for d in seen.doubts),
        )

    def after_refusal(self, refused: _Filled) -> SessionEnd | None:
        """The user refused the recipe's command: the next recipes that fit the request
        and the reason given, for the user to pick one; None when nothing was picked."""
        self.ran(refused)
        reason = self.state.refusal_reason
        offered = self.offers(refused.recipe.name, reason)
        said = f" ({reason})" if reason else ""
        picked = self.ask(Choice("", (f"you refused {refused.recipe.name}{said}",), offered))
        return self.run_pick(picked) if picked is not None else None


def _save_target(
    recipe: Recipe, values: TaskValues, args: Mapping[str, str]
) -> tuple[str, bool] | None:
    """Where a question's answer is to be saved, when the task says to save it in a file
    and the recipe has no slot for one (``(path, append)``); None otherwise. The file is
    one the task names after the verb and that is none of the recipe's own arguments."""
    if recipe.kind != "question" or any(s.type == "output" for s in recipe.slots.values()):
        return None
    after = values.reading.saving
    if not after:
        return None
    used = set(args.values())
    for target in values.outputs:
        if target in after and target.rsplit("/", 1)[-1] not in {
            u.rsplit("/", 1)[-1] for u in used
        }:
            return target, values.reading.append
    return None


def redirect(command: str, path: str, append: bool = False) -> str:
    """``command`` with all its output saved in ``path`` (one shell word, quoted). A new
    file only (``set -C``): an existing file is never overwritten by an answer; appending
    adds to it."""
    from shellagent.recipes import shell_word

    target = shell_word(path, path=True)
    if append:
        return f"{{ {command}\n}} >> {target}"
    return f"(set -C; {{ {command}\n}} > {target})"


def _to_free(state: SessionState, why: str, chosen: Shortlist | None = None) -> None:
    """From here the model writes its own commands: say so in the transcript. A model
    that writes them well is also offered the shortlist's best recipes as tools
    (``agent/tools.py``)."""
    state.origin = "free"
    state.emit(
        ChatMessage(
            role="system",
            content=f"(recipes: {why}; the model writes the commands itself from here)",
            turn=state.turn,
        )
    )
    if chosen is None or not getattr(state.backend, "writes_commands", False):
        return
    from shellagent.agent.session import observe
    from shellagent.agent.tools import offered_as_tools

    offers = [make_offer(chosen.recipes[c.name], chosen.values) for c in chosen.usable[:8]]
    tools = offered_as_tools(chosen.recipes, offers)
    if tools is not None:
        state.tools = tools
        observe(state, tools.message)


_NAMED = ("dir", "file", "path")  # the slot types that take a path the task names


def _missing(state: SessionState, chosen: Shortlist) -> str:
    """The folder or file the task names for the best recipe's question that is not there
    ("" when all are): the question is about it, and no other folder answers it."""
    import shlex

    recipe = chosen.recipes[chosen.shortlist[0].name]
    first = first_values(chosen.offers[0])
    if recipe.kind != "question" or first is None:
        return ""
    tests = []
    for name, value in first.args:
        if recipe.slots[name].type not in _NAMED or value not in chosen.values.paths:
            continue
        if value.startswith("/"):
            word = shlex.quote(value)
        elif value == "~" or value.startswith("~/"):
            word = '"$HOME"' + shlex.quote(value[1:])
        else:
            continue  # a name the listing found: it exists
        tests.append(f"[ -e {word} ] || printf '%s\\n' {shlex.quote(value)}")
    missing = read_only(state.shell, "; ".join(tests)) if tests else []
    return missing[0] if missing else ""


def _task_values(state: SessionState, reading: TaskReading) -> TaskValues:
    """What the task names, read against the session's working directory."""
    return read_values(reading, lambda command: read_only(state.shell, command))


def _render(book: RecipeBook, action: UseAction) -> tuple[Recipe, str] | None:
    from shellagent.recipes import render

    recipe = book.recipes.get(action.use)
    if recipe is None:
        return None
    try:
        return recipe, render(recipe, action.arguments)
    except InputError:  # a value its type refuses: not this recipe
        return None


def _fill(
    state: SessionState, book: RecipeBook, offers: Sequence[Offer], ranked: Sequence[Candidate]
) -> _Filled | None:
    """One reply: the model fills the offered recipe (the ranker's choice)."""
    try:
        generation, action, asked = generate(state, offers)
    except InputError:
        return None
    rendered = _render(book, action)
    if rendered is None:
        return None
    return _Filled(action, rendered[0], rendered[1], generation, asked)


def _try_each(
    state: SessionState,
    book: RecipeBook,
    offers: Sequence[Offer],
    ranked: Sequence[Candidate],
    reading: TaskReading,
    *,
    ask_model: bool = True,
) -> _Filled | None:
    """One reply fills the ranker's first recipe, as when confident; every offer, that one
    too, is also filled with each slot's first value (what the task names first, else the
    default). Every rendering is tried where it cannot change the real files, and the one
    whose result fits best is kept (the model's filling wins a tie)."""
    generation: Generation | None = None
    chosen: UseAction | None = None
    if ask_model:
        with contextlib.suppress(InputError):  # the model fills the ranker's first
            generation, chosen, _ = generate(state, offers[:1])
    # each filling with the messages that ask for it: those the model was sent (the
    # ranker's first alone) or would be sent for its recipe
    fills: list[tuple[UseAction, float, list[dict[str, str]]]] = []
    for offer, candidate in zip(offers, ranked, strict=False):
        asked = prompt(state.task, [offer])
        if chosen is not None and chosen.use == offer.name:
            fills.append((chosen, candidate.score + MODEL_CHOICE, asked))
        first = first_values(offer)  # beside the model's filling too: it may be wrong
        if first is not None and (
            chosen is None or (first.use, first.arguments) != (chosen.use, chosen.arguments)
        ):
            fills.append((first, candidate.score, asked))
    best: _Filled | None = None
    best_score = float("-inf")
    tried: list[Tried] = []
    for action, prior, asked in fills:
        if state.cancel.is_set():
            raise SessionEnd("cancelled", "cancelled before the task was done")
        rendered = _render(book, action)
        if rendered is None:
            continue
        recipe, command = rendered
        # judged in the session's real state: its functions, aliases and variables (a
        # function named like the program runs instead of it)
        decision = state.policy.check(command, shell_state(state))
        if decision.decision == "deny":
            continue
        result = None
        if triable(recipe, decision, state.shell.functions):
            result = trial(state, book.writer_trial, command, decision)
        score = fit(reading, recipe.kind, result) + prior
        tried.append(
            Tried(recipe.name, action.arguments, command, result, score, decision.read_only)
        )
        if score > best_score:
            best_score = score
            model = generation if action is chosen else None
            best = _Filled(action, recipe, command, model, asked)
    if best is not None:
        best.tried = tried
        rivals = [t.score for t in tried if t.recipe != best.recipe.name]
        mine = next(t for t in tried if t.recipe == best.recipe.name and t.score == best_score)
        best.won = mine.result is not None and (not rivals or best_score - max(rivals) >= WON_BY)
        best.agreed = agreed(mine, [t for t in tried if t.recipe != best.recipe.name])
    return best


def _why(filled: _Filled) -> str:
    return f"recipe {filled.recipe.name}: {filled.recipe.summary}"[:160]


def _record(state: SessionState, filled: _Filled, turn: int, chose: Ranking, why: str = "") -> None:
    """The ``use`` reply in the transcript: the recipe, its arguments, the rendered command."""
    generation = filled.generation
    raw = generation.text if generation is not None else filled.use.to_json()
    action = {
        **filled.use.to_dict(),
        "cmd": filled.command,
        "why": why or _why(filled),
        "origin": "recipe",
        "ranking": json.dumps(
            {
                "score": round(chose.score, 3),
                "margin": round(chose.margin, 3) if chose.margin != float("inf") else None,
                "confident": chose.confident,
                "tried": chose.tried,
            }
        ),
    }
    if filled.tried:
        action["tried"] = json.dumps(
            [
                {
                    "recipe": t.recipe,
                    "command": t.command,
                    "score": round(t.score, 3),
                    "exit_code": t.result.exit_code if t.result else None,
                }
                for t in filled.tried
            ]
        )
    state.emit(
        ModelTurn(
            turn=turn,
            raw=raw,
            action=action,
            valid=True,
            stop=generation.stop if generation else "end",
            prompt_tokens=generation.prompt_tokens if generation else 0,
            evaluated_prompt_tokens=generation.evaluated_prompt_tokens if generation else 0,
            generated_tokens=generation.generated_tokens if generation else 0,
            duration_s=round(generation.duration_s, 4) if generation else 0.0,
            # only when the reply is what the model generated (not a first-values fill)
            token_ids=generation.token_ids if generation else None,
            logprobs=generation.logprobs if generation else None,
            prompt=recorded(filled.asked),
        )
    )
    state.emit(ChatMessage(role="assistant", content=raw, turn=turn))


def _answer(recipe: Recipe, result: CommandResult) -> str:
    """The session's summary: a question's answer is its output; an action says what ran."""
    output = result.output.strip()
    if recipe.kind == "question":
        return observation.cut(output, ANSWER_MAX) if output else "(no output: nothing matched)"
    done = f"Done with the recipe {recipe.name}: {result.command}"
    return f"{done}\n{observation.cut(output, ANSWER_MAX)}" if output else done


def honest(stop: SessionEnd, state: SessionState) -> SessionEnd:
    """A free session that did not finish, said plainly with the next step to take."""
    if (
        stop.plain
        or state.origin != "free"
        or stop.reason in ("finished", "cancelled", "user_quit")
    ):
        return stop
    last = next((r.command for r in reversed(state.commands)), "")
    step = f"`shellagent model pull {LARGER_MODEL}` and ask again with `--model {LARGER_MODEL}`"
    text = (
        "No recipe fits this task and the commands the model wrote did not do it"
        # a turn that made no progress ended it: what that turn did (``progress.py``)
        + (f"; it stopped at a turn that made no progress: {stop.ran}" if stop.ran else "")
        + f". Next: {step}"
        + (f", or edit and run the last command yourself: {last}" if last else "")
        + "."
    )
    return SessionEnd(stop.reason, text, stop.error or stop.summary, ran=stop.ran, claimed=False)


def describe(candidates: Sequence[Candidate]) -> str:
    """The ranking in one line, for logs and the bench."""
    return ", ".join(f"{c.name} {c.score:.2f}" for c in candidates)
