"""``ask`` sends nothing to a daemon socket that is not the user's own (security review L2).

A stand-in daemon, a real process listening on a real Unix socket, is set up the ways
another local user could: a runtime directory they created (what ``/tmp/shellagent-UID``
is when ``XDG_RUNTIME_DIR`` is unset), a socket of theirs inside the user's directory, a
socket file of the user's with their process behind it, a directory others may write.
``ask`` runs as a real subprocess, as root and as the unprivileged ``nobody``; each
refusal is one line with the fix and exit 3, and the stand-in records that not a single
byte reached it. Each case has a positive control: the same layout owned by the user,
where ``ask`` does connect and send the task.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.daemon.conftest import UNCHECKED
from tests.unprivileged import NOBODY, SYSTEM_PYTHON, runnable_site, unprivileged_site

pytestmark = pytest.mark.skipif(
    os.getuid() != 0 or not shutil.which("setpriv") or not Path(SYSTEM_PYTHON).exists(),
    reason="needs root, setpriv and the system Python to act as two other users",
)

OTHER = 4242  # the other local user (any uid with no other role on this machine)

# The stand-in daemon, started as root: makes the directory and binds the socket with the
# effective uid ``creator``, hands the socket file to ``owner``, then becomes ``listener``
# for good and listens. Every connection and every byte received goes to ``log``.
STANDIN = r"""
import json, os, socket, sys, time
spec = json.loads(sys.argv[1])
log = open(spec["log"], "ab", buffering=0)
path = os.path.join(spec["dir"], "daemon.sock")
os.setegid(spec["creator"]); os.seteuid(spec["creator"])
if spec["mkdir"]:
    os.mkdir(spec["dir"], spec["dir_mode"])
    os.chmod(spec["dir"], spec["dir_mode"])
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.bind(path)
os.seteuid(0); os.setegid(0)
os.chown(path, spec["owner"], spec["owner"])
os.chmod(path, 0o600)
os.setgroups([]); os.setresgid(*[spec["listener"]] * 3); os.setresuid(*[spec["listener"]] * 3)
sock.listen(4)
print("ready", flush=True)
sock.settimeout(30)
while True:
    try:
        conn, _ = sock.accept()
    except OSError:
        break
    log.write(b"[connected]")
    conn.settimeout(5)
    try:
        while data := conn.recv(65536):
            log.write(data)
            break  # one message is enough to show the task was sent
    except OSError:
        pass
    conn.close()
"""


@dataclass
class Standin:
    proc: subprocess.Popen[str]
    log: Path

    def received(self, until: bytes = b"") -> bytes:
        """What reached the stand-in, once it holds ``until`` or after a short wait (the
        client has exited by now: whatever it sent has arrived)."""
        deadline = time.monotonic() + (5 if until else 0.3)
        while time.monotonic() < deadline:
            data = self.log.read_bytes()
            if until and until in data:
                return data
            time.sleep(0.05)
        return self.log.read_bytes()


@pytest.fixture
def base() -> Iterator[Path]:
    """A short directory every uid may create in, like /tmp itself (socket paths are
    limited to 108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="sa-trust-", dir="/tmp"))
    path.chmod(0o1777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def standin(base: Path) -> Iterator[Callable[..., Standin]]:
    script = base / "standin.py"
    script.write_text(STANDIN)
    started: list[Standin] = []

    def start(
        runtime: Path,
        *,
        creator: int,
        owner: int,
        listener: int,
        mkdir: bool = True,
        dir_mode: int = 0o700,
    ) -> Standin:
        log = base / f"received-{len(started)}.log"
        log.touch()
        spec = {
            "dir": str(runtime),
            "creator": creator,
            "owner": owner,
            "listener": listener,
            "mkdir": mkdir,
            "dir_mode": dir_mode,
            "log": str(log),
        }
        proc = subprocess.Popen(
            [SYSTEM_PYTHON, str(script), json.dumps(spec)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n", proc.stderr
        started.append(Standin(proc, log))
        return started[-1]

    yield start
    for s in started:
        s.proc.kill()
        s.proc.communicate()


@pytest.fixture(scope="module")
def site() -> Iterator[Path]:
    """The package where ``nobody`` can import it (``ask``'s path needs only the stdlib).
    Not under pytest's temp root: a concurrent pytest run makes that 0700 again."""
    root = Path(tempfile.mkdtemp(prefix="sa-site-", dir="/tmp"))
    root.chmod(0o755)
    found = unprivileged_site(root)
    subprocess.run(["chmod", "-R", "a+rX", str(found)], check=True)
    yield found
    shutil.rmtree(root, ignore_errors=True)


def ask(
    victim: int, site: Path, runtime: Path | None, cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``ask -y TASK`` as ``victim``; ``runtime`` None: the default place, no XDG dir."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "SHELLAGENT_STATE_DIR": str(cwd / "st")}
    if runtime is not None:
        env["SHELLAGENT_RUNTIME_DIR"] = str(runtime)
    if victim == 0:
        argv = [sys.executable, "-m", "shellagent.cli.ask", "-y", "my secret task"]
    else:
        env["PYTHONPATH"] = str(site)
        argv = [
            "setpriv",
            f"--reuid={victim}",
            f"--regid={victim}",
            "--clear-groups",
            SYSTEM_PYTHON,
            "-m",
            "shellagent.cli.ask",
            "-y",
            "my secret task",
        ]
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


def refused(proc: subprocess.CompletedProcess[str], says: str) -> None:
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert says in proc.stderr and "XDG_RUNTIME_DIR" in proc.stderr, proc.stderr
    assert "starting it" not in proc.stderr  # no daemon was started over it


def sent_the_task(proc: subprocess.CompletedProcess[str], standin: Standin) -> None:
    """The positive control: ask trusted the socket and sent the task, then saw the
    stand-in hang up (exit 4: a daemon that goes away mid-task is an internal error)."""
    assert b"my secret task" in standin.received(until=b'"type":"ask"')
    assert proc.returncode == 4 and "went away" in proc.stderr, proc.stderr


@pytest.fixture(params=[0, NOBODY], ids=["as-root", "as-nobody"])
def victim(request: pytest.FixtureRequest, base: Path) -> int:
    uid: int = request.param
    home = base / "home"
    home.mkdir()
    os.chown(home, uid, uid)
    return uid


def test_a_runtime_dir_made_by_another_user_is_refused(
    victim: int, base: Path, site: Path, standin: Callable[..., Standin]
) -> None:
    theirs = standin(base / "run", creator=OTHER, owner=OTHER, listener=OTHER)
    proc = ask(victim, site, base / "run", base / "home")
    refused(proc, f"belongs to uid {OTHER}, not to you")
    assert theirs.received() == b""  # not even a connection


def test_the_same_layout_owned_by_the_user_is_trusted(
    victim: int, base: Path, site: Path, standin: Callable[..., Standin]
) -> None:
    mine = standin(base / "run", creator=victim, owner=victim, listener=victim)
    sent_the_task(ask(victim, site, base / "run", base / "home"), mine)


def test_another_users_socket_moved_into_the_users_own_dir_is_refused(
    victim: int, base: Path, site: Path, standin: Callable[..., Standin]
) -> None:
    theirs = standin(base / "theirs", creator=OTHER, owner=OTHER, listener=OTHER)
    run = base / "run"
    run.mkdir(mode=0o700)
    os.chown(run, victim, victim)
    os.rename(base / "theirs" / "daemon.sock", run / "daemon.sock")  # still their listener
    refused(
        ask(victim, site, run, base / "home"), f"socket {run}/daemon.sock belongs to uid {OTHER}"
    )
    assert theirs.received() == b""


def test_the_users_socket_file_with_another_users_process_behind_it_is_refused(
    victim: int, base: Path, site: Path, standin: Callable[..., Standin]
) -> None:
    run = base / "run"
    run.mkdir(mode=0o700)
    os.chown(run, victim, victim)
    theirs = standin(run, creator=0, owner=victim, listener=OTHER, mkdir=False)
    proc = ask(victim, site, run, base / "home")
    refused(proc, f"runs as uid {OTHER}, not as you; nothing was sent")
    assert theirs.received() == b"[connected]"  # the peer check needs a connection, no more


def test_a_runtime_dir_others_can_write_is_refused(
    victim: int, base: Path, site: Path, standin: Callable[..., Standin]
) -> None:
    theirs = standin(base / "run", creator=victim, owner=victim, listener=victim, dir_mode=0o1777)
    refused(ask(victim, site, base / "run", base / "home"), "can be written by others (mode 1777)")
    assert theirs.received() == b""


def test_the_review_repro_a_socket_planted_where_the_runtime_dir_defaults_to(
    base: Path, standin: Callable[..., Standin]
) -> None:
    """No XDG_RUNTIME_DIR: ``nobody``'s daemon would live in /tmp/shellagent-65534, which
    another user created first, with their socket in it. ``ask`` sends them nothing and
    still works: it and the daemon it starts agree on a private directory of nobody's."""
    default = Path(f"/tmp/shellagent-{NOBODY}")
    if Path(f"/run/user/{NOBODY}").exists() or os.path.lexists(default):
        pytest.skip(f"{default} is in use or not the default here")
    site = runnable_site(base / "full")
    home = base / "home"
    (home / "work").mkdir(parents=True)
    script = base / "script.json"
    script.write_text(json.dumps([json.dumps({"cmd": "echo hi", "why": "x"}), '{"done": "ok"}']))
    script.chmod(0o644)
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(home)], check=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(site)}
    private: Path | None = None
    try:
        theirs = standin(default, creator=OTHER, owner=OTHER, listener=OTHER)
        argv = [SYSTEM_PYTHON, "-m", "shellagent.cli.ask", "-y", "--model", f"scripted:{script}"]
        proc = subprocess.run(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
            + ["my secret task"],
            capture_output=True,
            text=True,
            env=env,
            cwd=home / "work",
            timeout=120,
        )
        assert theirs.received() == b""  # not even a connection
        pointer = home / ".local/state/shellagent" / f"runtime-dir.{socket.gethostname()}"
        private = Path(pointer.read_text().strip())
        assert proc.returncode == UNCHECKED and "hi" in proc.stdout, proc.stderr
        assert private.parent == Path("/tmp") and private.name.startswith(f"shellagent-{NOBODY}-")
        st = os.lstat(private)
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (NOBODY, 0o700)
        assert stat.S_ISSOCK(os.lstat(private / "daemon.sock").st_mode)
    finally:
        if private is not None:  # the daemon ask started, by the pid it holds its lock with
            with contextlib.suppress(OSError, ValueError):
                os.kill(int((private / "daemon.lock").read_text()), signal.SIGTERM)
                time.sleep(0.5)
            shutil.rmtree(private, ignore_errors=True)
        shutil.rmtree(default, ignore_errors=True)
