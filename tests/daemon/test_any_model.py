"""Any model gets the recipes in ``ask``, as in ``eval``: whether the recipe step runs is
the ``ask.recipes`` setting, not the model's name."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.events import ApprovalNeeded, ChoiceRequest, ConfirmRequest, Summary
from shellagent.recipes import DATA_DIR, load
from shellagent.recipes.rank import Ranker
from tests.daemon.conftest import DaemonProc, ask_inprocess, done, transcript_events, write_config

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped recipes' ranker, trained once (what `shellagent recipes index` does)."""
    cache = tmp_path_factory.mktemp("ranker")
    Ranker.build(list(load([DATA_DIR]).recipes.values()), cache)
    return cache


def _origins(session: str) -> list[str]:
    return [
        (e.get("action") or {}).get("origin", "")
        for e in transcript_events(session)
        if e["type"] == "model_turn"
    ]


@pytest.mark.parametrize("setting", ["auto", "off"])
def test_a_served_model_gets_the_recipes_unless_they_are_off(
    setting: str,
    trained: Path,
    daemon: DaemonProc,
    script: Callable[..., str],
    workdir: Path,
) -> None:
    shutil.copytree(trained, os.environ["SHELLAGENT_CACHE_DIR"], dirs_exist_ok=True)
    write_config(f'[ask]\nconfirm = false\nrecipes = "{setting}"\n')
    (workdir / "notes.txt").write_text("one\ntwo\nthree\n")
    reply = json.dumps({"use": "line_count", "args": {"file": "notes.txt"}})
    run = ask_inprocess("count the lines of notes.txt", script(reply, done("3")), workdir)
    origins = _origins(run.summary.session)
    if setting == "auto":
        assert origins[0] == "recipe"
        assert run.summary.summary.strip().startswith("3")
    else:
        assert "recipe" not in origins  # the model's own commands only


def _recipes_on(trained: Path) -> None:
    shutil.copytree(trained, os.environ["SHELLAGENT_CACHE_DIR"], dirs_exist_ok=True)
    write_config('[ask]\nconfirm = false\nrecipes = "auto"\n')


def _turns(session: str) -> list[dict[str, str]]:
    return [
        e["action"] for e in transcript_events(session) if e["type"] == "model_turn" and e["action"]
    ]


def test_an_unsure_answer_offers_the_next_recipes_and_one_key_runs_one(
    trained: Path, daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    _recipes_on(trained)
    (workdir / "docs").mkdir()
    for name in ("a.txt", "b.txt"):
        (workdir / "docs" / name).write_text("x\n")
    reply = json.dumps({"use": "list_tree", "args": {"dir": "docs"}})
    run = ask_inprocess(
        "give me the docs listing by date", script(reply, done("x")), workdir, keys=["1"]
    )
    [choice] = run.of(ChoiceRequest)
    assert choice.ran and choice.doubts and choice.alternatives
    picked = choice.alternatives[0]
    turns = _turns(run.summary.session)
    assert turns[-1]["use"] == picked.recipe and "(your pick)" in turns[-1]["why"]
    assert run.summary.commands[-1] == picked.command
    assert "not sure this is what you asked" in run.out


def test_nobody_picks_for_an_unattended_run(
    trained: Path, daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    _recipes_on(trained)
    (workdir / "docs").mkdir()
    (workdir / "docs" / "a.txt").write_text("x\n")
    reply = json.dumps({"use": "list_tree", "args": {"dir": "docs"}})
    run = ask_inprocess("give me the docs listing by date", script(reply, done("x")), workdir)
    assert not run.of(ChoiceRequest)
    assert run.summary.claimed is False and run.summary.alternatives


def test_a_refusal_offers_the_recipes_that_fit_and_the_real_files_stay(
    trained: Path, daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    _recipes_on(trained)
    notes = workdir / "notes.txt"
    notes.write_text("one\ntwo\nthree\n")
    reply = json.dumps({"use": "rename_add_today", "args": {"file": "notes.txt"}})
    run = ask_inprocess(
        "notes.txt how big",
        script(reply, done("x")),
        workdir,
        keys=["n", "I asked how big it is\r", "k", "n"],
    )
    choices = run.of(ChoiceRequest)
    assert choices and choices[0].ran == ""  # nothing ran: it was refused
    assert any("refused" in d for d in choices[0].doubts)
    assert "file_size" in [a.recipe for a in choices[0].alternatives]
    assert notes.read_text() == "one\ntwo\nthree\n" and [p.name for p in workdir.iterdir()] == [
        "notes.txt"
    ]


def test_after_a_bare_no_the_refused_command_is_never_offered_again(
    trained: Path, daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    """After a refusal that says only no ("that is not what I asked"), no alternative does
    what was just refused: the composed find-then-act refused (``-print -delete``) is not
    offered again as the plain recipe it was composed like (``-delete``)."""
    _recipes_on(trained)
    (workdir / "scratch").mkdir()
    (workdir / "scratch" / "empty").write_text("")
    (workdir / "scratch" / "full.txt").write_text("x\n")
    reply = json.dumps({"use": "delete_empty_files", "args": {"dir": "scratch"}})
    run = ask_inprocess(
        "delete the empty files in scratch",
        script(reply, done("x")),
        workdir,
        keys=["n", "that is not what I asked\r", "k", "n"],
    )
    [approval] = run.of(ApprovalNeeded)
    choices = run.of(ChoiceRequest)
    assert choices and choices[0].ran == ""
    offered = choices[0].alternatives
    assert offered and approval.command not in [a.command for a in offered]
    assert "delete_empty_files" not in [a.recipe for a in offered]  # the same deletion
    assert sorted(p.name for p in (workdir / "scratch").iterdir()) == ["empty", "full.txt"]


def test_a_no_offers_the_next_recipes_and_the_pick_runs_as_a_follow_up(
    trained: Path, daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    shutil.copytree(trained, os.environ["SHELLAGENT_CACHE_DIR"], dirs_exist_ok=True)
    write_config('[ask]\nrecipes = "auto"\n')  # "did that do it?" is asked
    (workdir / "docs").mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (workdir / "docs" / name).write_text("x\n")
    reply = json.dumps({"use": "files_under_count", "args": {"dir": "docs"}})
    run = ask_inprocess(
        "how many files are in docs?", script(reply, done("x")), workdir, keys=["n", "1", "y"]
    )
    first, second = run.of(ConfirmRequest)
    assert first.alternatives  # offered with the "no"
    picked = first.alternatives[0]
    summaries = run.of(Summary)
    assert len(summaries) == 2
    follow_up = summaries[1].session
    assert transcript_events(follow_up)[0]["continues"] == summaries[0].session
    turns = _turns(follow_up)
    assert turns[0]["use"] == picked.recipe and "(your pick)" in turns[0]["why"]
    assert summaries[1].verdict == "confirmed"


def test_a_recipe_answer_exports_under_the_recipe_steps_prompt(
    trained: Path, daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    """Through the real daemon and `shellagent export`: the use reply is trained under
    the prompt the recipe step sent, as recorded with the reply, not the free loop's."""
    _recipes_on(trained)
    (workdir / "notes.txt").write_text("one\ntwo\nthree\n")
    reply = json.dumps({"use": "line_count", "args": {"file": "notes.txt"}})
    run = ask_inprocess("count the lines of notes.txt", script(reply, done("3")), workdir)
    events = transcript_events(run.summary.session)
    [turn] = [e for e in events if e["type"] == "model_turn"]
    assert turn["action"]["origin"] == "recipe"
    out = subprocess.run(
        [sys.executable, "-m", "shellagent", "export", "--format", "sft", "--include-unsuccessful"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    [record] = [json.loads(line) for line in out.stdout.splitlines()]
    messages = record["messages"]
    assert messages[:-1] == turn["prompt"]
    assert messages[0]["content"].startswith("You choose a ready-made command")
    assert "- line_count:" in messages[0]["content"]
    assert messages[1] == {"role": "user", "content": "Task: count the lines of notes.txt"}
    assert messages[-1] == {"role": "assistant", "content": reply}
    free_system = next(e["content"] for e in events if e["type"] == "message")
    assert free_system not in [m["content"] for m in messages]
