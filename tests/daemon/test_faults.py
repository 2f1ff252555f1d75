"""Faults: clients killed mid-command, a daemon killed mid-task, floods of bad lines."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from shellagent.cli.ask_client import Connection, connect, request
from shellagent.events import Ask, Cancel, DaemonStatus, Failure, Status, Stop, Summary
from tests.daemon.conftest import (
    UNCHECKED,
    DaemonProc,
    ask_cli,
    ask_inprocess,
    cmd,
    done,
    processes_matching,
    shellagent_cli,
    stop,
    transcript_events,
)

CLIENT = r"""
import os, sys
from shellagent.cli.ask_client import Connection, connect
from shellagent.events import Ask
conn = Connection(connect())
conn.send(Ask(task="sleepy", cwd=sys.argv[1], model=sys.argv[2], yes=True))
for message in conn.messages():
    print(message.kind, flush=True)
"""


def _wait(predicate: Callable[[], bool], timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _status() -> DaemonStatus:
    status = request(Status())
    assert isinstance(status, DaemonStatus), status
    return status


def _client_until_output(workdir: Path, model: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", CLIENT, str(workdir), model], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == "output":
            return proc
    raise AssertionError("the command never started")


def test_killing_the_client_mid_command_kills_the_command_and_the_sandbox(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    model = script(cmd("echo started; sleep 4242", "wait"), done())
    client = _client_until_output(workdir, model)
    assert _wait(lambda: bool(processes_matching("sleep 4242")))
    client.kill()
    client.communicate()
    assert _wait(lambda: not processes_matching("sleep 4242"))
    assert _wait(lambda: not _status().sessions)
    ended = [
        json.loads(line)
        for f in (Path(os.environ["SHELLAGENT_DATA_DIR"]) / "transcripts").iterdir()
        for line in f.read_text().split("\n")
        if line
    ]
    assert ended[-1]["type"] == "end" and ended[-1]["reason"] == "cancelled"
    assert daemon.alive()
    run = ask_inprocess("after", script(cmd("echo still here"), done()), workdir, yes=True)
    assert "still here" in run.out


def test_cancel_stops_the_running_command_and_the_transcript_says_cancelled(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    conn = Connection(connect())
    conn.send(
        Ask(task="t", cwd=str(workdir), yes=True, model=script(cmd("echo go; sleep 4243"), done()))
    )
    seen = []
    for message in conn.messages():
        seen.append(message)
        if message.kind == "output":
            conn.send(Cancel())
        if message.kind == "summary":
            break
    conn.close()
    summary = seen[-1]
    assert isinstance(summary, Summary) and summary.reason == "cancelled"
    assert transcript_events(summary.session)[-1]["reason"] == "cancelled"
    assert _wait(lambda: not processes_matching("sleep 4243"))


def test_after_kill_9_of_the_daemon_the_next_ask_restarts_it_and_the_transcript_reads(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    from shellagent.transcript import read_transcript

    client = _client_until_output(workdir, script(cmd("echo started; sleep 4244"), done()))
    daemon.proc.send_signal(signal.SIGKILL)
    daemon.proc.wait()
    client.communicate(timeout=10)
    files = list((Path(os.environ["SHELLAGENT_DATA_DIR"]) / "transcripts").iterdir())
    transcript = read_transcript(files[0])
    assert transcript.start is not None and transcript.start.task == "sleepy"
    model = script(cmd("echo back again"), done("ok"))
    out = ask_cli("-y", "--model", model, "again", cwd=workdir)
    assert out.returncode == UNCHECKED, out.stderr
    assert "starting it" in out.stderr and "back again" in out.stdout
    request(Stop())
    for pid in processes_matching("sleep 4244"):  # the killed daemon's orphaned command
        os.kill(pid, signal.SIGKILL)


def test_a_thousand_malformed_messages_then_a_valid_ask_is_still_answered(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    flood = [
        b"not json\n",
        b"[1,2]\n",
        b'{"v":9,"type":"ask"}\n',
        b'{"v":1}\n',
        b'{"v":1,"type":"ask","task":"x","cwd":"/","evil":1}\n',
        b'{"v":1,"type":"approval","id":1,"decision":"approve","command":"x"}\n',
        b"\xff\xfe\n",
        b'{"v":1,"type":"cancel"}\n',
    ]
    sock = connect()
    conn = Connection(sock)
    for i in range(1000):
        sock.sendall(flood[i % len(flood)])
    errors = [conn.read() for _ in range(1000)]
    failures = [e for e in errors if isinstance(e, Failure) and not e.fatal]
    assert len(failures) == len(errors)
    assert {e.code for e in failures} >= {"malformed", "unsupported_version", "out_of_order"}
    conn.send(
        Ask(task="t", cwd=str(workdir), yes=True, model=script(cmd("echo answered"), done("ok")))
    )
    kinds = [m.kind for m in conn.messages()]
    assert kinds[-1] == "summary"
    conn.close()


def test_an_oversized_line_gets_an_error_and_the_connection_goes_on(
    daemon: DaemonProc,
) -> None:
    sock = connect()
    conn = Connection(sock)
    sock.sendall(b"x" * (1024 * 1024 + 10) + b"\n" + b'{"v":1,"type":"status"}\n')
    first, second = conn.read(), conn.read()
    assert isinstance(first, Failure) and first.code == "too_long"
    assert isinstance(second, DaemonStatus)
    conn.close()


def test_daemon_status_shows_model_uptime_sessions_and_memory(daemon: DaemonProc) -> None:
    out = shellagent_cli("daemon", "status", "--json")
    status = json.loads(out.stdout)
    assert status["running"] and status["pid"] == daemon.proc.pid
    assert status["rss_kb"] > 1000 and status["uptime_s"] >= 0
    assert status["sessions"] == [] and "spec" in status["model"]
    text = shellagent_cli("daemon", "status").stdout
    assert "memory" in text and "sessions" in text and "model" in text


def test_daemon_stop_stops_it(daemon: DaemonProc) -> None:
    out = shellagent_cli("daemon", "stop")
    assert out.returncode == 0 and "stopped" in out.stdout
    assert daemon.proc.wait(10) == 0
    assert not daemon.socket.exists()
    sock = socket.socket(socket.AF_UNIX)
    assert sock.connect_ex(str(daemon.socket)) != 0
    sock.close()
    stop(daemon)


def test_the_daemon_refuses_to_start_with_a_policy_it_cannot_read(tmp_path: Path) -> None:
    from shellagent import paths

    config = paths.ensure_private_dir(paths.config_dir())
    (config / "policy.toml").write_text("[[rules]]\nid = 'x'\ndecision = 'sometimes'\n")
    proc = shellagent_cli("daemon", "run", "--quiet", timeout=60)
    assert proc.returncode == 2
    assert "policy.toml" in proc.stderr and "Traceback" not in proc.stderr


def test_a_missing_model_ends_the_task_with_exit_3_and_one_clear_error(
    daemon: DaemonProc, workdir: Path, tmp_path: Path
) -> None:
    run = ask_inprocess("list files", str(tmp_path / "missing.gguf"), workdir, yes=True)
    assert run.code == 3
    (error,) = run.of(Failure)
    assert error.fatal and error.exit_code == 3
    assert error.message.startswith("model file ")
    assert "shellagent model list" in error.message
