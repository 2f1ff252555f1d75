"""A session the recipe step answered exports as the recipe step asked it: its own prompt
(``recipe_prompt.prompt``: the offered recipe and the task's values), then the ``use``
reply, never under the free loop's system prompt. Sessions run for real (the sandbox, the
policy, the transcript file) with a scripted model; the free loop's export stays the
conversation the model was sent, and a file written before the prompt was recorded
exports as it always did."""

from __future__ import annotations

import contextlib
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
from shellagent.testing import FakeShell, ScriptedBackend
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
    task: str,
    replies: list[Any],
    book: RecipeBook,
    workspace: Path,
    tmp_path: Path,
    *,
    shell: Any = None,
    writes_commands: bool = False,
) -> tuple[Path, ScriptedBackend]:
    """Run ``task`` (in a real sandbox unless ``shell`` is given), recorded to a
    transcript file; the file and the scripted model (``calls``: the messages it was
    sent)."""
    backend = ScriptedBackend(replies, writes_commands=writes_commands)
    writer = TranscriptWriter(directory=tmp_path / "transcripts", fsync=False)
    with contextlib.ExitStack() as stack:
        if shell is None:
            shell = stack.enter_context(Sandbox(get_profile("default", cwd=workspace), timeout=10))
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


def test_a_first_values_fill_exports_under_the_prompt_the_step_sends_for_its_recipe(
    book: RecipeBook, workspace: Path, tmp_path: Path
) -> None:
    """Unsure: the model fills the ranker's first, the first values fill it too, and the
    first values' rendering fits better: it is the reply exported, under the prompt the
    model was sent for that recipe."""
    answers = {
        "(\nwc -l < /var/log/other.log\n)": ("wc: /var/log/other.log: No such file\n", 1),
        "(\nwc -l < notes.txt\n)": ("3\n", 0),
        "wc -l < notes.txt": ("3\n", 0),
    }
    fake = FakeShell(answers, default=("", 1), cwd=str(workspace))
    unsure = replace(book, confident=99.0, fits=-99.0)
    task = "how many lines does notes.txt have"
    model = use("count_lines", file="/var/log/other.log")
    path, backend = recorded_run(task, [model], unsure, workspace, tmp_path, shell=fake)
    assert fake.ran[-1] == "wc -l < notes.txt"
    [asked] = backend.calls
    assert asked[0]["content"].count("\n- ") == 1  # one recipe offered: count_lines
    [record] = exported("sft", path)
    first_values = use("count_lines", file="notes.txt")
    assert record["messages"] == [*asked, {"role": "assistant", "content": first_values}]


def test_a_free_loop_after_a_failed_recipe_exports_each_reply_under_what_it_answered(
    book: RecipeBook, workspace: Path, tmp_path: Path
) -> None:
    """The recipe's reply under the recipe step's prompt; the free loop's replies under
    the conversation it was sent, which holds the recipe command's output (told to it)
    and not the recipe's reply (never shown to it)."""
    fake = FakeShell(
        {
            "wc -l < notes.txt": ("bash: notes.txt: Permission denied\n", 1),
            "cat notes.txt | wc -l": ("3\n", 0),
        },
        default=("no such thing\n", 2),
        cwd=str(workspace),
    )
    recipe_reply = use("count_lines", file="notes.txt")
    replies = [recipe_reply, cmd("cat notes.txt | wc -l"), done("3")]
    sure = replace(book, try_uncertain=False)
    path, backend = recorded_run(
        "how many lines are in notes.txt",
        replies,
        sure,
        workspace,
        tmp_path,
        shell=fake,
        writes_commands=True,
    )
    assert fake.ran[-2:] == ["wc -l < notes.txt", "cat notes.txt | wc -l"]
    recipe, free = exported("sft", path)
    assert recipe["messages"] == [*backend.calls[0], {"role": "assistant", "content": recipe_reply}]
    assert free["messages"] == [*backend.calls[-1], {"role": "assistant", "content": replies[-1]}]
    assert recipe_reply not in [m["content"] for m in free["messages"]]
    assert any("Permission denied" in m["content"] for m in free["messages"])
