"""One exit-code table for ``ask`` (``shellagent/daemon/outcome.py``), the same through the
daemon and with ``--no-daemon``: each row is run both ways, with keys typed at the prompts
where a person would, and through the real command line where none is."""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from shellagent.cli.ask_client import run_in_process
from shellagent.events import ChangesDone, ConfirmRequest
from tests.daemon.conftest import (
    RecordingUI,
    Run,
    ask_cli,
    ask_inprocess,
    cmd,
    done,
    start_daemon,
    stop,
    write_config,
)

BOTH = pytest.mark.parametrize("way", ["daemon", "no-daemon"])


def last_line(out: str) -> str:
    return [line for line in out.splitlines() if line.strip()][-1]


def ask_locally(
    task: str,
    model: str,
    cwd: Path,
    *,
    keys: list[str] | None = None,
    yes: bool = False,
    dry_run: bool = False,
) -> Run:
    """``ask --no-daemon`` with the prompts answered by ``keys``, as ``ask_inprocess``
    answers them through the daemon."""
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    out = io.StringIO()
    args = argparse.Namespace(
        task=task, model=model, cwd=str(cwd), yes=yes, apply=False, dry_run=dry_run,
        json=False, max_turns=None, continues=None, no_daemon=True,
    )  # fmt: skip
    with create_pipe_input() as pipe:
        ui = RecordingUI(
            list(keys or []),
            out=out,
            err=io.StringIO(),
            can_prompt=keys is not None,
            dry_run=dry_run,
            pt_input=pipe,
            pt_output=DummyOutput(),
        )
        code = run_in_process(args, ui)
    return Run(code, out.getvalue(), ui.events)


@pytest.fixture
def ask(request: pytest.FixtureRequest, way: str) -> Callable[..., Run]:
    """Run one task the way under test: through a real daemon, or ``--no-daemon``."""
    if way == "no-daemon":
        return ask_locally
    request.getfixturevalue("daemon")
    return ask_inprocess


def use(recipe: str, **args: str) -> str:
    return json.dumps({"use": recipe, "args": args})


@BOTH
def test_0_done_a_result_the_recipe_step_claims(
    ask: Callable[..., Run], script: Callable[..., str], workdir: Path, recipes_on: str
) -> None:
    (workdir / "notes.txt").write_text("one\ntwo\nthree\n")
    counted = ask(
        "count the lines of notes.txt", script(use("line_count", file="notes.txt")), workdir,
        yes=True,
    )  # fmt: skip
    assert counted.summary.claimed and counted.code == 0, counted.out
    made = ask(
        "create a folder reports/2026", script(use("make_dir", dir="reports/2026")), workdir,
        yes=True,
    )  # fmt: skip
    assert made.of(ChangesDone)[0].outcome == "kept"  # -y without --apply: kept for later
    assert made.summary.claimed and made.code == 0, made.out


@BOTH
def test_0_done_you_confirmed_it_and_1_nobody_checked_the_model_s_own_commands(
    ask: Callable[..., Run], script: Callable[..., str], workdir: Path
) -> None:
    unchecked = ask("greet", script(cmd("echo hi"), done("said hi")), workdir, yes=True)
    assert not unchecked.summary.claimed and unchecked.code == 1
    assert last_line(unchecked.out) == "unverified, the model says: said hi"
    write_config("")  # "did that do it?" is asked
    confirmed = ask("greet", script(cmd("echo hi"), done("said hi")), workdir, keys=["y"])
    assert confirmed.code == 0 and last_line(confirmed.out) == "done (confirmed): said hi"


@BOTH
def test_1_a_no_to_did_that_do_it_or_to_the_change_set(
    ask: Callable[..., Run], script: Callable[..., str], workdir: Path
) -> None:
    write_config("")
    said_no = ask("greet", script(cmd("echo hi"), done("said hi")), workdir, keys=["n"])
    assert said_no.code == 1 and len(said_no.of(ConfirmRequest)) == 1
    discarded = ask(
        "make it", script(cmd("touch a.txt"), done("made a.txt")), workdir, keys=["y", "n"]
    )
    assert discarded.code == 1 and last_line(discarded.out).startswith("discarded:")
    assert not (workdir / "a.txt").exists()


@BOTH
def test_1_the_only_command_refused_and_nothing_ran(
    ask: Callable[..., Run], script: Callable[..., str], workdir: Path
) -> None:
    """The case of the report: ``not shown to be done: nothing was deleted`` exited 0."""
    (workdir / "old.log").write_text("x\n")
    model = script(cmd("rm -f old.log", "clean up"), done("Deleted 1 old .log file"))
    refused = ask("delete old logs", model, workdir, keys=["n", "\r"])
    assert refused.code == 1
    assert last_line(refused.out).startswith("not shown to be done: nothing was deleted")
    honest = ask(
        "delete old logs",
        script(cmd("rm -f old.log"), done("Left old.log where it is")),
        workdir,
        keys=["n", "\r"],
    )
    assert honest.code == 1
    assert last_line(honest.out).startswith("not done: the command was refused and nothing ran")
    nobody = ask("delete old logs", script(cmd("rm -f old.log"), done("Left it")), workdir)
    assert nobody.code == 1  # no terminal, no -y: refused for want of an answer
    assert (workdir / "old.log").exists()


@BOTH
def test_1_a_folder_the_question_names_that_is_not_there(
    ask: Callable[..., Run], script: Callable[..., str], workdir: Path, recipes_on: str
) -> None:
    named = f"~/Downloads-{uuid.uuid4().hex[:8]}"  # a fresh account has no such folder
    run = ask(
        f"find the five largest files in {named}",
        script(use("largest_files_tree", dir=".", count="5")),  # the default: the checkout
        workdir,
        yes=True,
    )
    assert run.code == 1 and run.summary.commands == ()  # no other folder was listed
    assert last_line(run.out) == f"not done: {named} does not exist"


@BOTH
def test_1_not_shown_to_be_done_gave_up_or_quit(
    ask: Callable[..., Run], script: Callable[..., str], workdir: Path
) -> None:
    unshown = ask(
        "back up", script(cmd("tar -czf b.tgz"), done("Created b.tgz")), workdir, yes=True
    )
    assert unshown.code == 1 and last_line(unshown.out).startswith("not shown to be done")
    gave_up = ask("x", script(cmd("false"), cmd("false"), cmd("false")), workdir, yes=True)
    assert gave_up.code == 1 and last_line(gave_up.out).startswith("gave up")
    quit_ = ask("x", script(cmd("rm -f x"), done("never")), workdir, keys=["q"])
    assert quit_.code == 1 and last_line(quit_.out).startswith("quit")


@BOTH
def test_130_cancelled(ask: Callable[..., Run], script: Callable[..., str], workdir: Path) -> None:
    run = ask("x", script(cmd("rm -f x"), done("never")), workdir, keys=["\x03"])
    assert run.code == 130 and run.summary.reason == "cancelled"


@BOTH
def test_2_a_working_directory_that_does_not_exist(
    ask: Callable[..., Run], script: Callable[..., str], tmp_path: Path
) -> None:
    run = ask("x", script(done("x")), tmp_path / "gone", yes=True)
    assert run.code == 2


@BOTH
def test_3_a_model_that_cannot_be_loaded(
    ask: Callable[..., Run], tmp_path: Path, workdir: Path
) -> None:
    run = ask("x", f"scripted:{tmp_path / 'no-such-script.json'}", workdir, yes=True)
    assert run.code == 3


@BOTH
def test_4_an_unexpected_error_in_the_task(
    ask: Callable[..., Run], tmp_path: Path, workdir: Path
) -> None:
    # a script whose context size is no number: the loader fails with a ValueError, which
    # nothing expects (a bug of the loader's): an internal error, said as one
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"replies": [done("x")], "context_size": "big"}))
    run = ask("x", f"scripted:{broken}", workdir, yes=True)
    assert run.code == 4


@pytest.mark.slow
def test_4_a_daemon_that_dies_mid_task(script: Callable[..., str], workdir: Path) -> None:
    daemon = start_daemon()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "shellagent.cli.ask", "--json", "-y", "--model",
             script(cmd("echo go; sleep 4246"), done()), "wait"],
            cwd=workdir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stdout is not None
        for line in proc.stdout:
            if json.loads(line)["type"] == "output":
                break
        os.kill(daemon.proc.pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 4, err
        assert "the daemon went away before the task ended" in err
    finally:
        stop(daemon)


@pytest.mark.parametrize("way", [[], ["--no-daemon"]], ids=["daemon", "no-daemon"])
def test_the_command_line_exits_the_same_both_ways(
    request: pytest.FixtureRequest,
    way: list[str],
    script: Callable[..., str],
    workdir: Path,
    recipes_on: str,
) -> None:
    if not way:
        request.getfixturevalue("daemon")
    (workdir / "notes.txt").write_text("one\ntwo\n")
    model: Any = script(use("line_count", file="notes.txt"))
    counted = ask_cli(*way, "-y", "--model", model, "count the lines of notes.txt", cwd=workdir)
    assert counted.returncode == 0, counted.stdout + counted.stderr
    write_config()  # recipes off: the script's replies are the free loop's
    refused = ask_cli(
        *way, "--model", script(cmd("rm -f notes.txt"), done("Deleted notes.txt")),
        "tidy up here", cwd=workdir,
    )  # fmt: skip
    assert refused.returncode == 1, refused.stderr  # no terminal, no -y: refused, nothing ran
    usage = ask_cli(*way, "--max-turns", "0", "x", cwd=workdir)
    assert usage.returncode == 2


def test_0_a_job_installed_whatever_became_of_the_first_run_s_copy() -> None:
    from shellagent.agent.outcome import Outcome
    from shellagent.daemon.outcome import exit_status, verdict

    ran = Outcome("finished", "Scheduled job j1: every Monday at 09:00.", 2, "s", ())
    for changes in ("discarded", "kept", "applied", "none"):
        job = replace(ran, scheduled="j1", changes=changes)
        assert verdict(job) == "scheduled" and exit_status(job, verdict(job)) == 0
    # without a job, a discarded change set is not done; a no to "did that do it?" wins
    discarded = replace(ran, changes="discarded")
    assert exit_status(discarded, verdict(discarded)) == 1
    said_no = replace(ran, scheduled="j1", success=False)
    assert exit_status(said_no, verdict(said_no)) == 1
