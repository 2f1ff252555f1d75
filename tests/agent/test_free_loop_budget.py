"""The free loop's budget where nothing progresses (``agent/progress.py``): a small model's
free loop ends at a turn that shows no progress, not claimed, saying what that turn did;
a turn that printed something new keeps it going; a user's refusal is no stall; a model
that writes commands well keeps the ordinary limits. Scripted model, real sandbox."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from shellagent.agent import (
    AgentConfig,
    AutoApprover,
    Hooks,
    Oversight,
    Parts,
    Recording,
    RefuseApprover,
    run_task,
)
from shellagent.agent.recipe_step import RecipeBook
from shellagent.events import End, Execution
from shellagent.policy import PolicyEngine
from shellagent.recipes import load
from shellagent.recipes.rank import Ranker
from shellagent.sandbox import Sandbox, get_profile
from shellagent.testing import MemorySink, ScriptedBackend

from .conftest import cmd
from .test_recipe_step import RECIPES


@pytest.fixture(scope="module")
def nothing_fits(tmp_path_factory: pytest.TempPathFactory) -> RecipeBook:
    folder = tmp_path_factory.mktemp("recipes")
    (folder / "test.toml").write_text(RECIPES)
    recipes = dict(load([folder]).recipes)
    book = RecipeBook(recipes, Ranker.train(list(recipes.values())))
    return replace(book, fits=99.0)  # no score reaches it: straight to the free loop


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "work"
    ws.mkdir()
    (ws / "notes.txt").write_text("one\ntwo\nthree\n")
    return ws


@pytest.fixture
def sandbox(workspace: Path) -> Iterator[Sandbox]:
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as session:
        yield session


def run(
    replies: list[str],
    shell: Any,
    book: RecipeBook,
    workspace: Path,
    *,
    approver: Any = None,
    writes_commands: bool = False,
    **config: Any,
) -> tuple[Any, MemorySink, ScriptedBackend]:
    backend = ScriptedBackend(replies, writes_commands=writes_commands)
    sink = MemorySink()
    outcome = run_task(
        "frobnicate the notes",
        Parts(
            backend=backend,
            shell=shell,
            policy=PolicyEngine.load(workspace=workspace),
            config=AgentConfig(examples=0, **config),
            recipes=book,
        ),
        Oversight(approver=approver or AutoApprover()),
        Recording(sink=sink),
        Hooks(cancel=threading.Event()),
    )
    return outcome, sink, backend


def test_a_failed_free_command_ends_the_small_models_loop_at_that_turn(
    nothing_fits: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    outcome, sink, backend = run(
        [cmd("frobnicate --all")] * 3 + ['{"done": "frobnicated"}'],
        sandbox,
        nothing_fits,
        workspace,
    )
    assert [e.command for e in sink.of_type(Execution)] == ["frobnicate --all"]
    assert backend.remaining == 3  # not asked again
    assert outcome.reason == "repeated_failure" and outcome.origin == "free"
    assert not outcome.claimed
    # what the turn did, in plain words, and the next step
    assert "made no progress: `frobnicate --all` failed (exit 127" in outcome.summary
    assert "command not found" in outcome.summary
    assert "shellagent model pull" in outcome.summary
    assert outcome.ran.startswith("`frobnicate --all` failed")
    end = sink.of_type(End)[0]
    assert end.claimed is False and end.summary == outcome.summary


def test_turns_that_print_something_new_go_on_to_the_models_done(
    nothing_fits: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    outcome, sink, _ = run(
        [cmd("ls"), cmd("wc -l notes.txt"), '{"done": "3 lines"}'],
        sandbox,
        nothing_fits,
        workspace,
    )
    assert [e.command for e in sink.of_type(Execution)] == ["ls", "wc -l notes.txt"]
    assert outcome.reason == "finished" and outcome.summary == "3 lines"


def test_the_same_command_printing_the_same_again_is_no_progress(
    nothing_fits: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    outcome, sink, _ = run(
        [cmd("ls"), cmd("ls"), '{"done": "notes.txt"}'], sandbox, nothing_fits, workspace
    )
    assert [e.command for e in sink.of_type(Execution)] == ["ls", "ls"]
    assert outcome.reason == "repeated_failure"
    assert "`ls` printed the same as before" in outcome.summary


def test_a_progressing_turn_resets_the_count_under_a_larger_limit(
    nothing_fits: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    replies = [cmd("frobnicate"), cmd("ls"), cmd("frobnicate -v"), cmd("wc -l notes.txt")]
    outcome, sink, _ = run(
        [*replies, '{"done": "3 lines"}'], sandbox, nothing_fits, workspace, stall_limit=2
    )
    assert len(sink.of_type(Execution)) == 4
    assert outcome.reason == "finished"
    # two in a row do end it
    outcome, sink, _ = run(
        [cmd("frobnicate"), cmd("frobnicate -v"), cmd("ls"), '{"done": "x"}'],
        sandbox,
        nothing_fits,
        workspace,
        stall_limit=2,
    )
    assert [e.command for e in sink.of_type(Execution)] == ["frobnicate", "frobnicate -v"]
    assert outcome.reason == "repeated_failure"
    assert "`frobnicate -v` failed" in outcome.summary


def test_a_path_that_exists_nowhere_is_a_turn_without_progress(
    nothing_fits: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    outcome, sink, _ = run(
        [cmd("cat /opt/yarrow/current.log")] * 3, sandbox, nothing_fits, workspace
    )
    assert sink.of_type(Execution) == []
    assert outcome.reason == "repeated_failure"
    assert "`cat /opt/yarrow/current.log` was not run: /opt/yarrow/current.log" in outcome.summary


def test_a_denied_free_command_ends_on_what_the_policy_does_not_allow(
    nothing_fits: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    outcome, sink, backend = run([cmd("rm -rf /")] * 3, sandbox, nothing_fits, workspace)
    assert sink.of_type(Execution) == [] and backend.remaining == 2
    assert outcome.summary.startswith("the policy does not allow `rm -rf /`"), outcome.summary
    assert "No recipe fits" not in outcome.summary


def test_a_refusal_is_the_users_choice_not_a_stall(
    nothing_fits: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    outcome, sink, _ = run(
        [cmd("rm notes.txt"), cmd("wc -l notes.txt"), '{"done": "3 lines"}'],
        sandbox,
        nothing_fits,
        workspace,
        approver=RefuseApprover(),
    )
    assert [e.command for e in sink.of_type(Execution)] == ["wc -l notes.txt"]
    assert outcome.reason == "finished"
    assert (workspace / "notes.txt").exists()


def test_a_model_that_writes_commands_keeps_the_ordinary_limits(
    nothing_fits: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    outcome, sink, _ = run(
        [cmd("frobnicate --all")] * 3,
        sandbox,
        nothing_fits,
        workspace,
        writes_commands=True,
    )
    assert len(sink.of_type(Execution)) == 3
    assert outcome.reason == "repeated_failure"
    assert "failed 3 times" in outcome.error


def test_no_limit_keeps_the_small_model_going_to_the_repeat_limit(
    nothing_fits: RecipeBook, sandbox: Sandbox, workspace: Path
) -> None:
    outcome, sink, _ = run(
        [cmd("frobnicate --all")] * 3, sandbox, nothing_fits, workspace, stall_limit=0
    )
    assert len(sink.of_type(Execution)) == 3
    assert "failed 3 times" in outcome.error
