"""Unix sockets and other IPC: what the sandbox's commands can reach (review 3, M2 sockets;
review 2's residual: an allowed command driving a server an earlier command started).

- A host service listening on a socket file outside /tmp and /run is hidden from every
  command (``unixsockets.py``); one behind an overlay refuses the connection.
- A command the policy allowed as read-only opens no Unix socket at all, and no System V
  or POSIX message queue, semaphore or shared memory (``seccomp.metadata_program``).
"""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shellagent.sandbox import Sandbox, get_profile
from shellagent.sandbox.unixsockets import bound_paths, host_sockets
from tests.unprivileged import SYSTEM_PYTHON, make_traversable, run_as_nobody

Runner = Callable[..., list[dict[str, Any]]]

CONNECT_PY = """
import socket, sys
for p in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(p); print(p, "CONNECTED")
    except OSError as e:
        print(p, e.strerror)
"""
CONNECT = f"python3 -c {shlex.quote(CONNECT_PY)} "


class HostServer:
    """A Unix stream server on the host that counts the connections it accepts."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.accepted = 0
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(str(path))
        os.chmod(path, 0o777)  # any local user may connect: the sandbox is what must stop it
        self.sock.listen()
        self.sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()
        self.path.unlink(missing_ok=True)


@pytest.fixture
def host_servers(outside_tmp: Path, workspace: Path) -> Iterator[list[HostServer]]:
    """A host service's socket in a system-like place (``/srv``'s stand-in) and one in the
    project directory (a writable grant)."""
    srv = outside_tmp / "srv"
    srv.mkdir()
    make_traversable(srv)
    servers = [HostServer(srv / "app.sock"), HostServer(workspace / "dev.sock")]
    yield servers
    for server in servers:
        server.close()


def test_host_sockets_outside_tmp_and_run_are_found_and_checked(
    host_servers: list[HostServer], workspace: Path
) -> None:
    paths = [s.path for s in host_servers]
    assert {str(p) for p in paths} <= set(bound_paths())
    found = host_sockets(overlaid=[], shown=[workspace])
    assert set(paths) <= set(found)
    assert all(p.is_socket() for p in found)
    # below an overlaid tree nothing is hidden: the overlay refuses connections itself
    assert not set(paths) & set(host_sockets(overlaid=[workspace.parent.parent], shown=[]))


def test_a_host_socket_file_is_out_of_reach_of_every_command(
    workspace: Path, host_servers: list[HostServer]
) -> None:
    targets = " ".join(str(s.path) for s in host_servers)
    probe = subprocess.run(
        ["python3", "-c", CONNECT_PY, *targets.split()], capture_output=True, text=True
    )
    assert probe.stdout.count("CONNECTED") == 2  # positive control: on the host they answer
    before = [s.accepted for s in host_servers]
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as s:
        approved = s.run(CONNECT + targets)
        confined = s.run(CONNECT + targets, confined=True)
    assert "CONNECTED" not in approved.output, approved.output
    assert "CONNECTED" not in confined.output and confined.refused, confined.output
    assert [s.accepted for s in host_servers] == before


def test_a_host_socket_file_is_out_of_reach_for_an_unprivileged_user(
    as_nobody: Runner, outside_tmp: Path
) -> None:
    srv = outside_tmp / "srv-nobody"
    srv.mkdir()
    make_traversable(srv)
    server = HostServer(srv / "app.sock")
    try:
        control = run_as_nobody(
            [SYSTEM_PYTHON, "-c", CONNECT_PY, str(server.path)],
            {"PATH": "/usr/bin:/bin"},
        )
        assert "CONNECTED" in control.stdout, control  # nobody reaches it from the host
        results = as_nobody([CONNECT + str(server.path)] * 2, confined=[False, True])
    finally:
        server.close()
    assert all("CONNECTED" not in r["output"] for r in results), results
    assert server.accepted == 1  # the control's


# A server an approved command started, and what a later command may say to it.
INNER_SERVER = (
    "python3 -c 'import socket, time\n"
    's = socket.socket(socket.AF_UNIX); s.bind("inner.sock"); s.listen()\n'
    'd = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind("inner.dgram")\n'
    "time.sleep(60)' >/dev/null 2>&1 & "
    "for i in $(seq 50); do [ -S inner.dgram ] && break; sleep 0.1; done"
)
DGRAM = (
    "python3 -c 'import socket\n"
    "a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
    'a.sendto(b"order", "inner.dgram"); print("SENT")\''
)
STREAM_PAIR = (
    "python3 -c 'import socket; a, b = socket.socketpair(); a.send(b\"x\"); print(b.recv(1))'"
)
SYSV = (
    "python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True)\n"
    "q = libc.msgget(0x5a5a, 0o1600)\n"
    'print("QUEUE" if q >= 0 else os.strerror(ctypes.get_errno()))\''
)


def _check_inner(results: list[tuple[str, bool]]) -> None:
    (
        (stream_c, refused_c),
        (stream_a, _),
        (dgram_c, _),
        (dgram_a, _),
        (pair_c, _),
        (sysv_c, _),
        (
            sysv_a,
            _,
        ),
    ) = results
    assert "CONNECTED" not in stream_c and refused_c, stream_c
    assert "CONNECTED" in stream_a  # positive control: approved commands still reach it
    assert "SENT" not in dgram_c, dgram_c
    assert "SENT" in dgram_a
    assert pair_c == "b'x'\n"  # a stream pair is a pipe: still fine
    assert "QUEUE" not in sysv_c and "not permitted" in sysv_c, sysv_c
    assert "QUEUE" in sysv_a


def _inner_probes() -> tuple[list[str], list[bool]]:
    commands = [
        CONNECT + "inner.sock",
        CONNECT + "inner.sock",
        DGRAM,
        DGRAM,
        STREAM_PAIR,
        SYSV,
        SYSV,
    ]
    return commands, [True, False, True, False, True, True, False]


def test_an_allowed_command_cannot_drive_a_server_an_earlier_command_started(
    session: Sandbox,
) -> None:
    assert session.run(INNER_SERVER, timeout=20).exit_code == 0
    commands, confined = _inner_probes()
    results = [session.run(c, confined=k) for c, k in zip(commands, confined, strict=True)]
    _check_inner([(r.output, r.refused) for r in results])


def test_an_allowed_command_cannot_drive_an_earlier_server_for_an_unprivileged_user(
    as_nobody: Runner,
) -> None:
    commands, confined = _inner_probes()
    results = as_nobody([INNER_SERVER, *commands], confined=[False, *confined], timeout=20)
    _check_inner([(r["output"], r["refused"]) for r in results[1:]])


def test_everyday_read_only_commands_still_work_without_unix_sockets(session: Sandbox) -> None:
    # name lookups try nscd's and systemd's sockets first and fall back quietly
    for command in ("ls -l /etc/hostname", "id", "stat -c %U /etc/hostname", "ps aux | wc -l"):
        result = session.run(command, confined=True)
        assert result.exit_code == 0 and not result.refused, (command, result.output)


def test_a_socket_the_sandbox_could_not_reach_is_left_alone(
    outside_tmp: Path, workspace: Path
) -> None:
    if os.getuid() != 0:
        pytest.skip("needs a directory of another user's")
    private = outside_tmp / "theirs"
    private.mkdir()
    server = HostServer(private / "app.sock")
    try:
        os.chown(private, 65534, 65534)
        private.chmod(0o700)  # root on the host may enter; root in the sandbox may not
        assert server.path not in host_sockets(overlaid=[], shown=[])
        with Sandbox(get_profile("default", cwd=workspace), timeout=10) as s:
            assert s.run("echo up").output == "up\n"  # bwrap did not fail on it
    finally:
        os.chown(private, 0, 0)
        server.close()


@pytest.mark.parametrize("which", ["outside a grant", "in the project"])
def test_a_host_socket_that_went_away_before_bwrap_started_leaves_nothing_behind(
    workspace: Path, host_servers: list[HostServer], monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    # The race cannot be timed from outside, so a server stops right after the plan is
    # made, before bwrap mounts over its socket: outside a grant bwrap cannot make a mount
    # point in its place (it fails: the sandbox starts again without it); in the project it
    # makes an empty file there (removed once the sandbox is up).
    from shellagent.sandbox import mounts

    server = host_servers[0 if which == "outside a grant" else 1]
    planned = mounts.default_plan
    plans: list[mounts.MountPlan] = []

    def plan_then_stop(*args: Any, **kwargs: Any) -> mounts.MountPlan:
        plan = planned(*args, **kwargs)
        plans.append(plan)
        if len(plans) == 1:
            server.close()
        return plan

    monkeypatch.setattr(mounts, "default_plan", plan_then_stop)
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as s:
        assert s.run("echo up").output == "up\n"
        assert not os.path.lexists(server.path)  # nothing left where it was
    assert server.path in plans[0].sockets
    assert len(plans) == (2 if which == "outside a grant" else 1)
