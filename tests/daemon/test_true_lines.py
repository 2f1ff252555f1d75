"""Every line ``ask`` shows says what happened, no more (issue 40, item 5): who wrote a
command, when a task was cancelled, that an echo of the prompt is no answer, what a dry run
would change, what an "always" remembered; and ``shellagent apply --diff`` asks before it
applies. Through the real daemon, and in a terminal (tmux) where one matters."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shellagent.cli.ask_ui import AskUI
from shellagent.cli.main import main
from shellagent.events import ChangesReady, Decided, Proposed, Summary, Thinking, WireEvent
from tests.daemon.conftest import (
    DaemonProc,
    RecordingUI,
    ask_inprocess,
    cmd,
    done,
    transcript_events,
)


def last_line(out: str) -> str:
    return [line for line in out.splitlines() if line.strip()][-1]


def block(out: str, step: int) -> list[str]:
    """The lines of proposal ``[step]`` on screen, up to the next proposal."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"[{step}] $ "))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    return lines[start:end]


# -- who wrote it -------------------------------------------------------------------------


def test_a_command_the_user_typed_is_labelled_theirs_on_screen_and_in_the_transcript(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    (workdir / "a.tmp").write_text("x\n")
    model = script(
        cmd("rm -f *.tmp", "clean up the temporary files"),
        cmd("rm -rf /tmp/x*", "clean up the temporary files"),
        done("looked"),
    )
    # refuse twice, then type a command of one's own at "what now?"
    keys = ["n", "\r", "n", "e", "\x15ls -la\r", "n"]
    run = ask_inprocess("tidy the temp files", model, workdir, keys=keys)
    typed = block(run.out, 3)
    assert typed[0] == "[3] $ ls -la" and typed[1] == "    written by you", run.out
    assert not any("why:" in line for line in typed)  # not the model's reason, not its name
    assert [p.origin for p in run.of(Proposed)] == [None, None, "user"]
    ran = [e for e in transcript_events(run.summary.session) if e["type"] == "execution"]
    assert [(e["command"], e["origin"]) for e in ran] == [("ls -la", "user")]


def test_a_command_the_model_wrote_where_no_recipe_fits_says_so(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path, recipes_on: str
) -> None:
    run = ask_inprocess(
        "zqxv the vlorp of gnarfs",  # no recipe fits this
        script(cmd("echo vlorp", "print the vlorp"), done("printed")),
        workdir,
        yes=True,
    )
    assert [p.origin for p in run.of(Proposed)] == ["model"]
    assert "    why: (written by the model, no recipe) print the vlorp" in block(run.out, 1)


def _rendered(event: WireEvent) -> str:
    out = io.StringIO()
    AskUI(out=out, err=io.StringIO()).event(event)
    return out.getvalue()


def test_the_label_names_the_recipe_the_model_or_you() -> None:
    def proposed(origin: str | None, why: str) -> str:
        return _rendered(
            Proposed(turn=1, command="du -sh x", why=why, decision="allow", origin=origin)  # type: ignore[arg-type]
        )

    assert "why: recipe folder_size: how big a folder is" in proposed(
        "recipe", "recipe folder_size: how big a folder is"
    )
    assert "why: (written by the model, no recipe) size of x" in proposed("model", "size of x")
    yours = proposed("user", "size of x")
    assert "written by you" in yours and "why:" not in yours and "model" not in yours


# -- Ctrl-C -------------------------------------------------------------------------------


class CtrlCWhileThinking(RecordingUI):
    """Presses Ctrl-C as soon as the model starts thinking about the second reply."""

    def event(self, event: WireEvent) -> None:
        super().event(event)
        if isinstance(event, Thinking) and event.turn == 2:
            raise KeyboardInterrupt


def test_ctrl_c_while_the_model_thinks_runs_nothing_more_and_says_when_it_came(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from shellagent.cli.ask_client import Connection, connect, follow, socket_path
    from shellagent.events import Ask

    model = script(cmd("echo first"), {"text": cmd("echo second > ran.txt"), "delay_s": 1.5})
    out = io.StringIO()
    with create_pipe_input() as pipe:
        ui = CtrlCWhileThinking(
            [], out=out, err=io.StringIO(), pt_input=pipe, pt_output=DummyOutput()
        )
        conn = Connection(connect(socket_path()))
        try:
            conn.send(Ask(task="x", cwd=str(workdir), model=model, yes=True))
            code = follow(conn, ui)
        finally:
            conn.close()
    summary = ui.events[-1]
    assert isinstance(summary, Summary) and code == 130
    assert summary.commands == ("echo first",)  # the second reply's command never ran
    assert last_line(out.getvalue()) == "cancelled: cancelled while the model was thinking"
    assert "while a command was running" not in out.getvalue()


def test_ctrl_c_while_the_model_fills_a_recipe_runs_nothing(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path, recipes_on: str
) -> None:
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from shellagent.cli.ask_client import Connection, connect, follow, socket_path
    from shellagent.events import Ask, Result

    class CtrlCAtOnce(RecordingUI):
        def event(self, event: WireEvent) -> None:
            super().event(event)
            if isinstance(event, Thinking):
                raise KeyboardInterrupt

    (workdir / "notes.txt").write_text("one\ntwo\n")
    fill = json.dumps({"use": "line_count", "args": {"file": "notes.txt"}})
    model = script({"text": fill, "delay_s": 1.5})
    out = io.StringIO()
    with create_pipe_input() as pipe:
        ui = CtrlCAtOnce([], out=out, err=io.StringIO(), pt_input=pipe, pt_output=DummyOutput())
        conn = Connection(connect(socket_path()))
        try:
            conn.send(
                Ask(task="count the lines of notes.txt", cwd=str(workdir), model=model, yes=True)
            )
            code = follow(conn, ui)
        finally:
            conn.close()
    assert code == 130
    assert not [e for e in ui.events if isinstance(e, Result)]  # the recipe's command never ran
    assert last_line(out.getvalue()) == "cancelled: cancelled while the model was thinking"


# -- no prompt text as an answer ----------------------------------------------------------

FORMAT_TEXT = "what was done, or the answer, with the output that shows it"


def test_the_prompt_s_own_words_are_no_answer(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    (workdir / "a.txt").write_text("x\n")
    task = "Wie viele Dateien liegen in diesem Ordner?"  # no worked example matches it
    echoed = ask_inprocess(task, script(cmd("ls"), done(FORMAT_TEXT), done("1")), workdir, yes=True)
    system = next(e for e in transcript_events(echoed.summary.session) if e.get("role") == "system")
    assert FORMAT_TEXT in system["content"]  # the text the model copied is the prompt's
    assert echoed.summary.summary == "1" and FORMAT_TEXT not in echoed.out
    told = [
        e["content"] for e in transcript_events(echoed.summary.session) if e.get("role") == "user"
    ]
    assert any("repeats the text of your instructions" in t for t in told)
    twice = ask_inprocess(
        task, script(cmd("ls"), done(FORMAT_TEXT), done(FORMAT_TEXT)), workdir, yes=True
    )
    assert twice.code == 1 and FORMAT_TEXT not in twice.out
    assert last_line(twice.out).startswith("error: the model gave no answer")


# -- the dry run --------------------------------------------------------------------------


def test_the_dry_run_s_last_line_says_nothing_changed_and_what_would(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    for name in ("a.tmp", "b.tmp"):
        (workdir / name).write_text("x\n")
    model = script(cmd("rm -f *.tmp", "clean up"), done("Deleted the .tmp files"))
    run = ask_inprocess("delete the tmp files", model, workdir, keys=["y"], dry_run=True)
    line = last_line(run.out)
    final = [e for e in run.of(ChangesReady) if e.lines][0]
    assert line.startswith(
        f"dry run: nothing was changed; on the copy it would change: {final.summary}"
    ), final.lines
    assert "2 deleted" in line
    assert line.endswith("(the model said: Deleted the .tmp files)")
    assert (workdir / "a.tmp").exists() and run.summary.verdict == "dry_run"
    assert not line.startswith(("unverified", "done"))


# -- always -------------------------------------------------------------------------------


def test_always_says_what_it_remembered_or_that_it_could_not(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    (workdir / "a.tmp").write_text("x\n")
    glob = ask_inprocess(
        "tidy", script(cmd("rm -f *.tmp"), done("x")), workdir, keys=["a", "d", "n"]
    )
    said = block(glob.out, 1)
    assert (
        "    `rm -f '*.tmp'` cannot be always allowed: the policy must ask each time; run this once"
    ) in said
    assert not any("always allow" in line and "cannot" not in line for line in said), said
    assert glob.of(Decided)[0].scope is None  # nothing was remembered
    (workdir / "notes.txt").write_text("x\n")
    exact = ask_inprocess(
        "tidy", script(cmd("rm -f notes.txt"), done("x")), workdir, keys=["a", "d", "n"]
    )
    line = next(line for line in block(exact.out, 1) if "always allowed" in line)
    assert line.startswith("    always allowed in this directory (not below it), from now on: ")
    assert f"when run in {workdir}" in line and "and below" not in exact.out


# -- apply --diff -------------------------------------------------------------------------


def _kept(daemon: DaemonProc, script: Callable[..., str], workdir: Path) -> str:
    (workdir / "notes.txt").write_text("alpha\n")
    model = script(cmd("sed -i s/alpha/ALPHA/ notes.txt"), done("shouted"))
    return ask_inprocess("shout", model, workdir, yes=True).summary.session


def test_apply_diff_without_a_terminal_shows_and_applies_nothing(
    daemon: DaemonProc,
    script: Callable[..., str],
    workdir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    session = _kept(daemon, script, workdir)
    assert main(["apply", session, "--diff"]) == 0
    out = capsys.readouterr().out
    assert "-alpha" in out and "+ALPHA" in out
    assert "not applied (nobody to ask here (not a terminal))" in out
    assert (workdir / "notes.txt").read_text() == "alpha\n"
    assert main(["apply", session]) == 0  # still kept, and applies when asked plainly
    assert (workdir / "notes.txt").read_text() == "ALPHA\n"


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Callable[[str, Path], str]]:
    """Start a command in a tmux window (the test's shellagent directories); its name."""
    names: list[str] = []
    env = [f"{k}={v}" for k, v in os.environ.items() if k.startswith("SHELLAGENT_")]

    def start(command: str, cwd: Path) -> str:
        name = f"sa-{uuid.uuid4().hex[:6]}"
        names.append(name)
        _tmux(
            "new-session", "-d", "-s", name, "-x", "200", "-y", "50",
            *[x for kv in env for x in ("-e", kv)], "-c", str(cwd),
            f"{command}; echo EXIT=$?; sleep 60",
        )  # fmt: skip
        return name

    yield start
    for name in names:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def _wait_for(name: str, text: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux("capture-pane", "-p", "-t", name, "-S", "-200")
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared:\n{screen}")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
@pytest.mark.parametrize(("key", "lands", "said"), [("k", False, "not applied (kept)"),
                                                    ("n", False, "discarded:"),
                                                    ("a", True, "applied 1 change")])  # fmt: skip
def test_apply_diff_in_a_terminal_shows_then_asks(
    daemon: DaemonProc,
    script: Callable[..., str],
    workdir: Path,
    terminal: Callable[[str, Path], str],
    key: str,
    lands: bool,
    said: str,
) -> None:
    session = _kept(daemon, script, workdir)
    name = terminal(f"{sys.executable} -m shellagent apply {session} --diff", workdir)
    screen = _wait_for(name, "apply these changes?")
    assert "+ALPHA" in screen and (workdir / "notes.txt").read_text() == "alpha\n"
    _tmux("send-keys", "-t", name, key)
    screen = _wait_for(name, "EXIT=")
    assert said in screen and "EXIT=0" in screen, screen
    assert (workdir / "notes.txt").read_text() == ("ALPHA\n" if lands else "alpha\n")


# -- logs ---------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_logs_list_uses_the_terminal_s_width_for_the_task(
    daemon: DaemonProc,
    script: Callable[..., str],
    workdir: Path,
    terminal: Callable[[str, Path], str],
) -> None:
    task = "count the lines of every log file in this folder and tell me which is longest"
    ask_inprocess(task, script(cmd("echo 3"), done("3")), workdir, yes=True)
    name = terminal(f"{sys.executable} -m shellagent logs list", workdir)
    screen = _wait_for(name, "EXIT=")
    assert task in screen, screen  # whole, on a 200-column terminal


def test_a_recipe_the_model_called_as_a_tool_is_labelled_a_recipe_not_the_model_s() -> None:
    """A model that writes commands well may call a recipe from the free loop: the command
    is the recipe's rendering, so its label names the recipe, never 'no recipe'."""
    from shellagent.daemon.worker import TaskWorker
    from shellagent.events import Ask, ModelTurn, PolicyVerdict

    sent: list[WireEvent] = []
    nothing: Any = None  # no model: only the events are turned into what the client sees
    worker = TaskWorker(
        Ask(task="count the lines", cwd="/"), pool=nothing, emit=sent.append, client_pid=0
    )
    call = {"use": "line_count", "args": '{"file": "notes.txt"}', "origin": "free"}
    worker._on_event(ModelTurn(turn=2, raw="", action=call, valid=True))
    worker._on_event(PolicyVerdict(turn=2, command="wc -l < notes.txt", decision="allow"))
    (proposed,) = [e for e in sent if isinstance(e, Proposed)]
    assert proposed.origin == "recipe" and proposed.why == "recipe line_count (the model's call)"
    shown = _rendered(proposed)
    assert "why: recipe line_count (the model's call)" in shown and "no recipe" not in shown
