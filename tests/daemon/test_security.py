"""Checklist G1-G9 against a real daemon: what is shown is what runs, the socket is
private at every instant and refuses other users, no TCP port, stale sockets and symlinks,
redacted 0600 logs and transcripts, concurrent clients kept apart."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.cli.display import reveal
from shellagent.events import InvalidReply
from tests.daemon.conftest import (
    DaemonProc,
    ask_inprocess,
    cmd,
    done,
    shellagent_cli,
    start_daemon,
    stop,
    transcript_events,
)

TRICKY = "echo safe\x1b[2K\r\u202e\u200b\u2028" + " " * 500 + "; echo pwned > flag"
# What a person can type into the edit prompt (ESC and CR are keys there, not text).
TYPED = "echo safe\u202e\u200b\u2028" + " " * 500 + "; echo pwned > flag"


def test_a_model_command_with_hidden_characters_is_refused_and_never_runs(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    run = ask_inprocess("trick", script(cmd(TRICKY, "harmless"), done("x")), workdir, keys=[])
    assert len(run.of(InvalidReply)) == 1
    ran = [e for e in transcript_events(run.summary.session) if e["type"] == "execution"]
    assert ran == [] and not (workdir / "flag").exists()


def test_hidden_characters_are_flagged_and_the_approved_bytes_are_the_ones_run(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    (workdir / "notes.txt").write_text("x\n")
    # Edit the proposed command into the tricky one: Ctrl-A, Ctrl-K, type, Enter.
    keys = ["e", "\x01\x0b" + TYPED + "\r", "n"]  # n: discard the change set
    run = ask_inprocess("trick", script(cmd("rm -f notes.txt"), done("x")), workdir, keys=keys)
    for marker in ("⟨U+202E⟩", "⟨U+200B⟩", "⟨U+2028⟩", "⟨500 spaces⟩"):
        assert marker in run.out
    assert "; echo pwned > flag" in run.out  # nothing pushed out of sight
    for warning in ("bidirectional", "zero-width", "separators", "500 spaces"):
        assert warning in run.out
    ran = [e for e in transcript_events(run.summary.session) if e["type"] == "execution"]
    assert [e["command"] for e in ran] == [TYPED]


def test_reveal_flags_every_kind_of_hidden_character() -> None:
    for text, expected in [
        ("a\x07b", "control"),
        ("a\u00a0b", "unusual space"),
        ("a\ufeffb", "zero-width"),
        ("a\u2066b", "bidirectional"),
        ("ls  ", "trailing"),
        ("a\nb", "newline"),
    ]:
        shown, flags = reveal(text)
        assert any(expected in f for f in flags), (text, flags)
        assert shown.isprintable()
    assert reveal("ls -la | grep x") == ("ls -la | grep x", [])


def test_an_approval_for_different_bytes_than_asked_is_refused_not_run(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    from shellagent.cli.ask_client import Connection, connect
    from shellagent.events import ApprovalNeeded, ApprovalReply, Ask, Failure

    conn = Connection(connect())
    conn.send(Ask(task="t", cwd=str(workdir), model=script(cmd("rm -f a"), done())))
    request = next(m for m in conn.messages() if isinstance(m, ApprovalNeeded))
    conn.send(ApprovalReply(id=request.id, decision="approve", command="rm -f b"))
    reply = conn.read()
    assert isinstance(reply, Failure) and reply.code == "out_of_order"
    conn.close()


def test_socket_is_private_at_every_instant_even_under_umask_000() -> None:
    runtime = Path(os.environ["SHELLAGENT_RUNTIME_DIR"])
    seen: list[tuple[int, int]] = []
    stop_flag = threading.Event()

    def watch() -> None:
        path = runtime / "daemon.sock"
        while not stop_flag.is_set():
            try:
                sock_mode = stat.S_IMODE(os.lstat(path).st_mode)
                dir_mode = stat.S_IMODE(os.lstat(runtime).st_mode)
                seen.append((sock_mode, dir_mode))
                s = socket.socket(socket.AF_UNIX)
                with contextlib.suppress(OSError):
                    s.connect(str(path))
                s.close()
            except FileNotFoundError:
                pass

    old = os.umask(0)
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        d = start_daemon()
    finally:
        os.umask(old)
    time.sleep(0.3)
    stop_flag.set()
    watcher.join()
    try:
        assert seen, "the watcher never saw the socket"
        assert all(sock & 0o077 == 0 and dir_mode == 0o700 for sock, dir_mode in seen)
        assert stat.S_IMODE(os.lstat(d.socket).st_mode) == 0o600
    finally:
        stop(d)


PEER = r"""
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'{"v":1,"type":"status"}\n')
print(s.recv(4096).decode())
"""


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to connect as another user")
def test_another_uid_is_refused_even_when_the_socket_mode_is_loosened(
    daemon: DaemonProc,
) -> None:
    os.chmod(daemon.runtime.parent, 0o755)
    os.chmod(daemon.runtime, 0o755)
    os.chmod(daemon.socket, 0o777)
    out = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
            PEER,
            str(daemon.socket),
        ],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert '"code":"refused"' in out.stdout, out.stderr
    mine = subprocess.run(
        ["/usr/bin/python3", "-c", PEER, str(daemon.socket)],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert '"type":"status"' in mine.stdout


def test_the_daemon_listens_on_no_network_port(daemon: DaemonProc) -> None:
    inodes = set()
    for fd in Path(f"/proc/{daemon.proc.pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except FileNotFoundError:  # closed since the listing (a worker's short-lived fd)
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    assert inodes
    for table in ("tcp", "tcp6", "udp", "udp6"):
        rows = Path(f"/proc/net/{table}").read_text().splitlines()[1:]
        assert not {row.split()[9] for row in rows} & inodes, table


def test_a_symlink_at_the_socket_path_is_removed_not_followed(tmp_path: Path) -> None:
    runtime = Path(os.environ["SHELLAGENT_RUNTIME_DIR"])
    runtime.mkdir(mode=0o700)
    target = tmp_path / "elsewhere"
    target.write_text("precious")
    (runtime / "daemon.sock").symlink_to(target)
    d = start_daemon()
    try:
        assert stat.S_ISSOCK(os.lstat(d.socket).st_mode)
        assert target.read_text() == "precious"
    finally:
        stop(d)


def test_a_stale_socket_is_replaced_and_a_runtime_dir_symlink_refused(tmp_path: Path) -> None:
    runtime = Path(os.environ["SHELLAGENT_RUNTIME_DIR"])
    runtime.mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(runtime / "daemon.sock"))
    stale.close()
    d = start_daemon()
    stop(d)
    os.rename(runtime, tmp_path / "real")
    runtime.symlink_to(tmp_path / "real")
    out = shellagent_cli("daemon", "run", "--quiet")
    assert out.returncode == 3 and "symbolic link" in out.stderr


def test_a_second_daemon_refuses_to_start(daemon: DaemonProc) -> None:
    out = shellagent_cli("daemon", "run", "--quiet")
    assert out.returncode == 3 and "already running" in out.stderr
    assert daemon.alive()


def test_secrets_are_redacted_in_transcripts_and_logs_and_output_never_logged(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    secret = "sk-ant-api03-" + "Q" * 40
    (workdir / ".creds").write_text(f"token={secret}\nOUTPUT-ONLY-MARKER\n")
    model = script(cmd(f"echo {secret}; cat .creds", "show"), done("shown"))
    run = ask_inprocess("show", model, workdir, yes=True)
    assert secret in run.out  # the user sees their own output
    transcript = Path(os.environ["SHELLAGENT_DATA_DIR"]) / "transcripts"
    files = list(transcript.iterdir())
    log = daemon.log.read_text()
    for path in [*files, daemon.log]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert secret not in path.read_text()
    assert stat.S_IMODE(transcript.stat().st_mode) == 0o700
    assert "REDACTED" in files[0].read_text()
    assert "OUTPUT-ONLY-MARKER" not in log and "started" in log


def test_two_clients_at_once_get_their_own_sessions_and_unmixed_output(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    results = {}

    def client(name: str) -> None:
        loop = f"for i in $(seq 1 200); do echo {name}-$i; done"
        model = script(cmd(loop), cmd("pwd; echo $MARK"), done(name))
        results[name] = ask_inprocess(name, model, workdir, yes=True)

    threads = [threading.Thread(target=client, args=(n,)) for n in ("alpha", "omega")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    a, b = results["alpha"], results["omega"]
    assert a.summary.session != b.summary.session
    assert "alpha-200" in a.out and "omega" not in a.out.replace(b.summary.session, "")
    assert "omega-200" in b.out and "alpha" not in b.out.replace(a.summary.session, "")
