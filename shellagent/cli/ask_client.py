"""``ask`` through the daemon: connect (starting it if needed), send the task, follow it.

Standard library only, like everything on ``ask``'s start-up path (``shellagent.paths``
imports platformdirs only when a non-runtime directory is asked for). Rendering and
prompting live in ``ask_ui``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from shellagent import paths, protocol
from shellagent.errors import EnvironmentProblem, ShellagentError

START_TIMEOUT_S = 30.0
EXIT_CODES = {"finished": 0, "cancelled": 130}  # every other ending is 1


def socket_path() -> Path:
    return paths.runtime_dir() / protocol.SOCKET_NAME


def connect(path: Path | None = None) -> socket.socket:
    """A connected socket to the daemon; ``ConnectionError``/``OSError`` when none runs."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path or socket_path()))
    except OSError:
        sock.close()
        raise
    return sock


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

    def send(self, kind: str, **fields: Any) -> None:
        self.sock.sendall(protocol.encode(kind, **fields))

    def read(self) -> dict[str, Any] | None:
        """The next message, or None once the daemon closed the connection.

        Interrupting it (Ctrl-C) loses nothing: a partial line stays buffered.
        """
        while True:
            newline = self._buf.find(b"\n")
            if newline >= 0:
                line, self._buf = self._buf[: newline + 1], self._buf[newline + 1 :]
                return protocol.decode(line)
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self._buf += chunk

    def messages(self) -> Iterator[dict[str, Any]]:
        """Messages until the daemon closes the connection."""
        while (message := self.read()) is not None:
            yield message

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def request(kind: str, **fields: Any) -> dict[str, Any]:
    """Send one message to a running daemon and return its first reply."""
    conn = Connection(connect())
    try:
        conn.send(kind, **fields)
        for message in conn.messages():
            return message
    finally:
        conn.close()
    raise ConnectionError("the daemon closed the connection without answering")


def run_via_daemon(args: argparse.Namespace, ui: Any = None) -> int:
    """The default ``ask``: the task runs in the daemon; this process shows and asks."""
    return run_on(lambda: Connection(connect_or_start(quiet=args.json)), args, ui)


def run_in_process(args: argparse.Namespace, ui: Any = None) -> int:
    """``ask --no-daemon``: the daemon's task machinery, served in this process over a socket
    pair, so the run looks and behaves exactly like one through the daemon."""
    import threading

    from shellagent.daemon.model_pool import ModelPool
    from shellagent.daemon.server import Daemon

    pool = ModelPool(args.model)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    server = threading.Thread(
        target=Daemon(paths.runtime_dir(), pool).serve_one, args=(theirs,), daemon=True
    )
    server.start()
    try:
        return run_on(lambda: Connection(ours), args, ui)
    finally:
        ours.close()
        server.join(timeout=10)
        pool.close()


def run_on(
    connect_to: Callable[[], Connection], args: argparse.Namespace, ui: Any = None
) -> int:
    """Send the task over the connection ``connect_to`` opens and follow it to the end."""
    from shellagent.cli.ask_ui import AskUI

    ui = ui or AskUI.for_terminal(json_lines=args.json, dry_run=args.dry_run)
    interactive = bool(ui.can_prompt)
    if not interactive and not args.yes:
        ui.note(
            "not a terminal: commands that need approval will be refused (use -y to approve them)"
        )
    conn = connect_to()
    try:
        conn.send(
            "ask",
            task=args.task,
            cwd=os.getcwd(),
            model=args.model,
            dry_run=args.dry_run,
            yes=args.yes,
            interactive=interactive,
            max_turns=getattr(args, "max_turns", None),
        )
        return follow(conn, ui)
    finally:
        conn.close()


def follow(conn: Connection, ui: Any) -> int:
    """Show the task's events until its summary; Ctrl-C cancels the task (twice: leave)."""
    cancelling = False
    while True:
        try:
            message = conn.read()
            if message is None:
                ui.stop_spinner()
                raise ShellagentError(
                    "the daemon went away before the task ended",
                    hint="its transcript so far is kept: `shellagent logs list`",
                )
            kind = message["type"]
            if kind == "approval_request":
                answer = ui.approve(message)
                conn.send("approval", id=message["id"], command=message["command"], **answer)
            elif kind == "summary":
                ui.event(message)
                code = message.get("exit_code")
                if isinstance(code, int):
                    return code
                return EXIT_CODES.get(str(message.get("reason")), 1)
            elif kind == "error" and message.get("fatal"):
                ui.event(message)
                code = message.get("exit_code")
                return code if isinstance(code, int) else 1
            else:
                ui.event(message)
        except KeyboardInterrupt:
            if cancelling:
                ui.stop_spinner()
                print("\nleft the task; the daemon cancels it", file=sys.stderr)
                return 130
            cancelling = True
            ui.stop_spinner()
            print("\ncancelling (Ctrl-C again to leave at once)", file=sys.stderr)
            with contextlib.suppress(OSError):
                conn.send("cancel")
        except OSError as exc:
            ui.stop_spinner()
            raise ShellagentError(f"lost the daemon connection: {exc}") from None
