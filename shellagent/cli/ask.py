"""ask: give the shell agent a task; it proposes commands, you approve the risky ones.

example: ask "how much space do the log files in /var/log take?"

Every command is checked by the policy first: allowed ones run, denied ones never do, and
for the rest you are asked (y run, n refuse, e edit, a always allow, q quit). -y approves
what the policy asks about, never what it denies. Commands run in a sandboxed bash whose
working directory is this one. Exit status: 0 finished, 1 failed or out of turns, 2 usage,
3 environment (sandbox or model missing).

This module imports only the standard library at import time, so ``ask`` starts fast;
everything heavy (model, policy, sandbox) runs in the daemon, or with ``--no-daemon`` in
the same task machinery served in this process (``ask_client.run_in_process``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from shellagent.errors import ShellagentError, UsageError


def build_parser() -> argparse.ArgumentParser:
    doc = (__doc__ or "").split("\n\nThis module")[0]
    parser = argparse.ArgumentParser(
        prog="ask", description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("task", nargs="+", metavar="TASK", help="what to do, in plain words")
    parser.add_argument(
        "-y", "--yes", action="store_true", help="approve what the policy asks about (not denies)"
    )
    parser.add_argument(
        "--apply",
        action="store_true",
        help="with -y: apply the change set at the end (without it the changes are kept for "
        "`shellagent apply SESSION`)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="run the commands on a copy of your files, show what they would change, apply nothing",
    )
    parser.add_argument("--json", action="store_true", help="print every event as a JSON line")
    parser.add_argument(
        "--model", metavar="NAME|PATH", default=None, help="model name, GGUF path or openai:URL"
    )
    parser.add_argument(
        "--no-daemon", action="store_true", help="run in this process instead of the daemon"
    )
    parser.add_argument(
        "--max-turns",
        type=int,
        default=None,
        metavar="N",
        help="stop after N model replies (default: ask.max_turns in config.toml, 15)",
    )
    parser.add_argument(
        "--propose",
        action="store_true",
        help="print one proposed command for TASK and run nothing (for shell key bindings; "
        "see `shellagent shell-init`)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.max_turns is not None and args.max_turns < 1:
            raise UsageError("--max-turns must be at least 1")
        if args.apply and not args.yes:
            raise UsageError(
                "--apply goes with -y", hint="without -y you are asked about the changes at the end"
            )
        task = " ".join(args.task).strip()
        if not task:
            raise UsageError("the task is empty", hint='ask "what to do"')
        args.task = task
        if args.propose:
            from shellagent.cli.propose import propose

            return propose(args)
        from shellagent.cli.ask_client import run_in_process, run_via_daemon

        return run_in_process(args) if args.no_daemon else run_via_daemon(args)
    except ShellagentError as exc:
        print(exc.show(), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
