"""``shellagent sandbox run``: run commands in one persistent sandbox session."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from shellagent.sandbox import PROFILES


def add_profile_options(parser: argparse.ArgumentParser) -> None:
    """--profile, --write, --network and --timeout, shared by ``sandbox run`` and ``shell``."""
    parser.add_argument(
        "--profile",
        default="default",
        metavar="NAME",
        help=f"sandbox profile: {', '.join(PROFILES)} (default: default)",
    )
    parser.add_argument(
        "--write",
        action="append",
        type=Path,
        default=[],
        metavar="PATH",
        help="also make PATH writable (repeatable)",
    )
    parser.add_argument("--network", action="store_true", help="allow network access")
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="per-command timeout (default: 30)",
    )


def open_session(args: argparse.Namespace) -> Any:
    from shellagent.sandbox import Sandbox, get_profile

    profile = get_profile(args.profile).with_options(
        writable=args.write, network=True if args.network else None
    )
    return Sandbox(profile, timeout=args.timeout)


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sandbox",
        help="run commands in the sandbox",
        description="Run commands in the agent's sandbox.\n\n"
        "example: shellagent sandbox run 'cd /tmp' 'pwd'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="sandbox_command", metavar="ACTION", required=True)
    run = sub.add_parser(
        "run",
        help="run each CMD in turn in one persistent session",
        description="Run each CMD in turn in one persistent sandboxed bash: cwd, variables\n"
        "and functions carry over from one CMD to the next. Exit status 1 if any CMD\n"
        "failed.\n\nexample: shellagent sandbox run --json 'export A=1' 'echo $A'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_profile_options(run)
    run.add_argument(
        "--json",
        action="store_true",
        help="print a JSON list of {command, output, exit_code, duration_s, ...}",
    )
    run.add_argument("commands", nargs="+", metavar="CMD")
    run.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from shellagent.sandbox import validate_command

    for command in args.commands:
        validate_command(command)
    results = []
    with open_session(args) as session:
        for command in args.commands:
            if args.json:
                results.append(session.run(command))
                continue
            print(f"$ {command}", flush=True)
            result = session.run(command, on_output=write_live)
            if result.truncated or result.timed_out:
                print(f"\n{result.output}" if result.truncated else "")
            status = f"[exit {result.exit_code}, {result.duration_s:.3f}s"
            status += ", timed out" if result.timed_out else ""
            status += f"; {result.note}]" if result.note else "]"
            print(status, flush=True)
            results.append(result)
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=2))
    return 1 if any(r.exit_code for r in results) else 0


def write_live(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()
