"""``shellagent export``: stored transcripts as SFT, DPO or RL training data (JSONL)."""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from shellagent.errors import InputError


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "export",
        help="export transcripts as training data",
        description=inspect.cleandoc(run.__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--format", required=True, choices=("sft", "dpo", "rl"))
    parser.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    parser.add_argument(
        "--since", metavar="DATE", help="sessions started on or after DATE (YYYY-MM-DD[THH:MM])"
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--only-successful",
        dest="only_successful",
        action="store_const",
        const=True,
        help="only sessions that succeeded: a user confirmed them or a check passed (the "
        "default for sft)",
    )
    which.add_argument(
        "--include-unsuccessful",
        dest="only_successful",
        action="store_const",
        const=False,
        help="also sessions that failed or are unverified (the default for dpo and rl)",
    )
    parser.add_argument("--min-turns", type=int, default=0, metavar="N")
    parser.add_argument(
        "--group",
        action="store_true",
        help="rl only: group the rollouts of each task (eval --samples N) and add "
        "group-relative advantages for GRPO-style trainers",
    )
    parser.add_argument(
        "--from",
        dest="from_dir",
        type=Path,
        metavar="DIR",
        help="read transcripts from DIR (e.g. an eval run's transcripts/) instead of the store",
    )
    parser.set_defaults(func=run, only_successful=None)


def parse_since(text: str) -> float:
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise InputError(
            f"--since {text!r} is not a date", hint="use YYYY-MM-DD or YYYY-MM-DDTHH:MM"
        ) from None


def run(args: argparse.Namespace) -> int:
    """Export stored transcripts as JSONL training data.

    sft: {"messages": [...]} per successful session (refused commands left out)
    dpo: {"prompt", "chosen", "rejected"} from edited and refused commands
    rl:  one episode per session with turns, exit codes, success and reward;
         --group: the rollouts of each task together, with group-relative advantages

    example: shellagent export --format sft --since 2026-11-01 -o sft.jsonl
    """
    from shellagent.transcript.export import export
    from shellagent.transcript.reader import iter_transcripts

    since = parse_since(args.since) if args.since else None
    if args.from_dir is not None and not args.from_dir.is_dir():
        raise InputError(f"--from {args.from_dir}: no such directory")
    if args.min_turns < 0:
        raise InputError("--min-turns must be 0 or more")
    if args.group and args.format != "rl":
        raise InputError("--group applies to --format rl", hint="drop --group or use rl")
    options = {
        "since": since,
        "only_successful": args.only_successful,
        "min_turns": args.min_turns,
        "group": args.group,
    }
    if args.output is None:
        report = export(args.format, iter_transcripts(args.from_dir), sys.stdout, **options)
    else:
        target = Path(args.output)
        # Exports hold the user's sessions: 0600, and never a half-written file at the target.
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        except OSError as exc:
            raise InputError(
                f"cannot write {target}: {exc.strerror}", hint="choose a writable directory"
            ) from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                report = export(args.format, iter_transcripts(args.from_dir), out, **options)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    for line in report.skipped:
        print(f"skipped {line}", file=sys.stderr)
    print(
        f"exported {report.records} {args.format} records from {report.exported_sessions} "
        f"of {report.sessions} sessions ({report.filtered} filtered out, "
        f"{len(report.skipped)} skipped)",
        file=sys.stderr,
    )
    return 0
