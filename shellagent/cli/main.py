"""``shellagent``: the management command line.

Each subcommand lives in its own ``cmd_*.py`` module exposing ``add_parser(subparsers)``;
the module is imported only to build the parser, and heavy libraries are imported inside
the handlers, so ``shellagent --help`` stays quick. Errors become exit codes here, once.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from shellagent.errors import ShellagentError

# Subcommand name -> module.
SUBCOMMANDS = {
    "sandbox": "shellagent.cli.cmd_sandbox",
    "shell": "shellagent.cli.cmd_shell",
    "doctor": "shellagent.cli.cmd_doctor",
    "policy": "shellagent.cli.cmd_policy",
    "model": "shellagent.cli.cmd_model",
    "logs": "shellagent.cli.cmd_logs",
    "export": "shellagent.cli.cmd_export",
    "daemon": "shellagent.cli.cmd_daemon",
    "eval": "shellagent.cli.cmd_eval",
    "jobs": "shellagent.cli.cmd_jobs",
    "config": "shellagent.cli.cmd_config",
    "apply": "shellagent.cli.cmd_apply",
    "shell-init": "shellagent.cli.cmd_shell_init",
    "train": "shellagent.cli.cmd_train",
    "tasks": "shellagent.cli.cmd_tasks",
    "explain": "shellagent.cli.cmd_explain",
    "recipes": "shellagent.cli.cmd_recipes",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shellagent",
        description="Manage shellagent: sandbox, policy, models, logs, exports, daemon.",
    )
    from shellagent import __version__

    parser.add_argument("--version", action="version", version=f"shellagent {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in SUBCOMMANDS.values():
        importlib.import_module(module_name).add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except ShellagentError as exc:
        print(exc.show(), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `shellagent … | head`: the reader left; that is not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
