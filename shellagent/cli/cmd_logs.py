"""``shellagent logs``: list stored sessions and show one of them."""

from __future__ import annotations

import argparse
import inspect
import json
from typing import Any

from shellagent.cli.display import shown

FORMATTER = argparse.RawDescriptionHelpFormatter


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "logs",
        help="list stored sessions, or show one",
        description=inspect.cleandoc(run_list.__doc__ or ""),
        formatter_class=FORMATTER,
    )
    parser.set_defaults(func=run_list, json=False, limit=None)
    sub = parser.add_subparsers(dest="logs_command", metavar="list|show")
    lister = sub.add_parser(
        "list",
        help="table of sessions",
        description=inspect.cleandoc(run_list.__doc__ or ""),
        formatter_class=FORMATTER,
    )
    lister.add_argument("--json", action="store_true", help="one JSON object per session")
    lister.add_argument("-n", "--limit", type=int, help="only the N most recent sessions")
    lister.set_defaults(func=run_list)
    shower = sub.add_parser(
        "show",
        help="one session, readable",
        description=inspect.cleandoc(run_show.__doc__ or ""),
        formatter_class=FORMATTER,
    )
    shower.add_argument("id", metavar="ID", help="session id, or a unique prefix of it")
    shower.add_argument("--full", action="store_true", help="do not shorten long outputs")
    shower.add_argument("--json", action="store_true", help="the raw (redacted) event lines")
    shower.set_defaults(func=run_show)


def run_list(args: argparse.Namespace) -> int:
    """List stored sessions, oldest first: when, id, task, turns, outcome, model.

    example: shellagent logs list -n 10
    """
    from shellagent.transcript.reader import list_sessions
    from shellagent.transcript.render import render_table

    sessions = list_sessions()
    if args.limit is not None:
        sessions = sessions[-args.limit :] if args.limit > 0 else []
    if args.json:
        for s in sessions:
            row = {
                "id": s.session_id,
                "started": s.started,
                "task": s.task,
                "turns": s.turns,
                "outcome": s.outcome,
                "success": s.success,
                "model": s.model,
                "path": str(s.path),
            }
            print(json.dumps(row, ensure_ascii=False))
        return 0
    if not sessions:
        print("no sessions yet (transcripts are written by `ask` and `shellagent eval`)")
        return 0
    print(shown(render_table(sessions, width=_width()), lines=True))
    return 0


def _width() -> int:
    """The terminal's width (a task is cut to what is left of it); piped, nothing is cut.
    Read from the terminal itself: a COLUMNS inherited from elsewhere is not its width."""
    import os
    import sys

    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns if sys.stdout.isatty() else UNCUT
    except (OSError, ValueError):
        return UNCUT


UNCUT = 1 << 20


def run_show(args: argparse.Namespace) -> int:
    """Show one session: each turn's command, policy verdict, approval, output and the end.

    example: shellagent logs show 20261122T0215
    """
    from shellagent.transcript.reader import find_session, read_transcript
    from shellagent.transcript.render import render_json, render_transcript

    transcript = read_transcript(find_session(args.id))
    if args.json:
        print(render_json(transcript))
    else:  # a transcript holds what the model and the commands wrote: shown, never obeyed
        print(shown(render_transcript(transcript, full=args.full), lines=True))
    return 0
