"""``shellagent policy check|test``: ask the policy about a command, or test a policy file.

Exit codes of ``check``: 0 the command is allowed, 1 it would be asked about or denied,
2 usage error or unreadable policy. ``test``: 0 every example passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from shellagent.errors import InputError


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "policy",
        help="check commands against the policy; test policy files",
        description="Check a command against the command policy, or run a policy file's "
        "examples.\n\nexample: shellagent policy check -- 'ls -la && rm -rf build'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="policy_command", metavar="ACTION", required=True)
    check = sub.add_parser(
        "check",
        help="print the decision, reasons and segments for COMMAND",
        description="Print allow/ask/deny, the reasons and every simple command seen.\n"
        "'allow (read-only)' means every part is allowed because it changes nothing.\n"
        "Exit 0 when allowed, 1 when asked or denied.\n\n"
        "example: shellagent policy check --json -- 'curl -s https://x | sh'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.add_argument(
        "--policy",
        action="append",
        type=Path,
        metavar="FILE",
        default=[],
        help="use FILE instead of the default policy (repeatable; later wins)",
    )
    check.add_argument(
        "--workspace",
        type=Path,
        default=None,
        metavar="DIR",
        help="the workspace directory (default: the current directory)",
    )
    check.add_argument(
        "command", nargs=argparse.REMAINDER, metavar="COMMAND", help="the command line, after --"
    )
    check.set_defaults(func=run_check)
    test = sub.add_parser(
        "test",
        help="run every rule's match/not_match examples",
        description="Run the examples of each rule in FILE (default: the default policy plus "
        "your policy.toml). Exit 1 on any failure.\n\nexample: shellagent policy test "
        "~/.config/shellagent/policy.toml",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    test.add_argument("file", nargs="?", type=Path, metavar="FILE")
    test.set_defaults(func=run_test)


def run_check(args: argparse.Namespace) -> int:
    from shellagent.policy import PolicyEngine, ShellState

    words = list(args.command)
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise InputError("no command given", hint="shellagent policy check -- 'ls -la'")
    command = " ".join(words)
    workspace = (args.workspace or Path.cwd()).resolve()
    engine = PolicyEngine.load(args.policy or None, workspace=workspace)
    decision = engine.check(command, ShellState(cwd=workspace))
    if args.json:
        json.dump(decision.to_dict(), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(decision.decision + (" (read-only)" if decision.read_only else ""))
        for reason in decision.reasons:
            print(f"  - {reason}")
        print("segments:")
        for s in decision.segments:
            extra = []
            if s.wrappers:
                extra.append("via " + " ".join(s.wrappers))
            if s.context:
                extra.append(f"in {s.context}")
            if s.writes:
                extra.append("writes " + ", ".join(s.writes))
            if s.effects:
                extra.append("; ".join(s.effects))
            tail = f"  ({'; '.join(extra)})" if extra else ""
            print(f"  {s.decision:5}  {s.key}{tail}")
    return 0 if decision.decision == "allow" else 1


def run_test(args: argparse.Namespace) -> int:
    from shellagent.paths import config_dir
    from shellagent.policy import check_examples, default_policy_path, load_policy

    if args.file is not None:
        paths = [args.file]
    else:
        user = config_dir() / "policy.toml"
        paths = [default_policy_path()] + ([user] if user.exists() else [])
    count, failures = check_examples(load_policy(paths))
    for failure in failures:
        print(failure.describe())
    print(f"{count - len(failures)} of {count} examples pass ({', '.join(map(str, paths))})")
    return 1 if failures else 0
