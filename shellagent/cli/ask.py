"""ask: give the shell agent a task; it proposes commands, you approve the risky ones.

example: ask "how much space do the log files in /var/log take?"

Without a task, ask opens an interactive session where each line is a task or a follow-up
of the one before; ask -c "…" follows up your last session, ask --resume ID "…" a given one.

Every command is checked by the policy first: allowed ones run, denied ones never do, and
for the rest you are asked (y run, n refuse, e edit, a always allow, q quit). -y approves
what the policy asks about, never what it denies. Commands run in a sandboxed bash whose
working directory is this one.

Exit status (the same with --no-daemon): 0 done (you confirmed it, or it was presented as
done and nothing shows otherwise); 1 not done or not known to be (you said no, a refused
command and nothing ran, not shown to be done, not claimed, gave up, out of turns, quit);
2 usage or input error; 3 environment problem (sandbox, model or daemon); 4 internal
error (a bug); 130 cancelled.

This module imports only the standard library at import time, so ``ask`` starts fast;
everything heavy (model, policy, sandbox) runs in the daemon, or with ``--no-daemon`` in
the same task machinery served in this process (``ask_client.run_in_process``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from shellagent.errors import InternalError, ShellagentError, UsageError

INTERNAL_ERROR = InternalError.exit_code


def build_parser() -> argparse.ArgumentParser:
    doc = (__doc__ or "").split("\n\nThis module")[0]
    parser = argparse.ArgumentParser(
        prog="ask", description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "task",
        nargs="*",
        metavar="TASK",
        help="what to do, in plain words (none: an interactive session)",
    )
    parser.add_argument(
        "-c",
        "--continue",
        dest="continues",
        action="store_const",
        const="last",
        default=None,
        help="follow up your last session (its tasks, commands and kept changes)",
    )
    parser.add_argument(
        "--resume",
        metavar="ID",
        default=None,
        help="follow up session ID (`shellagent logs list` shows them)",
    )
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
        if args.resume is not None:
            if args.continues:
                raise UsageError("-c and --resume both name the session to follow up: pick one")
            if not args.resume.replace("-", "").isalnum() or len(args.resume) > 64:
                raise UsageError(
                    f"{args.resume!r} is not a session id", hint="shellagent logs list"
                )
            args.continues = args.resume
        task = " ".join(args.task).strip()
        if not task:
            if args.task or args.propose or args.json:
                raise UsageError("the task is empty", hint='ask "what to do"')
            return _interactive(args)
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
    except Exception as exc:  # a bug: say so, with where, and a status no task ends with
        import traceback

        traceback.print_exc()
        print(
            f"error: internal error: {type(exc).__name__}: {exc} (a bug in shellagent)",
            file=sys.stderr,
        )
        return INTERNAL_ERROR


def _interactive(args: argparse.Namespace) -> int:
    """``ask`` without a task: one task per line, each following up the one before."""
    from shellagent.cli import ask_repl

    if not ask_repl.usable():
        raise UsageError(
            "no task given, and this is not a terminal for an interactive session",
            hint='ask "what to do"',
        )
    from shellagent.cli.ask_client import run_in_process, run_via_daemon

    if not args.no_daemon:
        return ask_repl.interactive(args, run_via_daemon)
    from shellagent.daemon.server import configured_pool

    pool = configured_pool(args.model)  # loaded once for the whole session
    try:
        return ask_repl.interactive(args, lambda a, ui: run_in_process(a, ui, pool))
    finally:
        pool.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
