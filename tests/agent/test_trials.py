"""Trying before showing runs only what may run unseen (review 3, M1 and M2): a rendering
is judged in the session's real state, a command the shell would run as one of its own
functions is never tried, nor a writer with effects beyond files, nor a user's own recipe
that writes."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from shellagent.agent import (
    AgentConfig,
    Hooks,
    Oversight,
    Parts,
    Recording,
    RefuseApprover,
    run_task,
)
from shellagent.agent.recipe_step import RecipeBook
from shellagent.agent.trying import triable
from shellagent.events import ModelTurn
from shellagent.policy import PolicyEngine, ShellState
from shellagent.recipes import Recipe, load, user_dir
from shellagent.recipes.rank import Ranker
from shellagent.sandbox import Sandbox, get_profile
from shellagent.testing import MemorySink, ScriptedBackend

RECIPE = """
area = "files"

[[recipe]]
name = "{name}"
summary = "sort the lines of a file"
kind = "question"
phrasings = ["sort the lines of {{file}}", "put {{file}} in order", "order the lines of {{file}}",
  "alphabetise {{file}}", "sorted lines of {{file}}"]
templates = ["sort {{file}}"]
[recipe.slots]
file = {{ type = "file" }}

[[recipe]]
name = "{name}_copy"
summary = "copy a file"
kind = "action"
phrasings = ["copy {{file}} to {{dest}}", "duplicate {{file}} as {{dest}}",
  "make a copy of {{file}}", "copy the file {{file}}", "back up {{file}} to {{dest}}"]
templates = ["cp {{file}} {{dest}}"]
[recipe.slots]
file = {{ type = "file" }}
dest = {{ type = "path" }}
"""


def recipes(folder: Path, name: str = "lines") -> dict[str, Recipe]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "t.toml").write_text(RECIPE.format(name=name))
    catalog = load([folder])
    assert not catalog.problems, catalog.problems
    return dict(catalog.recipes)


def test_only_what_may_run_unseen_is_tried(tmp_path: Path) -> None:
    shipped = recipes(tmp_path / "shipped")
    mine = recipes(user_dir(), "mine")
    policy = PolicyEngine.load(workspace=tmp_path)
    none: frozenset[str] = frozenset()
    read = policy.check("sort notes.txt", ShellState(cwd=tmp_path))
    copy = policy.check("cp notes.txt notes.bak", ShellState(cwd=tmp_path))
    fetch = policy.check("curl -o x.html https://example.org", ShellState(cwd=tmp_path))
    assert triable(shipped["lines"], read, none)
    assert triable(shipped["lines_copy"], copy, none)  # a file change, tried on a copy
    assert not triable(shipped["lines_copy"], fetch, none)  # the network: never unseen
    assert not triable(mine["mine_copy"], copy, none)  # the user's recipe that writes
    assert triable(mine["mine"], read, none)  # … unless it is read-only
    assert not triable(shipped["lines"], read, frozenset({"sort"}))  # the session's function


def test_a_session_function_named_like_the_program_never_runs_in_a_trial(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("b\na\n")
    marker = work / "ran"
    book = RecipeBook(
        recipes(tmp_path / "r"),
        Ranker.train(list(recipes(tmp_path / "r").values())),
        confident=99.0,  # unsure: the renderings are tried before one is shown
        fits=-99.0,
    )
    sink = MemorySink()
    with Sandbox(get_profile("default", cwd=work), timeout=10) as shell:
        shell.run(f"sort() {{ echo pwned > {marker}; }}")  # an earlier command's function
        assert "sort" in shell.functions
        run_task(
            "sort the lines of notes.txt",
            Parts(
                backend=ScriptedBackend(
                    ['{"use": "lines", "args": {"file": "notes.txt"}}', '{"done": "x"}']
                ),
                shell=shell,
                policy=PolicyEngine.load(workspace=work),
                config=AgentConfig(examples=0, max_turns=2),
                recipes=book,
            ),
            Oversight(approver=RefuseApprover()),  # the real run is refused when asked
            Recording(sink=sink),
            Hooks(cancel=threading.Event()),
        )
    assert not marker.exists()
    record = sink.of_type(ModelTurn)[0].action
    assert record is not None
    tried = json.loads(record["tried"])
    assert tried and all(t["exit_code"] is None for t in tried)  # judged, never run


@pytest.fixture(autouse=True)
def _no_leftover_user_recipes() -> None:
    for path in user_dir().glob("*.toml"):
        path.unlink()


def _ran(output: str = "", exit_code: int = 0, changed: tuple[str, ...] | None = None) -> Any:
    from shellagent.agent.trial import TriedOnACopy
    from shellagent.sandbox import CommandResult

    if changed is None:
        return CommandResult("c", output, exit_code, 0.01)
    return TriedOnACopy("c", output, exit_code, 0.01, changed=changed)


def _tried(name: str, result: Any, read_only: bool = True) -> Any:
    from shellagent.agent.trying import Tried

    return Tried(name, {}, "c", result, 1.0, read_only)


def test_renderings_agree_only_when_each_that_ran_did_exactly_the_same() -> None:
    from shellagent.agent.trying import agreed

    moved = ("deleted:a.png", "dir:Pictures", "file:Pictures/a.png:3:ab")
    mine = _tried("move_by_extension", _ran(changed=moved), read_only=False)
    same = _tried("files_under_then_move", _ran(changed=moved), read_only=False)
    other = _tried("copy_by_extension", _ran(changed=moved[1:]), read_only=False)
    failed = _tried("broken", _ran("find: x: No such file", 1))
    untried = _tried("unknown", None)
    assert agreed(mine, [same])
    assert agreed(mine, [same, failed])  # a rendering that failed is no other reading
    assert not agreed(mine, [same, other])
    assert not agreed(mine, [same, untried])  # not known what it would have done
    assert not agreed(mine, [failed])  # nothing else did it
    nothing = _tried("noop", _ran(changed=()), read_only=False)
    assert not agreed(nothing, [_tried("noop2", _ran(changed=()), read_only=False)])
    # questions: the same output
    answer = _tried("newest_file", _ran("b.pdf\n"))
    assert agreed(answer, [_tried("files_under_newest", _ran("b.pdf"))])
    assert not agreed(answer, [_tried("oldest_file", _ran("a.ods\n"))])
