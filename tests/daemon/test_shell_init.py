"""The shell key binding, driven in a real terminal (tmux) for bash and zsh: type a
description, press Ctrl-G, and the line holds the proposed command; nothing runs. And
``ask`` with no task, a conversation in the same kind of terminal."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.cli.main import main
from tests.daemon.conftest import UNCHECKED, cmd, done, start_daemon, stop

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
ASK = str(Path(sys.executable).with_name("ask"))


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def _wait_for(session: str, text: str, timeout: float = 30, count: int = 1) -> str:
    return _wait_until(session, lambda screen: screen.count(text) >= count, repr(text), timeout)


def _wait_until(session: str, seen: Callable[[str], bool], what: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux("capture-pane", "-p", "-t", session)
        if seen(screen):
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{what} never appeared:\n{screen}")


@pytest.mark.parametrize(
    ("shell", "argv"), [("bash", ["bash", "--norc", "--noprofile"]), ("zsh", ["zsh", "-f"])]
)
def test_ctrl_g_puts_the_proposed_command_in_the_buffer(
    shell: str,
    argv: list[str],
    tmp_path: Path,
    script: Callable[..., str],
) -> None:
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{shell} is not installed")
    marker = tmp_path / "ran"
    proposal = f"ls -S | head -n 5 && touch {marker}"
    daemon = start_daemon("--model", script(cmd(proposal, "largest files")))
    rc = tmp_path / f"init.{shell}"
    rc.write_text(_snippet(shell))
    session = f"sa-{uuid.uuid4().hex[:6]}"
    env = [f"{k}={v}" for k, v in os.environ.items() if k.startswith("SHELLAGENT_")]
    try:
        _tmux(
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            "150",
            "-y",
            "30",
            *[x for kv in env for x in ("-e", kv)],
            "-e",
            "PS1=$ ",
            " ".join(argv),
        )
        # the binding is in place (and the shell idle at its prompt) before a key is typed:
        # a shell that is still starting may drop typeahead
        _tmux("send-keys", "-t", session, f"source {rc}; echo sourced-$((40 + 2))", "Enter")
        _wait_for(session, "sourced-42")
        time.sleep(0.2)
        _tmux("send-keys", "-t", session, "show the biggest files here")
        _wait_for(session, "biggest files here")
        _tmux("send-keys", "-t", session, "C-g")
        _wait_for(session, "head -n 5 && touch")
        # the verdict is shown beside it; zsh may draw it a moment after the buffer
        screen = _wait_for(session, "policy: ask")
        last = [line for line in screen.splitlines() if "head -n 5" in line][-1]
        assert last.strip().endswith(f"touch {marker}")  # the whole command, in the buffer
        time.sleep(0.5)
        assert not marker.exists()  # nothing ran
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        stop(daemon)


def _snippet(shell: str) -> str:
    from shellagent.cli.cmd_shell_init import snippet

    return snippet(shell, "g", ASK)


def test_shell_init_prints_each_shell_s_binding_and_refuses_odd_keys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    expected = {
        "bash": "bind -x '\"\\C-x\": __shellagent_propose'",
        "zsh": "bindkey '^X' __shellagent_propose",
        "fish": "bind \\cx __shellagent_propose",
    }
    for shell, line in expected.items():
        assert main(["shell-init", shell, "--key", "ctrl-x"]) == 0
        out = capsys.readouterr().out
        assert line in out and "--propose" in out, out
    assert main(["shell-init", "bash", "--key", "alt-q"]) == 2
    assert "unsupported key" in capsys.readouterr().err


def test_ask_without_a_task_is_a_conversation_in_a_real_terminal(
    tmp_path: Path, script: Callable[..., str]
) -> None:
    spec = tmp_path / "by_task.json"
    spec.write_text(
        json.dumps(
            {
                "by_task": {
                    "first task": [cmd("export SEEN=remembered-42"), done("set")],
                    "second task": [cmd('echo "value: $SEEN"'), done("shown")],
                }
            }
        )
    )
    daemon = start_daemon("--model", f"scripted:{spec}")
    session = f"sa-{uuid.uuid4().hex[:6]}"
    env = [f"{k}={v}" for k, v in os.environ.items() if k.startswith("SHELLAGENT_")]
    status = tmp_path / "status"
    try:
        _tmux(
            "new-session", "-d", "-s", session, "-x", "150", "-y", "40",
            *[x for kv in env for x in ("-e", kv)],
            "-c", str(tmp_path),
            f"{ASK} -y; echo exit=$? > {status}; sleep 30",
        )  # fmt: skip
        _wait_for(session, "ask>")
        _tmux("send-keys", "-t", session, "first task", "Enter")
        _wait_for(session, "ask>", count=2)
        _tmux("send-keys", "-t", session, "second task", "Enter")
        screen = _wait_for(session, "value: remembered-42")
        assert "continuing session" in screen
        _wait_for(session, "ask>", count=3)
        _tmux("send-keys", "-t", session, "C-d")
        deadline = time.monotonic() + 20
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert status.read_text().strip() == f"exit={UNCHECKED}"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        stop(daemon)


@pytest.mark.slow
def test_ctrl_g_shows_a_spinner_with_the_text_and_the_proposal_is_no_cancelled_session(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "slow.json"
    spec.write_text(json.dumps([{"text": cmd("ls -S | head -n 5", "largest"), "delay_s": 3}]))
    daemon = start_daemon("--model", f"scripted:{spec}")
    rc = tmp_path / "init.bash"
    rc.write_text(_snippet("bash"))
    session = f"sa-{uuid.uuid4().hex[:6]}"
    env = [f"{k}={v}" for k, v in os.environ.items() if k.startswith(("SHELLAGENT_", "PYTHONPATH"))]
    try:
        _tmux(
            "new-session", "-d", "-s", session, "-x", "150", "-y", "30",
            *[x for kv in env for x in ("-e", kv)],
            "-e", "PS1=$ ",
            "bash --norc --noprofile",
        )  # fmt: skip
        _tmux("send-keys", "-t", session, f"source {rc}; echo sourced-$((40 + 2))", "Enter")
        _wait_for(session, "sourced-42")
        time.sleep(0.2)
        _tmux("send-keys", "-t", session, "show the biggest files here")
        _wait_for(session, "biggest files here")
        _tmux("send-keys", "-t", session, "C-g")
        # while the model works: a spinner that still shows what was typed
        _wait_for(session, "proposing a command for: show the biggest files here")
        _wait_for(session, "policy: allow")
        # the proposal, in the line (the readline buffer is redrawn just after the note)
        screen = _wait_until(
            session, lambda s: s.rstrip().endswith("ls -S | head -n 5"), "the proposal", 10
        )
        assert "proposing a command for" not in screen  # erased once the proposal is in
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        stop(daemon)
    data = Path(os.environ["SHELLAGENT_DATA_DIR"]) / "transcripts"
    (transcript,) = data.glob("*.jsonl")
    end = json.loads(transcript.read_text().splitlines()[-1])
    assert end["type"] == "end" and end["reason"] == "finished", end
    assert "proposed `ls -S | head -n 5`" in end["summary"]
