"""The ``ask`` experience through the front door: ``Agent.run`` with hooks reviews the change
set, asks "did that do it?", keeps a confirmed session as a worked example and hands the
shell's state to a follow-up, as the daemon does, with a real sandbox on real overlays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shellagent import Agent, AutoApprover
from shellagent.agent import Hooks, Outcome
from shellagent.agent.examples import remember
from shellagent.agent.followup import ShellStates, load_earlier
from shellagent.agent.history import history_path
from shellagent.events import ChangesDecision, ChangeSetRecord, ChangesOutcome, End, EndReason
from shellagent.testing import ScriptedBackend
from shellagent.transaction.changeset import ChangeSet
from shellagent.transaction.review import Review, overlay_problem
from shellagent.transcript import new_session_id, read_transcript

from .conftest import cmd, done


@pytest.fixture
def work(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory in a home of its own: the review overlays the home."""
    problem = overlay_problem()
    if problem is not None:
        pytest.skip(f"no overlays here: {problem}")
    home = outside_tmp / "home"
    (home / "work").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SHELLAGENT_WORKSPACES_DIR", str(outside_tmp / "workspaces"))
    return home / "work"


class Asked:
    """The caller's side of the hooks: what it was shown, and its answers."""

    def __init__(self, decision: ChangesDecision, confirm: bool | None) -> None:
        self.decision = decision
        self.answer = confirm
        self.changes: list[tuple[list[str], bool]] = []  # paths, and were they on disk yet
        self.done: list[tuple[ChangesOutcome, str, int]] = []
        self.confirmed: list[tuple[str, tuple[str, ...]]] = []
        self.work: Path | None = None

    def decide(self, changes: ChangeSet, reason: EndReason) -> ChangesDecision:
        assert self.work is not None
        names = sorted(c.path.name for c in changes)
        self.changes.append((names, (self.work / "report.txt").exists()))
        return self.decision

    def on_done(self, outcome: ChangesOutcome, message: str, applied: int) -> None:
        self.done.append((outcome, message, applied))

    def confirm(self, outcome: Outcome, problems: tuple[str, ...]) -> bool | None:
        self.confirmed.append((outcome.summary, problems))
        return self.answer


def run_reviewed(work: Path, transcripts: Path, asked: Asked, replies: list[str]) -> Outcome:
    asked.work = work
    agent = Agent(
        ScriptedBackend(replies), cwd=work, approver=AutoApprover(), transcripts=transcripts
    )
    review = Review.create(new_session_id(), agent.profile)
    review.decide, review.on_done = asked.decide, asked.on_done
    return agent.run(
        "write a report",
        hooks=Hooks(
            review=review,
            confirm=asked.confirm,
            history=remember,
            check_summary=True,
        ),
    )


def test_the_front_door_reviews_applies_confirms_and_remembers_like_ask(
    work: Path, tmp_path: Path
) -> None:
    asked = Asked("apply", confirm=True)
    transcripts = tmp_path / "transcripts"
    replies = [cmd("echo quarterly > report.txt"), done("Created report.txt")]
    outcome = run_reviewed(work, transcripts, asked, replies)

    # the command wrote to the overlay: nothing was on disk when the change set was shown
    assert asked.changes == [(["report.txt"], False)]
    assert [d[0] for d in asked.done] == ["applied"] and asked.done[0][2] == 1
    assert (work / "report.txt").read_text() == "quarterly\n"
    assert asked.confirmed == [("Created report.txt", ())]
    assert (outcome.changes, outcome.success, outcome.unsupported) == ("applied", True, ())

    transcript = read_transcript(transcripts / f"{outcome.session_id}.jsonl")
    *_, record, end = transcript.events
    assert isinstance(record, ChangeSetRecord) and record.outcome == "applied"
    assert record.paths == (str(work / "report.txt"),)
    assert isinstance(end, End) and end.success is True and end.reason == "finished"

    kept = [json.loads(line) for line in history_path().read_text().splitlines()]
    assert [(k["task"], k["steps"][0]["command"]) for k in kept] == [
        ("write a report", "echo quarterly > report.txt")
    ]
    assert kept[0]["id"] == outcome.session_id


def test_a_discarded_change_set_is_not_asked_about_and_leaves_the_files_alone(
    work: Path, tmp_path: Path
) -> None:
    asked = Asked("discard", confirm=True)
    replies = [cmd("echo draft > report.txt"), done("Created report.txt")]
    outcome = run_reviewed(work, tmp_path / "t", asked, replies)
    assert [d[0] for d in asked.done] == ["discarded"]
    assert not (work / "report.txt").exists()
    assert asked.confirmed == []  # nothing landed: "did that do it?" has no answer to give
    assert (outcome.changes, outcome.success) == ("discarded", None)
    assert not history_path().exists()


def test_a_summary_the_session_does_not_back_is_shown_and_never_remembered(
    work: Path, tmp_path: Path
) -> None:
    asked = Asked("keep", confirm=True)
    replies = [cmd("ls"), done("Created backup.tgz")]  # it created nothing
    outcome = run_reviewed(work, tmp_path / "t", asked, replies)
    assert asked.changes == []  # no changes: nothing to decide
    [(summary, problems)] = asked.confirmed
    assert summary == "Created backup.tgz" and problems == outcome.unsupported != ()
    assert outcome.success is True and not history_path().exists()
    end = read_transcript(tmp_path / "t" / f"{outcome.session_id}.jsonl").end
    assert end is not None and end.unsupported == outcome.unsupported and end.success is True


def test_a_follow_up_starts_from_the_shell_state_its_session_left(
    work: Path, tmp_path: Path
) -> None:
    transcripts, states = tmp_path / "t", ShellStates()
    first = Agent(
        ScriptedBackend([cmd("export GREETING=bonjour"), done("set it")]),
        cwd=work,
        approver=AutoApprover(),
        transcripts=transcripts,
    ).run("set a greeting", hooks=Hooks(shell_states=states))
    assert states.get(first.session_id) is not None

    follow_up = Agent(
        ScriptedBackend([cmd("echo $GREETING"), done("bonjour")]),
        cwd=work,
        approver=AutoApprover(),
        transcripts=transcripts,
    )
    earlier = load_earlier(first.session_id, transcripts)
    outcome = follow_up.run("say it", hooks=Hooks(shell_states=states), earlier=earlier)
    assert outcome.commands[0].output.strip() == "bonjour"
    start = read_transcript(transcripts / f"{outcome.session_id}.jsonl").start
    assert start is not None and start.continues == first.session_id
