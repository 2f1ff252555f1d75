"""A correction the user confirms is learned at once, through the real daemon: a command
edited at the approval prompt (e), or typed after refusing (n, n, then e), that did the task
("did that do it?" y) becomes what the request runs next time, with one line saying so and
how to forget it; ``ask.learn = false`` learns nothing."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.events import Note
from shellagent.recipes import load, recipe_toml
from shellagent.recipes.taught import taught_path
from tests.daemon.conftest import DaemonProc, Run, ask_inprocess, cmd, done, write_config
from tests.recipes.test_learn import SHELF, answer, book_of

TASK = "how many lines are in ./notes.txt"
TYPED = "wc -l < ./notes.txt"
CLEAR = "\x01\x0b"  # Ctrl-A, Ctrl-K: the pre-filled command is gone


@pytest.fixture(autouse=True)
def confirm_on(no_confirm_question: Path) -> None:
    write_config("")  # the defaults: "did that do it?" is asked, learning is on


@pytest.fixture
def notes(workdir: Path) -> Path:
    (workdir / "notes.txt").write_text("one\ntwo\n")
    (workdir / "todo.txt").write_text("a\nb\nc\n")
    return workdir


def learned_line(run: Run) -> str:
    said = [n.message for n in run.of(Note) if n.message.startswith("learned:")]
    assert len(said) == 1, said
    return said[0]


def test_an_edited_command_confirmed_is_learned_and_a_paraphrase_runs_it_with_new_values(
    daemon: DaemonProc, script: Callable[..., str], notes: Path, tmp_path: Path
) -> None:
    model = script(cmd("rm -f notes.txt"), done("notes.txt has 2 lines"))
    keys = ["e", CLEAR + TYPED + "\r", "y"]
    run = ask_inprocess(TASK, model, notes, keys=keys)
    assert run.summary.commands == (TYPED,) and run.summary.verdict == "confirmed"
    line = learned_line(run)
    name = re.search(r"`shellagent recipes rm (\w+)`", line)
    assert name is not None and TASK in line
    assert "recipes add --from" not in run.summary.advice  # no second note about keeping it
    everything = load().recipes
    learned = everything[name.group(1)]
    assert learned.taught and learned.slots[next(iter(learned.slots))].default == "./notes.txt"
    # Next time: the request in other words, with another file. The test shelf stands for
    # the shipped recipes; when the command was one of theirs, that one is on it too.
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    extra = recipe_toml(everything[learned.base]) if learned.base else ""
    (shelf / "test.toml").write_text(SHELF + "\n" + extra)
    ran = answer("count the lines of ./todo.txt, please", book_of(shelf), notes)
    assert ran[0] == "wc -l < ./todo.txt"


def test_a_command_typed_after_refusing_is_learned_too(
    daemon: DaemonProc, script: Callable[..., str], notes: Path
) -> None:
    model = script(cmd("rm -f notes.txt"), cmd("mv notes.txt /tmp/"), done("2 lines"))
    keys = ["n", "\r", "n", "e", CLEAR + TYPED + "\r", "y"]
    run = ask_inprocess(TASK, model, notes, keys=keys)
    assert run.summary.commands == (TYPED,)
    learned_line(run)
    assert "./notes.txt" in taught_path().read_text()


def test_nothing_is_learned_unless_the_user_says_it_did_it(
    daemon: DaemonProc, script: Callable[..., str], notes: Path
) -> None:
    for answer_key in ("n", "s"):
        model = script(cmd("rm -f notes.txt"), done("2 lines"))
        run = ask_inprocess(TASK, model, notes, keys=["e", CLEAR + TYPED + "\r", answer_key])
        assert run.summary.commands == (TYPED,)
        assert not [n for n in run.of(Note) if "learned" in n.message]
    assert not taught_path().exists()


def test_learning_can_be_switched_off(
    daemon: DaemonProc, script: Callable[..., str], notes: Path
) -> None:
    write_config("[ask]\nlearn = false\n")
    model = script(cmd("rm -f notes.txt"), done("2 lines"))
    run = ask_inprocess(TASK, model, notes, keys=["e", CLEAR + TYPED + "\r", "y"])
    assert run.summary.verdict == "confirmed"
    assert not [n for n in run.of(Note) if "learned" in n.message]
    assert not taught_path().exists()


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped recipes' ranker, trained once (what `shellagent recipes index` does)."""
    from shellagent.recipes import DATA_DIR
    from shellagent.recipes.rank import Ranker

    cache = tmp_path_factory.mktemp("ranker")
    Ranker.build(list(load([DATA_DIR]).recipes.values()), cache)
    return cache


@pytest.mark.slow
def test_an_alternative_picked_and_confirmed_is_learned_for_the_request(
    trained: Path, daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    import json
    import os
    import shutil

    from shellagent.events import ChoiceRequest
    from shellagent.recipes.rank import Ranker

    shutil.copytree(trained, os.environ["SHELLAGENT_CACHE_DIR"], dirs_exist_ok=True)
    write_config('[ask]\nrecipes = "auto"\n')
    (workdir / "docs").mkdir()
    for name in ("a.txt", "b.txt"):
        (workdir / "docs" / name).write_text("x\n")
    reply = json.dumps({"use": "list_tree", "args": {"dir": "docs"}})
    task = "give me the docs listing by date"
    run = ask_inprocess(task, script(reply, done("x")), workdir, keys=["1", "y"])
    [choice] = run.of(ChoiceRequest)
    picked = choice.alternatives[0]
    assert run.summary.verdict == "confirmed"
    line = learned_line(run)
    forget = re.search(r"`shellagent recipes rm (\w+)`", line)
    assert forget is not None
    learned = load().recipes[forget.group(1)]
    assert picked.recipe in (learned.base, learned.name.removeprefix("my_"))
    ranker = Ranker.cached(list(load().recipes.values()), Path(os.environ["SHELLAGENT_CACHE_DIR"]))
    assert ranker is not None
    assert ranker.rank(task)[0].name == learned.name
