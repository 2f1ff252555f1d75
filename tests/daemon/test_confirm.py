"""Honest outcomes: a model saying "done" is not a success. In a terminal, ``ask`` asks
"Did that do it?"; the answer decides what the transcript, ``logs`` and the exports say, and
a confirmed session joins the user's own worked examples."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.agent.history import history_path
from shellagent.cli.main import main
from shellagent.events import ConfirmRequest
from tests.daemon.conftest import (
    DaemonProc,
    ask_inprocess,
    cmd,
    done,
    transcript_events,
    write_config,
)


@pytest.fixture(autouse=True)
def confirm_on(no_confirm_question: Path) -> None:
    write_config("")  # the defaults: the question is asked


def end_of(session: str) -> dict[str, object]:
    return transcript_events(session)[-1]


def test_yes_confirms_the_session_and_keeps_it_as_a_worked_example(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    (workdir / "a.txt").write_text("hello\n")
    model = script(cmd("cat a.txt"), done("a.txt says hello"))
    run = ask_inprocess("what does a.txt say", model, workdir, keys=["y"])
    assert run.of(ConfirmRequest)[0].summary == "a.txt says hello"
    assert "the model says: a.txt says hello" in run.out and "done (confirmed)" in run.out
    end = end_of(run.summary.session)
    assert end["type"] == "end" and end["success"] is True
    kept = [json.loads(line) for line in history_path().read_text().splitlines()]
    assert kept[0]["task"] == "what does a.txt say"
    assert kept[0]["steps"][0]["command"] == "cat a.txt"


def test_no_marks_it_failed_and_skip_leaves_it_unverified(
    daemon: DaemonProc,
    script: Callable[..., str],
    workdir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    failed = ask_inprocess("x", script(cmd("true"), done("did it")), workdir, keys=["n"])
    assert end_of(failed.summary.session)["success"] is False
    skipped = ask_inprocess("y", script(cmd("true"), done("did it")), workdir, keys=["s"])
    assert "success" not in end_of(skipped.summary.session)
    assert "unverified, the model says: did it" in skipped.out
    assert not history_path().exists()
    assert main(["logs", "list"]) == 0
    listed = capsys.readouterr().out
    assert "failed" in listed and "unverified" in listed


def test_nobody_is_asked_with_yes_or_without_a_terminal(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    auto = ask_inprocess("x", script(cmd("true"), done("ok")), workdir, yes=True)
    unattended = ask_inprocess("x", script(cmd("true"), done("ok")), workdir)
    for run in (auto, unattended):
        assert not run.of(ConfirmRequest)
        assert "success" not in end_of(run.summary.session)


def test_history_can_be_switched_off(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    write_config("[ask]\nhistory = false\n")
    ask_inprocess("x", script(cmd("true"), done("ok")), workdir, keys=["y"])
    assert not history_path().exists()
