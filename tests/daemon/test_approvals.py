"""Approval flows end to end: a real daemon asks, keys typed through prompt-toolkit pipe
input answer, and the transcript shows what the policy, the user and the shell did."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from shellagent.events import ApprovalNeeded, ChangesDone, Decided, InvalidReply, Proposed
from tests.daemon.conftest import (
    UNCHECKED,
    DaemonProc,
    ask_inprocess,
    cmd,
    done,
    transcript_events,
    write_config,
)

ASKS = "rm -f notes.txt"  # the default policy asks before deleting


def _setup(workdir: Path) -> None:
    (workdir / "notes.txt").write_text("keep?\n")


def test_y_runs_the_command_the_daemon_asked_about(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    _setup(workdir)
    # y runs it (on the copy), a applies the change set at the end
    run = ask_inprocess(
        "tidy", script(cmd(ASKS, "tidy up"), done("tidied")), workdir, keys=["y", "a"]
    )
    assert run.code == UNCHECKED
    assert not (workdir / "notes.txt").exists()
    request = run.of(ApprovalNeeded)[0]
    assert request.command == ASKS and request.decision == "ask" and request.reasons
    assert "why: tidy up" in run.out and "policy: ask" in run.out
    assert run.summary.commands == (ASKS,)


def test_n_with_a_reason_refuses_and_tells_the_model(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    _setup(workdir)
    run = ask_inprocess(
        "tidy", script(cmd(ASKS), done("left it")), workdir, keys=["n", "I still need it\r"]
    )
    assert (workdir / "notes.txt").exists()
    events = transcript_events(run.summary.session)
    approval = next(e for e in events if e["type"] == "approval")
    assert approval["decision"] == "refuse" and approval["reason"] == "I still need it"
    told = [e["content"] for e in events if e["type"] == "message" and e["role"] == "user"]
    assert any("I still need it" in text for text in told)


def test_e_edits_in_place_and_the_edit_is_checked_again(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    _setup(workdir)
    # Ctrl-A moves to the start of the pre-filled command; turn "rm -f" into "ls -l".
    keys = ["e", "\x01" + "\x1b[3~" * 5 + "ls -l" + "\r"]
    run = ask_inprocess("tidy", script(cmd(ASKS), done("looked")), workdir, keys=keys)
    assert (workdir / "notes.txt").exists()
    assert run.summary.commands == ("ls -l notes.txt",)
    policies = [e for e in run.of(Proposed)]
    assert [p.command for p in policies] == [ASKS, "ls -l notes.txt"]
    assert policies[1].decision == "allow"


def test_a_always_allows_with_the_scope_shown_back(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    _setup(workdir)
    model = script(cmd(ASKS), cmd(ASKS), done("cleaned"))
    run = ask_inprocess("tidy", model, workdir, keys=["a", "s", "a"])  # asked once, not twice
    assert not (workdir / "notes.txt").exists()
    assert run.summary.commands == (ASKS, ASKS)
    assert len(run.of(ApprovalNeeded)) == 1
    assert "for the rest of this task" in run.out
    approval = run.of(Decided)[0]
    assert approval.decision == "always" and approval.scope == "session"


def test_q_quits_the_task_without_running_anything(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    _setup(workdir)
    run = ask_inprocess("tidy", script(cmd(ASKS), done("never")), workdir, keys=["q"])
    assert run.code == 1 and run.summary.reason == "user_quit"
    assert (workdir / "notes.txt").exists()
    assert transcript_events(run.summary.session)[-1]["reason"] == "user_quit"


def test_without_a_terminal_ask_decisions_are_refused_and_that_is_said(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    _setup(workdir)
    run = ask_inprocess("tidy", script(cmd(ASKS), done("could not")), workdir, keys=None)
    assert (workdir / "notes.txt").exists()
    assert "rerun with -y" in run.out
    assert not run.of(ApprovalNeeded)  # the daemon refused without asking


def test_yes_approves_what_the_policy_asks_about_but_never_a_deny(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    _setup(workdir)
    model = script(cmd("rm -rf /"), cmd(ASKS), done("ok"))
    run = ask_inprocess("tidy", model, workdir, yes=True)
    assert [p.decision for p in run.of(Proposed)] == ["deny", "ask"]
    assert run.summary.commands == (ASKS,)
    assert run.of(Decided)[0].decision == "auto"


def test_dry_run_shows_commands_and_runs_none(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    _setup(workdir)
    run = ask_inprocess(
        "tidy", script(cmd(ASKS), done("would tidy")), workdir, yes=True, dry_run=True
    )
    assert (workdir / "notes.txt").exists()
    assert run.summary.commands == (ASKS,)  # it ran on the copy of the files
    assert run.of(ChangesDone)[0].outcome == "dry_run" and "DEL" in run.out
    assert "(dry run: not run)" not in run.out


def test_dry_run_without_overlays_runs_nothing(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    _setup(workdir)
    write_config('[ask]\nreview = "commands"\nconfirm = false\n')
    run = ask_inprocess(
        "tidy", script(cmd(ASKS), done("would tidy")), workdir, yes=True, dry_run=True
    )
    assert (workdir / "notes.txt").exists()
    assert run.summary.commands == ()
    assert "(dry run: not run)" in run.out


def test_a_reply_cut_as_a_loop_is_shown_and_the_model_asked_again(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    looping = '{"cmd": "ls ' + "-rw-" * 200
    run = ask_inprocess("look", script(looping, done("nothing to do")), workdir, yes=True)
    invalid = run.of(InvalidReply)
    assert [(i.turn, i.stop) for i in invalid] == [(1, "repeat")]
    assert "    the model's reply was cut: it kept repeating itself; asking again" in run.out
    assert run.summary.reason == "finished"


def test_question_mark_in_the_approval_prompt_explains_then_asks_again(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    (workdir / "notes.txt").write_text("x\n")
    model = script(cmd("rm -f notes.txt"), done("removed"))
    run = ask_inprocess("tidy", model, workdir, keys=["?", "n", "\r"])
    assert "1. rm: ask" in run.out and "-f: -f, --force" in run.out
    assert (workdir / "notes.txt").exists()
