"""Which recipes a task is offered, and what each slot may be filled with.

The reading half of the recipe step (the session half, which fills, tries and runs, is
``shellagent.agent.recipe_step``). The task is read once (``reading.read_task``); every
step below takes that reading, none reads the task's text again:

1. The ranker (``shellagent.recipes.rank``) scores every recipe for the task by its
   words. Whether any recipe fits at all is decided here, on those scores (``FITS``
   was measured on them).
2. What the task names is read against the working directory's listing
   (``listing.read_values``, given as ``read_values``, called only when a recipe fits);
   a column or key of a file it
   names that the task says is marked as the phrasings' ``{field}`` is, and the recipes are
   ranked again on that reading.
3. A task that asks to act on files it describes, or for the one file that is the most of
   something, also gets the selections that find such files as that action or pick
   (``shellagent.recipes.compose``), scored by how well they fit the files described.
4. The best ``POOL`` are reordered by their shapes against what the task names
   (``shellagent.recipes.fitness``).
5. **Confident** (the best score at least ``confident``): the best one alone is offered
   (the ranker chooses, the model fills). Otherwise the best ``offered`` within ``BAND``
   of ``fits``. Each offer's slots hold the values the task names (``make_offer``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from shellagent.recipes.offer import Offer, offer_slot

if TYPE_CHECKING:
    from shellagent.recipes.model import Recipe
    from shellagent.recipes.rank import Candidate, Ranker
    from shellagent.recipes.reading import TaskReading
    from shellagent.recipes.values import TaskValues

__all__ = [
    "BAND",
    "CONFIDENT",
    "FITS",
    "OFFERED",
    "POOL",
    "Shelf",
    "Shortlist",
    "make_offer",
    "ranked_with_reason",
    "shortlist",
]

# Thresholds on the ranker's score, a one-vs-rest margin, measured with
# ``bench/recipes_bench.py intents`` (docs/results.md): from CONFIDENT the top recipe is
# the right one for 96 % of the held-out phrasings; below FITS lie 4 % of them and 43 %
# of the dev tasks (mostly jobs no recipe does), which the free loop takes. In between,
# the best three are filled and tried before one is shown. FITS moved from -0.6 when
# recipes for each direction of an age or size were added: near twins share the margin
# ("files larger than 100MB" now scores -0.64 where it scored -0.54), and at -0.6 the
# first-values dev figure fell from 92 to 84; at -0.7 it is 94, everyday 41/58 as before.
CONFIDENT = 0.0
FITS = -0.7
OFFERED = 3
# How many of the ranker's best the recipes' shapes reorder (``shellagent.recipes.fitness``).
POOL = 12
# A recipe is offered beside the best one only when its score is this close to FITS or above.
BAND = 0.3


class Shelf(Protocol):
    """What a shortlist is drawn from: the recipes, their ranker and the thresholds that
    decide (``shellagent.agent.recipe_step.RecipeBook`` is one)."""

    @property
    def recipes(self) -> Mapping[str, Recipe]: ...

    @property
    def ranker(self) -> Ranker: ...

    @property
    def confident(self) -> float: ...

    @property
    def fits(self) -> float: ...

    @property
    def offered(self) -> int: ...

    @property
    def shapes(self) -> bool: ...


@dataclass(frozen=True)
class Shortlist:
    """The recipes offered for a task: ``recipes``, the shelf's with the composed ones the
    task asks for, every usable recipe best first, the offered few and their offers (slots
    filled with candidates from ``values``), and whether the best is sure enough to be
    filled alone."""

    recipes: Mapping[str, Recipe]
    usable: list[Candidate]
    shortlist: list[Candidate]
    offers: list[Offer]
    values: TaskValues
    confident: bool


def shortlist(
    shelf: Shelf,
    reading: TaskReading,
    read_values: Callable[[], TaskValues],
    *,
    trying: bool = True,
) -> Shortlist | None:
    """What the model is offered for the task ``reading`` is of; None when no recipe fits.
    ``read_values`` reads what the task names (with the working directory's listing at
    run time); it is called only when a recipe fits. ``trying``: uncertain rankings may be
    tried."""
    from shellagent.recipes.fitness import rerank

    recipes, usable = _ranked(shelf, reading, reading.text, reading.request)
    # Whether any recipe fits is the words' call (FITS was measured on them); which one,
    # and how sure, is then also the shapes'.
    if not usable or usable[0].score < shelf.fits:
        return None
    values = read_values()
    folders = _sorts_that_are_folders(reading, values)
    if folders:  # "the docs listing" beside a docs/ folder: the folder, no sort of file
        reading = replace(
            reading, categories=tuple(c for c in reading.categories if c not in folders)
        )
        values = replace(values, reading=reading)
    marked, asked = _fields_marked(reading, values)
    if marked != reading.text or folders:
        recipes, usable = _ranked(shelf, reading, marked, asked)
    if shelf.shapes:
        usable = rerank(usable, recipes, values)
    if reading.names_only:
        recipes, usable = _names_alone(recipes, usable)
    confident = usable[0].score >= shelf.confident or not trying
    if confident:
        offered = [usable[0]]  # the ranker chooses, the model fills
    else:
        offered = [
            usable[0],
            *(c for c in usable[1 : shelf.offered] if c.score >= shelf.fits - BAND),
        ]
    offers = [make_offer(recipes[c.name], values) for c in offered]
    return Shortlist(recipes, usable, offered, offers, values, confident)


def _names_alone(
    recipes: Mapping[str, Recipe], ranked: list[Candidate]
) -> tuple[Mapping[str, Recipe], list[Candidate]]:
    """For "list their names": each selection in ``ranked`` as the one that prints the
    files' names alone (``compose.names_of``), in its place."""
    from shellagent.recipes.compose import names_of

    added: dict[str, Recipe] = {}
    result = []
    for candidate in ranked:
        recipe = recipes.get(candidate.name)
        alone = names_of(recipe) if recipe is not None else None
        if alone is None:
            result.append(candidate)
            continue
        added[alone.name] = alone
        result.append(replace(candidate, name=alone.name))
    return ({**recipes, **added} if added else recipes), result


def _sorts_that_are_folders(reading: TaskReading, values: TaskValues) -> set[str]:
    """The sorts of file the reading took from a word that is the name of a folder the
    task's values hold (from the working directory's listing: "docs", "music")."""
    from shellagent.recipes.lexicon import lexicon

    if not reading.categories:
        return set()
    # a folder said as a bare word, found in the listing ("docs"), not "~/Videos" beside
    # "how many videos"
    names = {d.rstrip("/").lower() for d in values.dirs if "/" not in d.rstrip("/")}
    said = lexicon()["kinds.categories"]
    return {
        category
        for m in said.finditer(reading.text)
        if said.word(m).lower() in names and (category := said.value(said.word(m)))
    }


def _with_endings(
    shelf: Shelf, recipes: Mapping[str, Recipe], ranked: list[Candidate], reading: TaskReading
) -> tuple[Mapping[str, Recipe], list[Candidate]]:
    """For a task that asks to act on files it describes ("find … and delete them",
    "combine the logs of last week into one file") or for the one file of them that is
    the most of something ("copy the newest backup to /tmp", "which file is the
    largest"), the recipes that find such files also as that action or pick
    (``recipes.compose``). A composed recipe is scored by how well its selection fits
    the files the task describes (the reading's ``selection``: "find all log files from
    the last week"), or as its question when that is better; the shapes then prefer the
    action over its question twin. The recipes with the composed ones, and the ranking,
    best first."""
    from shellagent.recipes.compose import (
        ENDINGS,
        compose,
        compose_pick,
        is_negated,
        narrowed,
        negated,
        pick_named,
    )
    from shellagent.recipes.fitness import narrowings, narrows_unsaid, sort_unsaid
    from shellagent.recipes.values import task_values

    ending = ENDINGS.get(reading.ending)
    pick = pick_named(reading.pick)
    if ending is None and pick is None:
        return _narrowed_to_kind(recipes, ranked, reading)
    values = task_values(reading)  # what the words say, before any listing
    if pick is not None:
        described = _described_picks(shelf, recipes, reading, values)
    elif reading.selection:
        described = shelf.ranker.rank(
            reading.selection, limit=POOL, asked=reading.selection_request
        )
    else:
        described = []
    # "the .log files modified in the last day": a selection by age narrowed to the kind
    kinds = bool(reading.unmistakable_kinds)
    composed: dict[str, Recipe] = {}
    scores: dict[str, Candidate] = {}
    for candidate in (*ranked, *described):
        recipe = recipes.get(candidate.name)
        if (
            recipe is not None
            and narrowings(recipe) & set(reading.unwanted)
            and not is_negated(recipe)
        ):
            recipe = negated(recipe)  # "delete the files that are not empty"
        if recipe is None or sort_unsaid(recipe, reading) or narrows_unsaid(recipe, values):
            continue
        narrower = narrowed(recipe) if kinds else None
        for base in (recipe, *([narrower] if narrower else [])):
            if pick is not None:
                action = compose_pick(base, pick, ending)
            else:
                assert ending is not None
                action = compose(base, ending)
            if action is None:
                continue
            composed[action.name] = action
            best = scores.get(action.name)
            if best is None or candidate.score > best.score:
                scores[action.name] = replace(candidate, name=action.name)
    if not scores:
        return recipes, ranked
    # built to the task's own shape: a composed recipe goes before a plain one it ties with
    return {**recipes, **composed}, sorted([*scores.values(), *ranked], key=lambda c: -c.score)


def _narrowed_to_kind(
    recipes: Mapping[str, Recipe], ranked: list[Candidate], reading: TaskReading
) -> tuple[Mapping[str, Recipe], list[Candidate]]:
    """For a question about files of a kind it names by extension ("which .log files are
    bigger than 1 MB"), each selection that cannot be told the kind also narrowed to it
    (``compose.narrowed``), scored as its selection: the shapes then prefer it, since the
    plain one answers about every file."""
    from shellagent.recipes.compose import narrowed

    if reading.kind != "question" or not reading.unmistakable_kinds:
        return recipes, ranked
    narrower: dict[str, Recipe] = {}
    scores: list[Candidate] = []
    for candidate in ranked:
        made = narrowed(recipes[candidate.name]) if candidate.name in recipes else None
        if made is not None and made.name not in recipes:
            narrower[made.name] = made
            scores.append(replace(candidate, name=made.name))
    if not scores:
        return recipes, ranked
    return {**recipes, **narrower}, sorted([*scores, *ranked], key=lambda c: -c.score)


def _described_picks(
    shelf: Shelf, recipes: Mapping[str, Recipe], reading: TaskReading, values: TaskValues
) -> list[Candidate]:
    """The selections to narrow to the one the reading's pick asks for, scored. "Identify
    the most recent backup file and copy it" is understood as well as its question
    ("Identify the most recent backup file") ranks: the selection of every file gets that
    score, and a selection that fits the files described better than every file ("the
    newest .log file": the .log files) gets more by as much as it fits better, if the task
    tells it what it must be told (no "files changed between two dates" when it says no
    date)."""
    from shellagent.recipes.compose import is_unfiltered
    from shellagent.recipes.fitness import narrows_unsaid, untold

    if not reading.selection or not reading.pick_selection:
        return []
    understood = shelf.ranker.rank(reading.selection, limit=1, asked=reading.selection_request)
    every = shelf.ranker.rank(
        reading.pick_selection,
        limit=len(shelf.ranker.names),
        asked=reading.pick_selection_request,
    )
    unfiltered = [c for c in every if c.name in recipes and is_unfiltered(recipes[c.name])]
    if not unfiltered:
        return []
    base = unfiltered[0].score
    return [
        replace(c, score=understood[0].score + c.score - base)
        for c in every[:POOL]
        if c.score > base
        and c.name in recipes
        and not untold(recipes[c.name], values)
        and not narrows_unsaid(recipes[c.name], values)
    ] + [replace(unfiltered[0], score=understood[0].score)]


def _ranked(
    shelf: Shelf, reading: TaskReading, text: str, asked: str
) -> tuple[Mapping[str, Recipe], list[Candidate]]:
    """The recipes ranked for ``text`` (the task as the ranker reads it, ``asked`` its
    request), with the composed ones the task asks for (``_with_endings``) and the
    recipes that hold them. A recipe that appends cron lines to a file is kept only for
    a task that names a cron file, one that selects a sort of file ("the pictures") only
    for a task that says that sort (``fitness.sort_unsaid``), and one that runs a file the
    task names only for a task that asks to run something (``fitness.runs_unasked``)."""
    ranked = shelf.ranker.rank(text, limit=max(shelf.offered, POOL), asked=asked)
    usable = _askable(ranked, shelf.recipes, reading)
    if not shelf.shapes or (usable and shelf.recipes[usable[0].name].taught):
        # what the user taught this request to mean is not composed over
        return shelf.recipes, usable
    recipes, usable = _turned_around(shelf.recipes, usable, reading)
    return _with_endings(shelf, recipes, usable, reading)


def _turned_around(
    recipes: Mapping[str, Recipe], ranked: list[Candidate], reading: TaskReading
) -> tuple[Mapping[str, Recipe], list[Candidate]]:
    """For a task that says a property the files must not have ("which scripts can't be
    executed": the reading's ``unwanted``), each selection that narrows by it turned
    around in its place (``compose.negated``): the plain one lists the opposite."""
    from shellagent.recipes.compose import negated
    from shellagent.recipes.fitness import narrowings

    if not reading.unwanted:
        return recipes, ranked
    turned: dict[str, Recipe] = {}
    result = []
    for candidate in ranked:
        recipe = recipes[candidate.name]
        made = negated(recipe) if narrowings(recipe) & set(reading.unwanted) else None
        if made is None:
            result.append(candidate)
            continue
        turned[made.name] = made
        result.append(replace(candidate, name=made.name))
    return ({**recipes, **turned}, result) if turned else (recipes, ranked)


def _askable(
    ranked: Sequence[Candidate], recipes: Mapping[str, Recipe], reading: TaskReading
) -> list[Candidate]:
    """The candidates of ``ranked`` the task ``reading`` could be asking for (see
    ``_ranked``; nor one that keeps to a property the task says the files must not have:
    ``fitness.keeps_the_unwanted``)."""
    from shellagent.recipes.fitness import keeps_the_unwanted, runs_unasked, sort_unsaid
    from shellagent.recipes.recurrence import names_cron_file, writes_cron_lines

    cron_file = names_cron_file(reading.text)
    return [
        c
        for c in ranked
        if c.name in recipes
        and (cron_file or not writes_cron_lines(recipes[c.name]))
        and not sort_unsaid(recipes[c.name], reading)
        and not runs_unasked(recipes[c.name], reading)
        and not keeps_the_unwanted(recipes[c.name], reading)
    ]


def ranked_with_reason(
    ranker: Ranker,
    recipes: Mapping[str, Recipe],
    values: TaskValues,
    reason: str,
    *,
    shapes: bool = True,
) -> list[Candidate]:
    """The recipes for the task of ``values`` and a refusal's ``reason`` read together,
    kept and scored as the shortlist keeps and scores them (``_askable``, the shape
    penalties), best first; none when the reason says only no ("that is not what I
    asked": lexicon ``requests.bare_no``), whose words would rank recipes about asking."""
    from shellagent.recipes.fitness import rerank
    from shellagent.recipes.lexicon import lexicon

    if lexicon()["requests.bare_no"].says(reason):
        return []
    reading = values.reading
    ranked = ranker.rank(
        f"{reading.text} {reason}", limit=POOL + 6, asked=f"{reading.request} {reason}"
    )
    usable = _askable(ranked, recipes, reading)
    return rerank(usable, recipes, values) if shapes else usable


def _fields_marked(reading: TaskReading, values: TaskValues) -> tuple[str, str]:
    """The task and its request with each column or key it says of a file it names
    marked as the phrasings' ``{field}`` is ("What version qfield is the project at,
    according to its package.json?"); as they are when it says none."""
    from shellagent.recipes.rank import FIELD

    return reading.marked(values.fields, FIELD)


def make_offer(recipe: Recipe, values: TaskValues) -> Offer:
    """``recipe`` as the model is offered it: each slot with the values the task names
    for it, best first."""
    from shellagent.recipes.recurrence import names_cron_file, writes_cron_lines
    from shellagent.recipes.values import listed_folders, slot_candidates

    found = slot_candidates(
        [(name, slot.type, slot.choices) for name, slot in recipe.slots.items()], values
    )
    folders = listed_folders(values)
    for candidates, slot in zip(found, recipe.slots.values(), strict=True):
        if slot.type == "file" and slot.default is not None:
            # a file slot with a default ("SHA256SUMS") is never given a folder
            candidates[:] = [c for c in candidates if c not in folders]
        if slot.numbers:  # a sum's column: those that hold numbers first
            candidates.sort(key=lambda c: c not in values.number_fields)
        if slot.type == "output" and writes_cron_lines(recipe):  # never into a data file
            candidates[:] = [c for c in candidates if names_cron_file(c)]
    _default_destination(recipe, found)
    slots = tuple(
        offer_slot(name, slot.type, candidates, slot.default, slot.choices, slot.help)
        for (name, slot), candidates in zip(recipe.slots.items(), found, strict=True)
    )
    return Offer(recipe.name, recipe.summary, slots)


_DESTINATION_SLOTS = ("dest", "destination", "target")


def _default_destination(recipe: Recipe, found: list[list[str]]) -> None:
    """A destination slot with a default is offered the default first when the task names
    no destination ("back up Documents weekly": its first candidate is then the folder to
    back up, and an archive of Documents would go into Documents)."""
    slots = list(recipe.slots.items())
    sources = {
        c[0].rstrip("/").rsplit("/", 1)[-1]
        for (name, slot), c in zip(slots, found, strict=True)
        if c and name not in _DESTINATION_SLOTS and slot.type in ("dir", "file", "path")
    }
    for (name, slot), candidates in zip(slots, found, strict=True):
        if name not in _DESTINATION_SLOTS or slot.default is None or not candidates:
            continue
        if candidates[0].rstrip("/").rsplit("/", 1)[-1] in sources:
            candidates.insert(0, str(slot.default))
