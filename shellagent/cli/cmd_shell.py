"""``shellagent shell``: an interactive prompt inside the agent's sandbox."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from shellagent.cli.cmd_sandbox import add_profile_options, open_session, write_live
from shellagent.errors import InputError


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "shell",
        help="an interactive shell with the agent's view of the machine",
        description="An interactive shell in the sandbox the agent uses, to see what it can\n"
        "read, write and reach. One line is one command; Ctrl-D leaves.\n\n"
        "example: shellagent shell --profile ephemeral",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_profile_options(parser)
    parser.set_defaults(func=cmd_shell)


def _reader() -> Any:
    if sys.stdin.isatty():
        from prompt_toolkit import PromptSession

        session: Any = PromptSession()
        return session.prompt
    return input


def cmd_shell(args: argparse.Namespace) -> int:
    read = _reader()
    interactive = sys.stdin.isatty()
    with open_session(args) as session:
        if interactive:
            print(f"sandbox ({args.profile}); Ctrl-D to leave", file=sys.stderr)
        last = 0
        while True:
            try:
                line = read(f"[{args.profile}] {session.cwd} $ " if interactive else "")
            except EOFError:
                return last
            except KeyboardInterrupt:
                continue
            if not line.strip():
                continue
            try:
                result = session.run(line, on_output=write_live)
            except InputError as exc:
                print(exc.show(), file=sys.stderr)
                continue
            if result.truncated:
                print(f"\n{result.output}")
            if result.note:
                print(f"[{result.note}]", file=sys.stderr)
            last = result.exit_code
