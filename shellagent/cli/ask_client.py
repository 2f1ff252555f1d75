"""``ask`` through the daemon: connect (starting it if needed), send the task, follow it.

Standard library only, like everything on ``ask``'s start-up path (``shellagent.paths``
imports platformdirs only when a non-runtime directory is asked for). Rendering and
prompting live in ``ask_ui``.

Before anything is sent, ``connect`` makes sure the socket is the user's own daemon: the
runtime directory and the socket are looked at without following links and must belong to
this user and be writable by nobody else, and the process at the other end must run as
this user (``SO_PEERCRED``). Without this, another local user who pre-created
``/tmp/shellagent-UID/daemon.sock`` (where the socket lives when ``XDG_RUNTIME_DIR`` is
unset: cron, ssh without a login session) would receive the task and the working
directory and could show made-up proposals. A refusal is ``UntrustedDaemon`` (exit 3),
and no daemon is started over it.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import socket
import stat
import struct
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from shellagent import paths, protocol
from shellagent.errors import EnvironmentProblem, InternalError, ShellagentError
from shellagent.events import (
    Accepted,
    ApprovalNeeded,
    Ask,
    Cancel,
    ChangesReady,
    ChangesReply,
    ChoiceReply,
    ChoiceRequest,
    ClientMessage,
    ConfirmReply,
    ConfirmRequest,
    Failure,
    Summary,
    WireEvent,
)

if TYPE_CHECKING:
    from shellagent.cli.ask_ui import AskUI
    from shellagent.model.pool import ModelPool

START_TIMEOUT_S = 30.0


def socket_path() -> Path:
    return paths.runtime_dir() / protocol.SOCKET_NAME


class UntrustedDaemon(EnvironmentProblem):
    """The daemon socket, its directory or the process behind it is not this user's."""


def connect(path: Path | None = None) -> socket.socket:
    """A connected socket to this user's daemon.

    ``OSError`` (``FileNotFoundError``, ``ConnectionRefusedError``) when none runs;
    ``UntrustedDaemon`` when what is there belongs to someone else.
    """
    path = path or socket_path()
    check_owned(path.parent, "directory")
    check_owned(path, "socket")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        sock.close()
        raise
    pid, uid, _gid = struct.unpack("3i", creds)
    if uid != os.getuid():
        sock.close()
        raise UntrustedDaemon(
            f"the process serving {path} (pid {pid}) runs as uid {uid}, not as you; "
            "nothing was sent to it",
            hint=_FIX,
        )
    return sock


_FIX = (
    "another user may be posing as your daemon: set XDG_RUNTIME_DIR or "
    "SHELLAGENT_RUNTIME_DIR to a directory only you can write"
)


def check_owned(path: Path, what: str) -> None:
    """``path`` (a directory, or the socket; never followed) is this user's and no one else
    can write it. A missing path is ``FileNotFoundError`` (no daemon yet); a symbolic link
    at the socket path, in a directory only this user can write, is taken for no daemon
    either: it is never connected through, and the daemon replaces it when it starts."""
    st = os.lstat(path)
    if what == "socket" and stat.S_ISLNK(st.st_mode):
        raise ConnectionRefusedError(errno.ECONNREFUSED, "a symbolic link, not a socket")
    if not (stat.S_ISDIR(st.st_mode) if what == "directory" else stat.S_ISSOCK(st.st_mode)):
        found = "a symbolic link" if stat.S_ISLNK(st.st_mode) else f"not a {what}"
        raise UntrustedDaemon(
            f"the daemon's {what} {path} is {found}", hint=f"move it away, or {_FIX}"
        )
    if st.st_uid != os.getuid():
        raise UntrustedDaemon(
            f"the daemon's {what} {path} belongs to uid {st.st_uid}, not to you", hint=_FIX
        )
    if st.st_mode & 0o022:
        raise UntrustedDaemon(
            f"the daemon's {what} {path} can be written by others "
            f"(mode {stat.S_IMODE(st.st_mode):04o})",
            hint=f"if it is yours, chmod go-w {path}; otherwise {_FIX}",
        )


def start_daemon(*, quiet: bool = False) -> float:
    """Start ``shellagent daemon run`` in the background; seconds until it accepted us."""
    import subprocess

    started = time.monotonic()
    if not quiet:
        print("shellagent: the daemon is not running; starting it", file=sys.stderr)
    subprocess.Popen(
        [sys.executable, "-m", "shellagent", "daemon", "run", "--quiet"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    while time.monotonic() - started < START_TIMEOUT_S:
        try:
            connect().close()
            return time.monotonic() - started
        except OSError:
            time.sleep(0.02)
    raise EnvironmentProblem(
        "the shellagent daemon did not start",
        hint="run `shellagent daemon run` to see why, or use ask --no-daemon",
    )


def connect_or_start(*, quiet: bool = False) -> socket.socket:
    try:
        return connect()
    except OSError:
        pass
    took = start_daemon(quiet=quiet)
    if not quiet:
        print(f"shellagent: daemon ready in {took:.1f}s", file=sys.stderr)
    return connect()


class Connection:
    """Line-delimited JSON over the daemon socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buf = b""

    def send(self, message: ClientMessage) -> None:
        self.sock.sendall(protocol.encode_message(message))

    def read(self) -> WireEvent | None:
        """The next event, or None once the daemon closed the connection.

        Interrupting it (Ctrl-C) loses nothing: a partial line stays buffered. A line that
        is not an event this version knows is a ``ShellagentError``.
        """
        while True:
            newline = self._buf.find(b"\n")
            if newline >= 0:
                line, self._buf = self._buf[: newline + 1], self._buf[newline + 1 :]
                try:
                    return protocol.decode_event(line)
                except protocol.ProtocolError as exc:
                    raise EnvironmentProblem(
                        f"the daemon sent a message this ask does not understand: {exc}",
                        hint="a daemon of another version may be running: "
                        "`shellagent daemon stop`, then ask again",
                    ) from None
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self._buf += chunk

    def messages(self) -> Iterator[WireEvent]:
        """Events until the daemon closes the connection."""
        while (message := self.read()) is not None:
            yield message

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def request(message: ClientMessage) -> WireEvent:
    """Send one message to a running daemon and return its first reply."""
    conn = Connection(connect())
    try:
        conn.send(message)
        for reply in conn.messages():
            return reply
    finally:
        conn.close()
    raise ConnectionError("the daemon closed the connection without answering")


def run_via_daemon(args: argparse.Namespace, ui: AskUI | None = None) -> int:
    """The default ``ask``: the task runs in the daemon; this process shows and asks."""
    return run_on(lambda: Connection(connect_or_start(quiet=args.json)), args, ui)


def run_in_process(
    args: argparse.Namespace, ui: AskUI | None = None, pool: ModelPool | None = None
) -> int:
    """``ask --no-daemon``: the daemon's task machinery, served in this process over a socket
    pair, so the run looks and behaves exactly like one through the daemon. ``pool`` is a
    model pool to reuse (an interactive session's); without one the model is loaded here and
    unloaded at the end."""
    import threading

    from shellagent.daemon.server import Daemon, configured_pool
    from shellagent.jobs import Installer

    own_pool = pool is None
    pool = pool or configured_pool(args.model)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    server = threading.Thread(
        target=Daemon(paths.runtime_dir(), pool, job_installer=Installer()).serve_one,
        args=(theirs,),
        daemon=True,
    )
    server.start()
    try:
        return run_on(lambda: Connection(ours), args, ui)
    finally:
        ours.close()
        server.join(timeout=10)
        if own_pool:
            pool.close()


def run_on(
    connect_to: Callable[[], Connection], args: argparse.Namespace, ui: AskUI | None = None
) -> int:
    """Send the task over the connection ``connect_to`` opens and follow it to the end."""
    from shellagent.cli.ask_ui import AskUI

    ui = ui or AskUI.for_terminal(json_lines=args.json, dry_run=args.dry_run)
    interactive = bool(ui.can_prompt)
    if not interactive and not args.yes:
        ui.note(
            "not a terminal: commands that need approval will be refused (use -y to approve them)"
        )
    continues = getattr(args, "continues", None) or None
    pick: str | None = None
    while True:
        conn = connect_to()
        try:
            conn.send(
                Ask(
                    task=args.task,
                    cwd=getattr(args, "cwd", None) or os.getcwd(),
                    model=args.model,
                    dry_run=args.dry_run,
                    yes=args.yes,
                    apply=bool(getattr(args, "apply", False)),
                    confirm=not args.json,
                    interactive=interactive,
                    max_turns=getattr(args, "max_turns", None),
                    umask=current_umask(),  # commands create files as this user's would
                    continues=continues,
                    pick=pick,
                )
            )
            code = follow(conn, ui)
        finally:
            conn.close()
        # "no, it did not do it" and another recipe picked: a follow-up runs that one first
        pick, ui.picked = ui.picked, None
        if pick is None or ui.last_session is None:
            return code
        continues = ui.last_session


def current_umask() -> int | None:
    """This process's umask, read without changing it (``/proc/self/status``)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return None


def refused(message: Failure) -> bool:
    """Whether the daemon rejected the request as a message (it could not read it), rather
    than failing the task it started (no model, no sandbox: those say what to do)."""
    return message.code in protocol.REJECTIONS


def refused_by_daemon(message: Failure) -> ShellagentError:
    """The daemon answered the request itself with an error: nothing was started."""
    return EnvironmentProblem(
        f"the daemon did not take the task: {message.message}",
        hint="a daemon of another version may be running: `shellagent daemon stop`, then ask again",
    )


def follow(conn: Connection, ui: AskUI) -> int:
    """Show the task's events until its summary; Ctrl-C cancels the task (twice: leave)."""
    cancelling = False
    accepted = False
    while True:
        try:
            message = conn.read()
            if isinstance(message, Accepted):
                accepted = True
            elif isinstance(message, Failure) and not accepted and refused(message):
                ui.stop_spinner()
                raise refused_by_daemon(message)
            if message is None:
                ui.stop_spinner()
                raise InternalError(
                    "the daemon went away before the task ended",
                    hint="its transcript so far is kept: `shellagent logs list`",
                )
            if isinstance(message, ApprovalNeeded):
                conn.send(ui.approve(message))
            elif isinstance(message, ChangesReady) and message.id is not None:
                conn.send(ChangesReply(id=message.id, decision=ui.review_changes(message)))
            elif isinstance(message, ChoiceRequest):
                conn.send(ChoiceReply(id=message.id, pick=ui.choose(message)))
            elif isinstance(message, ConfirmRequest):
                answer = ui.confirm(message)
                pick = ui.pick_after_no(message) if answer == "no" else 0
                conn.send(ConfirmReply(id=message.id, answer=answer, pick=pick))
            elif isinstance(message, Summary):
                ui.event(message)
                return message.exit_code
            elif isinstance(message, Failure) and message.fatal:
                ui.event(message)
                return message.exit_code if message.exit_code is not None else 1
            else:
                ui.event(message)
        except KeyboardInterrupt:
            if cancelling:
                ui.stop_spinner()
                print("\nleft the task; the daemon cancels it", file=sys.stderr)
                return 130
            cancelling = True
            ui.cancelling = True
            ui.stop_spinner()
            print("\ncancelling (Ctrl-C again to leave at once)", file=sys.stderr)
            with contextlib.suppress(OSError):
                conn.send(Cancel())
        except OSError as exc:
            ui.stop_spinner()
            raise InternalError(
                f"lost the daemon connection: {exc}",
                hint="its transcript so far is kept: `shellagent logs list`",
            ) from None
        except protocol.ProtocolError as exc:
            ui.stop_spinner()
            raise EnvironmentProblem(
                f"the daemon sent a malformed message ({exc})",
                hint="restart it: shellagent daemon stop; then ask again",
            ) from None
