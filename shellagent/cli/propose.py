"""``ask --propose TEXT``: one proposed command for what is typed, for a shell key binding.

The daemon runs the task as a dry run (nothing executes) and this returns as soon as the
model proposes its first command: the command goes to stdout, the policy's verdict to
stderr, and the task is cancelled. Standard library only (it is on ``ask``'s path).
Exit status: 0 a command was proposed, 1 none was, 3 no daemon or model.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from shellagent.cli.display import shown
from shellagent.errors import ShellagentError
from shellagent.events import Accepted, Failure, Proposed, Summary


def propose(args: argparse.Namespace) -> int:
    from shellagent.cli.ask_client import (
        Connection,
        connect_or_start,
        refused,
        refused_by_daemon,
    )

    conn = Connection(connect_or_start(quiet=True))
    try:
        conn.send(
            "ask",
            task=args.task,
            cwd=os.getcwd(),
            model=args.model,
            dry_run=True,
            yes=False,
            interactive=False,
            max_turns=3,
            propose=True,
        )
        accepted = False
        for message in conn.messages():
            if isinstance(message, Proposed):
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
                with contextlib.suppress(OSError):
                    conn.send("cancel")
                return 0
            if isinstance(message, Accepted):
                accepted = True
            elif isinstance(message, Failure) and not accepted and refused(message):
                print(refused_by_daemon(message).show(), file=sys.stderr)
                return 3
            if isinstance(message, Summary) or (isinstance(message, Failure) and message.fatal):
                text = (
                    message.summary if isinstance(message, Summary) else message.message
                ) or "no command"
                print(f"no command proposed: {shown(text[:200])}", file=sys.stderr)
                if isinstance(message, Summary):
                    return 1
                return message.exit_code or 1
        raise ShellagentError("the daemon went away before proposing a command")
    finally:
        conn.close()


def hidden_characters(text: str) -> bool:
    """Control, format (bidi, zero-width), invisible, separator or unusual space characters
    (``shellagent.chars``): what could make a shell buffer show something other than what
    would run."""
    from shellagent.chars import kind

    return any(kind(c) not in (None, "unassigned") for c in text)
