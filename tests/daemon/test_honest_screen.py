"""The screen's last line says what is known about the outcome, and a "no" is taken well:
through the real daemon and ``ask`` (in-process prompts, and a real terminal in tmux)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.events import ApprovalNeeded, ConfirmRequest, Proposed
from shellagent.transcript.export import export
from shellagent.transcript.reader import read_transcript
from tests.daemon.conftest import (
    DaemonProc,
    ask_inprocess,
    cmd,
    done,
    start_daemon,
    stop,
    transcript_events,
    write_config,
)


def last_line(out: str) -> str:
    return [line for line in out.splitlines() if line.strip()][-1]


def exported(session: str) -> int:
    path = Path(os.environ["SHELLAGENT_DATA_DIR"]) / "transcripts" / f"{session}.jsonl"
    out = io.StringIO()
    report = export("sft", [read_transcript(path)], out, only_successful=False)
    return report.records


def test_a_failed_last_command_and_a_file_nobody_made_are_the_last_line(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    model = script(
        cmd("tar -czf backup.tgz"),  # "cowardly refusing to create an empty archive"
        done("Created backup.tgz; it holds: tar, help, usage"),
    )
    run = ask_inprocess("back up here into backup.tgz", model, workdir, yes=True)
    line = last_line(run.out)
    assert line.startswith("not shown to be done: the last command failed (exit 2)"), line
    assert "no file backup.tgz was made" in line
    end = transcript_events(run.summary.session)[-1]
    assert end["type"] == "end" and "no file backup.tgz was made" in end["unsupported"]
    assert exported(run.summary.session) == 0  # never trained on, even unfiltered


def test_a_count_no_output_shows_is_flagged_and_a_supported_one_is_not(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    for name in ("a.log", "b.log"):
        (workdir / name).write_text("x\n")
    lied = ask_inprocess(
        "count the logs", script(cmd("ls"), done("There are 5 .log files")), workdir, yes=True
    )
    assert last_line(lied.out).startswith("not shown to be done: 5 appears in no output")
    honest = ask_inprocess(
        "count the logs",
        script(cmd("ls | wc -l"), done("There are 2 .log files")),
        workdir,
        yes=True,
    )
    assert last_line(honest.out) == "unverified, the model says: There are 2 .log files"
    assert exported(honest.summary.session) == 1


def test_no_to_did_that_do_it_is_the_last_word_and_a_refused_delete_is_not_done(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    write_config("")  # "did that do it?" is asked
    (workdir / "old.log").write_text("x\n")
    model = script(cmd("rm -f old.log", "clean up"), done("Deleted 5 old .log files"))
    run = ask_inprocess("delete old logs", model, workdir, keys=["n", "\r", "n"])
    asked = run.of(ConfirmRequest)[0]
    assert "nothing was deleted" in asked.unsupported
    assert "but the session does not show it: nothing was deleted" in run.out
    assert last_line(run.out).startswith("failed: you said it did not do it (the model said:")
    assert (workdir / "old.log").exists()
    assert transcript_events(run.summary.session)[-1]["success"] is False


@pytest.mark.parametrize(
    ("keys", "verdict", "said"),
    [
        (["n"], "discarded", "discarded: your files are as they were (the model said: "),
        # kept: "did that do it?" is still asked; skipped, the set's fate is the last word
        (["k", "s"], "kept", "not applied yet: the changes are kept for later (shellagent apply "),
    ],
)
def test_a_change_set_that_did_not_land_is_the_last_word_not_the_models_done(
    daemon: DaemonProc,
    script: Callable[..., str],
    workdir: Path,
    keys: list[str],
    verdict: str,
    said: str,
) -> None:
    write_config("")  # "did that do it?" is asked, but not of a discarded change set
    model = script(cmd("echo hello > made.txt", "make it"), done("Created made.txt"))
    run = ask_inprocess("make a file", model, workdir, keys=["y", *keys])
    assert not (workdir / "made.txt").exists()
    assert len(run.of(ConfirmRequest)) == len(keys) - 1
    assert run.summary.verdict == verdict
    line = last_line(run.out)
    assert line.startswith(said) and "Created made.txt" in line, line
    assert not line.startswith(("done", "unverified"))


def test_a_refusal_is_told_to_the_model_and_its_re_proposal_is_never_shown(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    (workdir / "notes.txt").write_text("keep\n")
    model = script(
        cmd("rm -f notes.txt", "tidy up"),
        cmd("rm -f notes.txt", "tidy up"),  # the same again: not shown, not asked
        cmd("ls"),
        done("Left notes.txt in place"),
    )
    run = ask_inprocess("tidy", model, workdir, keys=["n", "I still need it\r"])
    assert len(run.of(ApprovalNeeded)) == 1
    assert [p.command for p in run.of(Proposed)] == ["rm -f notes.txt", "ls"]
    assert "[1] $ rm -f notes.txt" in run.out and "[2] $ ls" in run.out
    assert "[3]" not in run.out  # every proposal shown has its number, none skipped
    told = [e["content"] for e in transcript_events(run.summary.session) if e.get("role") == "user"]
    assert any("their reason: I still need it" in t and "Do not propose it" in t for t in told)
    assert any("Not run and not shown" in t for t in told)
    assert "failed" not in last_line(run.out) and "gave up" not in run.out


def test_a_model_that_keeps_proposing_a_refused_command_is_stopped_honestly(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    model = script(*[cmd("rm -f notes.txt")] * 5, done("Deleted notes.txt"))
    run = ask_inprocess("tidy", model, workdir, keys=["n", "\r"])
    line = last_line(run.out)
    assert line.startswith("gave up: the model kept proposing `rm -f notes.txt`"), line
    assert "which you refused; it never ran" in line and "failed 3 times" not in run.out


def test_after_repeated_refusals_ask_asks_what_would_help(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    (workdir / "a.txt").write_text("a\n")
    model = script(
        cmd("rm -f a.txt"),
        cmd("mv a.txt /tmp/"),
        cmd("ls"),
        done("Listed the files; nothing was deleted"),
    )
    # refuse, then refuse again: asked what now; a hint is typed and told to the model
    run = ask_inprocess("tidy", model, workdir, keys=["n", "\r", "n", "h", "only list them\r"])
    assert "that is 2 commands refused in this task" in run.out
    told = [e["content"] for e in transcript_events(run.summary.session) if e.get("role") == "user"]
    assert any("their reason: only list them" in t for t in told)
    stopped = ask_inprocess(
        "tidy", script(cmd("rm -f a.txt"), cmd("mv a.txt /tmp/"), done("x")), workdir,
        keys=["n", "\r", "n", "s"],
    )  # fmt: skip
    assert last_line(stopped.out).startswith("quit")
    assert (workdir / "a.txt").exists()


# -- in a real terminal ------------------------------------------------------------------


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def _screen(session: str) -> str:
    return _tmux("capture-pane", "-p", "-t", session, "-S", "-200")


def _wait_for(session: str, text: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _screen(session)
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared:\n{screen}")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_in_a_terminal_a_refusal_then_no_ends_on_failed(
    tmp_path: Path, script: Callable[..., str], workdir: Path
) -> None:
    write_config("")
    (workdir / "old.log").write_text("x\n")
    model = script(
        cmd("rm -f old.log", "clean up"),
        cmd("rm -f old.log", "clean up"),
        done("Deleted 5 old .log files"),
    )
    daemon = start_daemon("--model", model)
    session = f"sa-{uuid.uuid4().hex[:6]}"
    env = [
        f"{k}={v}"
        for k, v in os.environ.items()
        if k.startswith("SHELLAGENT_") or k == "PYTHONPATH"
    ]
    status = tmp_path / "status"
    try:
        _tmux(
            "new-session", "-d", "-s", session, "-x", "120", "-y", "40",
            *[x for kv in env for x in ("-e", kv)],
            "-c", str(workdir),
            f"{sys.executable} -m shellagent.cli.ask 'delete old logs'; "
            f"echo exit=$? > {status}; sleep 30",
        )  # fmt: skip
        _wait_for(session, "run it?")
        _tmux("send-keys", "-t", session, "n")
        _wait_for(session, "why not?")
        _tmux("send-keys", "-t", session, "keep them", "Enter")
        _wait_for(session, "did that do it?")
        _tmux("send-keys", "-t", session, "n")
        deadline = time.monotonic() + 20
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        screen = _screen(session)
        lines = [line for line in screen.splitlines() if line.strip()]
        assert lines[-1].startswith("failed: you said it did not do it"), screen
        assert "[1] $ rm -f old.log" in screen and "[2]" not in screen
        assert "nothing was deleted" in screen and "gave up" not in screen
        assert status.read_text().strip() == "exit=1"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        stop(daemon)


def test_a_task_the_model_could_not_do_suggests_an_edit_and_a_larger_model_once_a_day(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    refused = ask_inprocess(
        "tidy",
        script(cmd("rm -f notes.txt"), cmd("rm -f *.txt")),
        workdir,
        keys=["n", "\r", "n", "s"],
    )
    lines = [line for line in refused.out.splitlines() if line.strip()]
    hint = lines[-2]
    assert "edit `rm -f *.txt` yourself" in hint, refused.out
    assert "shellagent model pull qwen2.5-coder-1.5b (1.1 GB)" in hint
    assert lines[-1].startswith("quit")  # the outcome stays the last line
    again = ask_inprocess("x", script(cmd("false"), cmd("false"), cmd("false")), workdir, yes=True)
    assert "model pull" not in again.out  # once a day
    assert last_line(again.out).startswith("gave up")


def test_the_larger_model_note_can_be_switched_off(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    write_config('[ask]\nconfirm = false\nlarger_model = ""\n')
    run = ask_inprocess("x", script(cmd("false"), cmd("false"), cmd("false")), workdir, yes=True)
    assert "model pull" not in run.out and last_line(run.out).startswith("gave up")


def test_a_confirmed_task_the_model_wrote_is_offered_as_a_recipe_and_the_offer_works(
    daemon: DaemonProc,
    script: Callable[..., str],
    workdir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from shellagent.cli.main import main

    write_config("")  # "did that do it?" is asked
    (workdir / "notes.txt").write_text("one\ntwo\n")
    run = ask_inprocess(
        "count the lines of notes.txt",
        script(cmd("wc -l < notes.txt", "count"), done("2 lines")),
        workdir,
        keys=["y"],
    )
    session = run.summary.session
    lines = [line for line in run.out.splitlines() if line.strip()]
    assert f"shellagent recipes add --from {session}" in lines[-2], run.out
    assert lines[-1].startswith("done (confirmed)")
    capsys.readouterr()
    assert main(["recipes", "add", "--from", session]) == 0
    assert "wc -l" in capsys.readouterr().out
    # switched off, and never after a "no"
    write_config("[ask]\noffer_recipes = false\n")
    off = ask_inprocess(
        "count again", script(cmd("wc -l < notes.txt"), done("2")), workdir, keys=["y"]
    )
    assert "recipes add" not in off.out
    write_config("")
    no = ask_inprocess(
        "count again", script(cmd("wc -l < notes.txt"), done("2")), workdir, keys=["n"]
    )
    assert "recipes add" not in no.out
