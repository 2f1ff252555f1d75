"""The recipe step's evidence, gathered in the session's shell: whether to claim a result.

``agent/confidence.py`` weighs what was observed; this module observes it. Before a
recipe's action runs, the places it may touch are listed (``Watch``); after it ran, they
are listed again and compared, an archive it made is listed, and a question's output is
read, each against what the task asks (``expected``). Every listing is a read-only command
run confined in the session's own shell, so it sees what the command saw. When the result
is not claimed, the next recipes that fit are filled and offered (``alternatives``): a
read-only one is tried at once (confined, judged in the session's real state), so its
output can be shown beside it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shellagent.agent.confidence import (
    Confidence,
    Doubt,
    Expected,
    Ranking,
    Snapshot,
    action_doubts,
    archive_command,
    deeper_command,
    files_command,
    limit_doubts,
    nothing_counted,
    question_doubts,
    ranking_doubts,
    read_snapshot,
    says,
    shallow,
    snapshot_command,
    unsaid_doubts,
    unused_names,
)
from shellagent.agent.session import SessionState, in_subshell, shell_state
from shellagent.errors import ShellagentError
from shellagent.events import Alternative

if TYPE_CHECKING:
    from shellagent.recipes import Recipe
    from shellagent.recipes.rank import Candidate
    from shellagent.recipes.values import TaskValues
    from shellagent.sandbox import CommandResult

__all__ = ["ALTERNATIVES", "Watch", "alternatives", "expected", "judge", "ranking"]

ALTERNATIVES = 3
# The ranker's score (after the shapes) below which a result is never claimed: the score
# that says a recipe fits at all (``recipe_step.FITS``), calibrated on the everyday and dev
# sets with bench/claims_bench.py (docs/results.md).
CLAIM_SCORE = -0.6
SAVED = "the answer went into the file as the recipe prints it, a form the task may not want"
# how much of an alternative's tried output is kept to be shown
ALTERNATIVE_OUTPUT = 600
_PATH_TYPES = ("dir", "file", "path", "output", "archive")
_FILE_NAME = re.compile(r"[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,5}")


def expected(values: TaskValues) -> Expected:
    """What the task asks of a result, from what it names (``values``) and its reading."""
    task = values.reading.text
    # what the task says itself: a path it spells out, or a name the listing found ("app.log"
    # for projects/webshop/app.log) — folders it names only by a word are not held to this,
    # nor an example it gives ("names like 'backup_2024-05-20.tar.gz'", "e.g. 644")
    named = [
        p
        for p in values.paths
        if not _example(task, p)
        and (
            (p in task and (p.startswith(("/", "~")) or "." in p))
            or (_FILE_NAME.fullmatch(_base(p)) and _base(p) in task)
        )
    ]
    listed = {e.rstrip("/") for e in values.listing if e.endswith("/")}
    folders = [
        p
        for p in values.paths
        if p in task
        and p.startswith(("/", "~"))
        and (
            p.endswith("/")
            or _base(p) in HOME_FOLDERS
            or p.rstrip("/") in listed
            or f"./{p.rstrip('/')}" in listed
        )
    ]
    reading = values.reading
    limits = [(q.measure, str(q)) for q in (*reading.ages, *reading.size_limits) if q.direction]
    # the space one thing takes in all: not "the largest folder", nor "how big are the logs"
    things = [p for p in (*reading.dirs, *reading.files) if p != reading.output]
    whole = reading.total == "size" and not reading.superlative and reading.one is not False
    return Expected(
        count=values.reading.count,
        limits=tuple(dict.fromkeys(limits)),
        named=tuple(dict.fromkeys(named)),
        kinds=values.exts,
        folders=tuple(dict.fromkeys(folders)),
        size_of=things[0] if whole and len(things) == 1 else "",
        pick_exts=reading.kind_exts if reading.superlative in _FILE_SUPERLATIVES else (),
        sum=reading.total == "sum",
        at_most=reading.ranked,
        amounts={
            "days": tuple(map(str, reading.days)),
            "minutes": tuple(map(str, reading.minutes)),
            "size": reading.sizes,
        },
        top_level=reading.top_level,
        said=reading.text.lower(),
    )


# the superlatives that pick files ("the most" and "the least" rank lines, words, users …)
_FILE_SUPERLATIVES = frozenset({"largest", "smallest", "newest", "oldest", "longest", "shortest"})


# Folders of a home that are folders whatever the task says of them ("put a copy in
# ~/Desktop": made as a file named Desktop, it is not what was asked).
HOME_FOLDERS = frozenset(
    {"Desktop", "Documents", "Downloads", "Pictures", "Music", "Videos", "Public", "Templates"}
    | {"Backups", "backups", "bin", "projects", "Projects", "tmp"}
)
_EXAMPLE = re.compile(r"(?:\blike|\be\.g\.?,?|\bi\.e\.?,?|\bsuch as)\s*['\"`(]?\s*$", re.I)


def _example(task: str, name: str) -> bool:
    """Whether ``name`` is only an example the task gives, not a thing it names."""
    if name.rstrip(".").lower() in ("e.g", "i.e", "etc"):
        return True
    at = task.find(name)
    return at >= 0 and bool(_EXAMPLE.search(task[max(0, at - 30) : at]))


def ranking(
    usable: Sequence[Candidate],
    name: str,
    *,
    confident: bool,
    tried: bool = False,
    agreed: bool = False,
) -> Ranking:
    """How the recipe ``name`` was chosen among ``usable`` (best first)."""
    own = next((c for c in usable if c.name == name), None)
    others = [c for c in usable if c.name != name]
    score = own.score if own is not None else float("-inf")
    if not others:
        return Ranking(score, float("inf"), confident, tried, agreed=agreed)
    return Ranking(score, score - others[0].score, confident, tried, others[0].name, agreed)


@dataclass
class Watch:
    """The places a recipe's action may touch, listed before it runs."""

    roots: tuple[str, ...]
    before: Snapshot | None

    @classmethod
    def start(
        cls, state: SessionState, recipe: Recipe, args: Mapping[str, str], wanted: Expected
    ) -> Watch | None:
        """None for a question: it changes nothing to compare."""
        if recipe.kind != "action":
            return None
        roots = [
            _parent_if_missing(value)
            for name, value in args.items()
            if name in recipe.slots and recipe.slots[name].type in _PATH_TYPES and value
        ]
        roots += [_parent(folder) for folder in wanted.folders]
        unique = tuple(dict.fromkeys(r for r in roots if r))
        return cls(unique, _snapshot(state, unique))


def judge(
    state: SessionState,
    recipe: Recipe,
    args: Mapping[str, str],
    result: CommandResult,
    wanted: Expected,
    chosen: Ranking,
    watch: Watch | None,
    *,
    saved: bool = False,
) -> Confidence:
    """Everything observed about ``result``, weighed (``Confidence.claimed``). ``saved``:
    a question's output went to the file the task named, so nothing was printed."""
    doubts: list[Doubt] = ranking_doubts(chosen, CLAIM_SCORE)
    output = result.output
    home = ""
    if recipe.kind == "question" and saved:
        # measured: half the answers saved this way were in a form the task did not want
        # (sizes in KB, names without their folder, oldest first …); nobody saw them
        doubts.append(Doubt("saved", SAVED))
    elif recipe.kind == "question":
        doubts += question_doubts(wanted, output, result.command)
        doubts += _nothing_matched(state, recipe, args, wanted, result)
        doubts += _only_the_top(state, recipe, args, wanted, result)
    elif watch is not None and watch.before is not None:
        after = _snapshot(state, watch.roots)
        if after is not None:
            home = after.home
            made = _archive(state, recipe, args)
            doubts += action_doubts(wanted, recipe.area, watch.before, after, made)
    doubts += unused_names(wanted, result.command, output, home)
    doubts += limit_doubts(wanted, result.command)
    types = {n: s.type for n, s in recipe.slots.items()}
    doubts += unsaid_doubts(types, args, wanted.amounts, wanted.said)
    return Confidence(chosen, tuple(doubts))


def alternatives(
    state: SessionState,
    book_recipes: Mapping[str, Recipe],
    usable: Sequence[Candidate],
    fill: Callable[[Recipe], tuple[str, Mapping[str, str]] | None],
    ran: str,
) -> tuple[Alternative, ...]:
    """The next recipes that fit, filled with the task's first values: up to
    ``ALTERNATIVES`` that render and that the policy does not deny, each in plain words.
    A read-only one is tried at once (confined, in a subshell, judged in the session's
    real state), so what it prints can be shown beside it. ``fill`` renders a recipe with
    the task's first values (None when it cannot be filled)."""
    found: list[Alternative] = []
    seen = {ran}
    for candidate in usable:
        if len(found) >= ALTERNATIVES or state.cancel.is_set():
            break
        recipe = book_recipes.get(candidate.name)
        if recipe is None or candidate.name in seen:
            continue
        seen.add(candidate.name)
        filled = fill(recipe)
        if filled is None:
            continue
        command, args = filled
        if _effect(command) in {_effect(r) for r in state.refusals}:
            continue  # what the user said no to is no other way, under any recipe's name
        verdict = state.policy.check(command, shell_state(state))
        if verdict.decision == "deny":
            continue
        output: str | None = None
        if verdict.read_only and _first_word(command) not in state.shell.functions:
            wrapped, judged = in_subshell(command, verdict)
            try:
                tried = state.shell.run(
                    wrapped, timeout=state.config.command_timeout, confined=True, judged=judged
                )
            except ShellagentError:
                tried = None
            if tried is not None and not tried.timed_out and tried.exit_code == 0:
                output = tried.output.strip()[:ALTERNATIVE_OUTPUT]
        found.append(Alternative(recipe.name, says(recipe, args), command, output))
    return tuple(found)


# A composed find-then-act prints each file it acts on ("-print -delete"); the recipe it
# was composed like ("find … -delete") does the same to the same files.
_PRINTS_FIRST = re.compile(r"\s-print(?=\s+-(?:delete|exec(?:dir)?)\b)")


def _effect(command: str) -> str:
    """``command`` as far as what it changes goes."""
    return _PRINTS_FIRST.sub("", command.strip())


def _nothing_matched(
    state: SessionState,
    recipe: Recipe,
    args: Mapping[str, str],
    wanted: Expected,
    result: CommandResult,
) -> list[Doubt]:
    """A count of 0 by a selection of names (``*.jpg``) in a folder that holds files: none
    of them matched, the same evidence as a question that printed nothing. A folder with
    no file at all makes 0 the answer."""
    patterns = nothing_counted(wanted, result.command, result.output)
    if not patterns:
        return []
    dirs = [v for n, v in args.items() if n in recipe.slots and recipe.slots[n].type == "dir"]
    folder = next((d for d in dirs if d), ".")
    if not _read(state, files_command(folder)):
        return []
    matched = " and ".join(patterns)
    return [Doubt("empty", f"counted 0: nothing matched {matched} in {folder}, which holds files")]


def _only_the_top(
    state: SessionState,
    recipe: Recipe,
    args: Mapping[str, str],
    wanted: Expected,
    result: CommandResult,
) -> list[Doubt]:
    """A question answered from the top of a folder alone (``find -maxdepth 1``, ``ls``)
    that the request did not limit so, about a folder whose subfolders hold files: the
    answer may lie deeper ("which file in ~/Documents did I change last": a letter in a
    subfolder was newer than any file at the top)."""
    if not shallow(wanted, result.command):
        return []
    dirs = [v for n, v in args.items() if n in recipe.slots and recipe.slots[n].type == "dir"]
    folder = next((d for d in dirs if d), ".")
    if not _read(state, deeper_command(folder)):
        return []
    return [
        Doubt(
            "shallow", f"it looked only at the files directly in {folder}; its subfolders hold more"
        )
    ]


def _snapshot(state: SessionState, roots: Sequence[str]) -> Snapshot | None:
    lines = _read(state, snapshot_command(roots))
    return read_snapshot(lines) if lines else None


def _archive(
    state: SessionState, recipe: Recipe, args: Mapping[str, str]
) -> tuple[str, list[str]] | None:
    """The archive an action made (its ``archive`` slot's value) and what it holds."""
    made = [v for n, v in args.items() if n in recipe.slots and recipe.slots[n].type == "archive"]
    if not made or recipe.area not in ("archives", "backups"):
        return None
    if not any(w in recipe.name for w in ("archive", "tar", "zip", "pack", "backup")):
        return None
    if any(w in recipe.name for w in ("extract", "unpack", "untar", "unzip", "list")):
        return None
    return made[0], _read(state, archive_command(made[0]))


def _read(state: SessionState, command: str) -> list[str]:
    try:
        result = state.shell.run(command, timeout=10, confined=True)
    except ShellagentError:
        return []
    return [] if result.timed_out else result.output.splitlines()


def _first_word(command: str) -> str:
    return command.strip().split(maxsplit=1)[0] if command.strip() else ""


def _base(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _parent(path: str) -> str:
    stripped = path.rstrip("/")
    parent = stripped.rsplit("/", 1)[0] if "/" in stripped else "."
    return parent or "/"


def _parent_if_missing(value: str) -> str:
    """A path an action names: listed itself when it names a file the task may create
    (its folder is then what changes), else itself."""
    return _parent(value) if _FILE_NAME.fullmatch(_base(value)) else value
