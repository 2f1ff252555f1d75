"""``ask --propose TEXT``: one proposed command for what is typed, for a shell key binding.

The daemon runs the task as a dry run (nothing executes) and this returns as soon as the
model proposes its first command: the command goes to stdout, the policy's verdict to
stderr, and the session ends there (``finished``: a proposal is not a cancelled task).
While the model works, a spinner with the typed text is drawn on the terminal (``/dev/tty``:
the shell hides its line while the key's command runs). Standard library only (it is on
``ask``'s path).
Exit status: 0 a command was proposed, 1 none was, 3 no daemon or model.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
import time
from typing import IO

from shellagent.cli.display import shown
from shellagent.errors import ShellagentError
from shellagent.events import Accepted, Ask, Failure, Proposed, Summary


def propose(args: argparse.Namespace) -> int:
    from shellagent.cli.ask_client import (
        Connection,
        connect_or_start,
        refused,
        refused_by_daemon,
    )

    spinner = _TtySpinner(args.task)
    spinner.start()
    try:
        conn = Connection(connect_or_start(quiet=True))
    except BaseException:
        spinner.stop()
        raise
    try:
        conn.send(
            Ask(
                task=args.task,
                cwd=os.getcwd(),
                model=args.model,
                dry_run=True,
                yes=False,
                interactive=False,
                max_turns=3,
                propose=True,
            )
        )
        accepted = False
        for message in conn.messages():
            if isinstance(message, Proposed):
                spinner.stop()
                command = message.command
                reasons = "; ".join(message.reasons)[:200]
                verdict = f"policy: {message.decision}"
                if hidden_characters(command) or hidden_characters(reasons):
                    print(
                        "the proposed command holds control or invisible characters: "
                        "not placed in your prompt",
                        file=sys.stderr,
                    )
                    return 1
                print(f"{verdict}{' (' + reasons + ')' if reasons else ''}", file=sys.stderr)
                print(command)
                return 0  # the daemon ends the session itself: nothing to cancel
            if isinstance(message, Accepted):
                accepted = True
            elif isinstance(message, Failure) and not accepted and refused(message):
                print(refused_by_daemon(message).show(), file=sys.stderr)
                return 3
            if isinstance(message, Summary) or (isinstance(message, Failure) and message.fatal):
                spinner.stop()
                text = (
                    message.summary if isinstance(message, Summary) else message.message
                ) or "no command"
                print(f"no command proposed: {shown(text[:200])}", file=sys.stderr)
                if isinstance(message, Summary):
                    return 1
                return message.exit_code or 1
        raise ShellagentError("the daemon went away before proposing a command")
    finally:
        spinner.stop()
        conn.close()


class _TtySpinner:
    """``⠋ proposing a command for: TEXT 1.2s`` on the terminal, erased when done; nothing
    when there is no terminal."""

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, text: str) -> None:
        self.text = " ".join(shown(text).split())
        self.tty: IO[str] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        try:
            self.tty = open("/dev/tty", "w", encoding="utf-8", errors="replace")  # noqa: SIM115
        except OSError:
            return
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is None or self.tty is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        with contextlib.suppress(OSError):
            self.tty.write("\r\x1b[K")
            self.tty.flush()
            self.tty.close()

    def _spin(self) -> None:
        assert self.tty is not None
        try:
            width = os.get_terminal_size(self.tty.fileno()).columns - 1
        except OSError:
            width = 79
        since, frame = time.monotonic(), 0
        while True:
            took = f" {time.monotonic() - since:.1f}s"
            line = f"{self.FRAMES[frame % len(self.FRAMES)]} proposing a command for: {self.text}"
            if len(line) + len(took) > width:
                line = line[: max(width - len(took) - 1, 10)] + "…"
            with contextlib.suppress(OSError):
                self.tty.write(f"\r{line}{took}\x1b[K")
                self.tty.flush()
            frame += 1
            if self._stop.wait(0.1):
                return


def hidden_characters(text: str) -> bool:
    """Control, format (bidi, zero-width), invisible, separator or unusual space characters
    (``shellagent.chars``): what could make a shell buffer show something other than what
    would run."""
    from shellagent.chars import kind

    return any(kind(c) not in (None, "unassigned") for c in text)
