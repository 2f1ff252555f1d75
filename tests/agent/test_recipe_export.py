"""A session the recipe step answered exports as the recipe step asked it: its own prompt
(``recipe_prompt.prompt``: the offered recipe and the task's values), then the ``use``
reply, never under the free loop's system prompt. Sessions run for real (the sandbox, the
policy, the transcript file) with a scripted model; the free loop's export stays the
conversation the model was sent, and a file written before the prompt was recorded
exports as it always did."""

from __future__ import annotations

import io
import json
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from shellagent.agent import AgentConfig, AutoApprover, Hooks, Oversight, Parts, Recording, run_task
from shellagent.agent.recipe_prompt import prompt
from shellagent.agent.recipe_step import RecipeBook
from shellagent.events import ChatMessage, ModelTurn
from shellagent.policy import PolicyEngine
from shellagent.recipes import load
from shellagent.recipes.listing import read_only, read_values
from shellagent.recipes.rank import Ranker
from shellagent.recipes.reading import read_task
from shellagent.recipes.shortlist import shortlist
from shellagent.sandbox import Sandbox, get_profile
from shellagent.testing import ScriptedBackend
from shellagent.transcript import TranscriptWriter, read_transcript
from shellagent.transcript.export import export

from .conftest import cmd, done
from .test_recipe_step import RECIPES, use


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> RecipeBook:
    folder = tmp_path_factory.mktemp("recipes")
    (folder / "test.toml").write_text(RECIPES)
    recipes = dict(load([folder]).recipes)
    return RecipeBook(recipes, Ranker.train(list(recipes.values())))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "work"
    (ws / "big").mkdir(parents=True)
    (ws / "big" / "huge.bin").write_bytes(b"x" * 5000)
    (ws / "big" / "tiny.txt").write_text("x\n")
    (ws / "notes.txt").write_text("one\ntwo\nthree\n")
    return ws


def recorded_run(
    task: str, replies: list[Any], book: RecipeBook, workspace: Path, tmp_path: Path
) -> tuple[Path, ScriptedBackend]:
    """Run ``task`` in a real sandbox, recorded to a transcript file; the file and the
    scripted model (``calls``: the messages it was sent)."""
    backend = ScriptedBackend(replies)
    writer = TranscriptWriter(directory=tmp_path / "transcripts", fsync=False)
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as shell:
        run_task(
            task,
            Parts(
                backend=backend,
                shell=shell,
                policy=PolicyEngine.load(workspace=workspace),
                config=AgentConfig(examples=0),
                recipes=book,
            ),
            Oversight(approver=AutoApprover()),
            Recording(sink=writer),
            Hooks(cancel=threading.Event()),
        )
    writer.close()
    return writer.path, backend


def exported(fmt: str, path: Path) -> list[dict[str, Any]]:
    out = io.StringIO()
    export(fmt, [read_transcript(path)], out, only_successful=False)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_recipe_answer_exports_as_the_recipe_step_asked_it(
    book: RecipeBook, workspace: Path, tmp_path: Path
) -> None:
    task = "which 1 files in big are the largest"
    reply = use("largest_files", dir="big", count="1")
    path, backend = recorded_run(task, [reply], book, workspace, tmp_path)
    # the messages the recipe step sends, built again by the same function from the same
    # shortlist (the task's values read from the same directory)
    reading = read_task(task)
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as shell:
        chosen = shortlist(
            book, reading, lambda: read_values(reading, lambda c: read_only(shell, c))
        )
    assert chosen is not None and chosen.confident
    asked = prompt(task, chosen.offers)
    assert backend.calls == [asked]  # what the model was sent

    [record] = exported("sft", path)
    assert record["messages"] == [*asked, {"role": "assistant", "content": reply}]
    free_system = read_transcript(path).of_type(ChatMessage)[0]
    assert free_system.role == "system"
    assert free_system.content not in [m["content"] for m in record["messages"]]

    [rl] = exported("rl", path)
    assert rl["prompt"] == asked
    assert rl["turns"][0]["prompt"] == asked
    assert rl["completion"][0] == {"role": "assistant", "content": reply}


def test_a_free_loop_session_exports_the_conversation_the_model_was_sent(
    book: RecipeBook, workspace: Path, tmp_path: Path
) -> None:
    """No recipe fits: the reader's note that the model writes the commands from here is
    in the file, and in no export (the model never saw it)."""
    replies = [cmd("printf 'x\\n' > made.txt"), done("made it")]
    strict = replace(book, fits=99.0)  # nothing reaches this score
    path, backend = recorded_run(
        "make a file called made.txt", replies, strict, workspace, tmp_path
    )
    notes = [
        e
        for e in read_transcript(path).events
        if getattr(e, "role", "") == "system" and getattr(e, "turn", None) is not None
    ]
    assert notes  # the premise: the recipe step left a note
    [record] = exported("sft", path)
    assert record["messages"] == [*backend.calls[-1], {"role": "assistant", "content": replies[-1]}]
    assert all(t.prompt == () for t in read_transcript(path).of_type(ModelTurn))
    [rl] = exported("rl", path)
    assert rl["prompt"] == backend.calls[0]
    assert [t["prompt"] for t in rl["turns"]] == [None, None]


def test_a_transcript_written_before_the_prompt_was_recorded_exports_as_before(
    book: RecipeBook, workspace: Path, tmp_path: Path
) -> None:
    task = "which 1 files in big are the largest"
    reply = use("largest_files", dir="big", count="1")
    path, _ = recorded_run(task, [reply], book, workspace, tmp_path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        line.pop("prompt", None)
    old = tmp_path / "old" / path.name
    old.parent.mkdir()
    old.write_text("".join(json.dumps(line) + "\n" for line in lines))
    [record] = exported("sft", old)
    opening = [
        {"role": m["role"], "content": m["content"]} for m in lines if m["type"] == "message"
    ]
    # the free loop's opening, then the reply: what every export before this one wrote
    assert record["messages"] == [*opening[:2], {"role": "assistant", "content": reply}]
