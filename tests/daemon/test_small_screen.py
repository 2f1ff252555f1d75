"""The small things ``ask``, ``logs``, ``explain`` and ``undo`` put on screen, each as a
user sees it: through the real daemon and the command line."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.cli.main import main
from shellagent.events import Result
from shellagent.model.pool import FairLock
from tests.daemon.conftest import (
    DaemonProc,
    ask_inprocess,
    cmd,
    done,
    transcript_events,
    write_config,
)


def test_a_reason_that_only_echoes_the_command_is_left_out(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    echo = ask_inprocess("x", script(cmd("ls -a", "run ls"), done("listed")), workdir, yes=True)
    assert "why:" not in echo.out
    said = ask_inprocess(
        "x", script(cmd("ls -a", "see what is here"), done("listed")), workdir, yes=True
    )
    assert "why: see what is here" in said.out


def test_tabs_in_a_summary_are_tabs_and_counts_are_plural_only_when_many(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    write_config("")  # "did that do it?" shows the summary too
    (workdir / "a").write_text("1\t2\n")
    run = ask_inprocess("x", script(cmd("cat a"), done("1\t2")), workdir, keys=["s"])
    assert "⟨\\t⟩" not in run.out and "the model says: 1\t2" in run.out
    assert "2 replies, 1 command;" in run.out
    applied = ask_inprocess(
        "x", script(cmd("touch new.txt"), done("made new.txt")), workdir, yes=True, apply=True
    )
    assert "applied 1 change;" in applied.out


def test_the_dry_run_banner_says_nothing_will_be_applied(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    run = ask_inprocess(
        "x", script(cmd("touch new.txt"), done("made")), workdir, yes=True, dry_run=True
    )
    assert "a dry run: commands work on a copy of your files, and nothing is applied" in run.out
    assert "until you apply" not in run.out
    assert not (workdir / "new.txt").exists()


def test_a_pipeline_whose_reader_finished_first_is_a_success(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    run = ask_inprocess(
        "x", script(cmd("yes | head -n 3"), done("printed y 3 times")), workdir, yes=True
    )
    assert run.of(Result)[0].exit_code == 141
    assert "[exit 141: the reader of a pipe finished first, which is fine" in run.out
    assert run.out.rstrip().splitlines()[-1] == "unverified, the model says: printed y 3 times"
    told = [e["content"] for e in transcript_events(run.summary.session) if e.get("role") == "user"]
    assert any("the command worked" in t for t in told)


def test_explain_reads_a_dashless_option_cluster(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["explain", "--", "tar czf backup.tgz ."]) == 0
    out = capsys.readouterr().out
    for option in ("-c:", "-z:", "-f:"):
        assert option in out, out


def test_logs_show_one_exit_per_turn_the_apply_and_its_undo_and_wraps_policy_lines(
    daemon: DaemonProc,
    script: Callable[..., str],
    workdir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = ask_inprocess(
        "make a note",
        script(cmd("echo note > note.txt && rm -f nothing-here"), done("made note.txt")),
        workdir,
        yes=True,
        apply=True,
    )
    session = run.summary.session
    capsys.readouterr()
    assert main(["logs", "show", session]) == 0
    page = capsys.readouterr().out
    assert page.count("exit 0") == 1, page
    assert "changes: applied (1 created)" in page and f"shellagent undo {session}" in page
    policy = page.splitlines()
    at = next(i for i, line in enumerate(policy) if line.startswith("  policy:"))
    assert all(len(line) <= 80 for line in policy[at : at + 3])
    assert policy[at + 1].startswith("          ")  # a wrapped policy line stays indented

    assert main(["undo", session]) == 0
    said = capsys.readouterr().out
    first, *_ = said.splitlines()
    assert first.startswith(f"taking back the apply of session {session}")
    assert "remove " in said and "note.txt (the apply created it)" in said
    assert said.rstrip().endswith(f"undone: 1 change of session {session}")
    assert not (workdir / "note.txt").exists()
    assert main(["logs", "show", session]) == 0
    assert "undone: `shellagent undo` took the apply back" in capsys.readouterr().out


def test_waiting_behind_the_model_s_own_load_is_not_a_task_ahead() -> None:
    lock = FairLock()
    lock.acquire(load=True)  # the daemon warming the model up
    seen: list[int] = []

    def wait_in_turn() -> None:
        lock.acquire(on_wait=seen.append)
        lock.release()

    waiter = threading.Thread(target=wait_in_turn)
    waiter.start()
    while not seen:
        threading.Event().wait(0.01)
    lock.release()
    waiter.join()
    assert seen == [0]  # nobody's task is ahead: `ask` says it waits for the model to load
