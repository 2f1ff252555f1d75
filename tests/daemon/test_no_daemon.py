"""``ask --no-daemon``: the daemon's task machinery served in-process, so the same events,
screen and exit status as through a daemon, with no daemon started and Ctrl-C cancelling."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from shellagent.cli.ask_client import socket_path
from tests.daemon.conftest import (
    UNCHECKED,
    DaemonProc,
    ask_cli,
    cmd,
    done,
    processes_matching,
    transcript_events,
)


def _kinds(stdout: str) -> list[str]:
    """Event types in order; "queued" depends on timing (the model still loading)."""
    kinds = [json.loads(line)["type"] for line in stdout.splitlines()]
    return [k for k in kinds if k != "queued"]


def test_no_daemon_streams_the_same_events_as_the_daemon_and_starts_none(
    script: Callable[..., str], workdir: Path, daemon: DaemonProc
) -> None:
    replies = (cmd("echo hi", "greet"), done("said hi"))
    through_daemon = ask_cli("--json", "-y", "--model", script(*replies), "hi", cwd=workdir)
    daemon.proc.terminate()
    daemon.proc.wait(10)
    local = ask_cli("--json", "-y", "--no-daemon", "--model", script(*replies), "hi", cwd=workdir)
    assert local.returncode == through_daemon.returncode == UNCHECKED, local.stderr
    assert _kinds(local.stdout) == _kinds(through_daemon.stdout)
    assert not socket_path().exists(), "--no-daemon must not start a daemon"
    summary = json.loads(local.stdout.splitlines()[-1])
    assert summary["commands"] == ["echo hi"] and summary["summary"] == "said hi"
    assert transcript_events(summary["session"])[-1]["reason"] == "finished"


def test_no_daemon_shows_the_same_screen(script: Callable[..., str], workdir: Path) -> None:
    done_ = ask_cli(
        "-y", "--no-daemon", "--model", script(cmd("echo hi", "greet"), done("said hi")), "hi",
        cwd=workdir,
    )  # fmt: skip
    assert done_.returncode == UNCHECKED, done_.stderr
    assert "[1] $ echo hi" in done_.stdout and "why: greet" in done_.stdout
    assert "policy: allow" in done_.stdout and "unverified, the model says: said hi" in done_.stdout


def test_ctrl_c_in_no_daemon_cancels_the_running_command(
    script: Callable[..., str], workdir: Path
) -> None:
    model = script(cmd("echo go; sleep 4244"), done())
    with subprocess.Popen(
        [sys.executable, "-m", "shellagent.cli.ask", "--no-daemon", "-y", "--json",
         "--model", model, "wait"],
        cwd=workdir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    ) as proc:  # fmt: skip
        assert proc.stdout is not None
        for line in proc.stdout:
            if json.loads(line)["type"] == "output":
                break
        proc.send_signal(signal.SIGINT)
        rest = proc.stdout.read()
        assert proc.wait(30) == 130
    summary = json.loads(rest.splitlines()[-1])
    assert summary["reason"] == "cancelled"
    assert transcript_events(summary["session"])[-1]["reason"] == "cancelled"
    deadline = time.monotonic() + 10
    while processes_matching("sleep 4244") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not processes_matching("sleep 4244")


def test_ctrl_c_shows_cancelled_not_a_timeout(script: Callable[..., str], workdir: Path) -> None:
    model = script(cmd("echo go; sleep 4245"), done())
    with subprocess.Popen(
        [sys.executable, "-m", "shellagent.cli.ask", "--no-daemon", "-y", "--model", model, "wait"],
        cwd=workdir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    ) as proc:  # fmt: skip
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() == "go":
                break
        proc.send_signal(signal.SIGINT)
        rest = proc.stdout.read()
        assert proc.wait(30) == 130
    assert "[cancelled after" in rest and "timed out" not in rest and "Killed" not in rest
