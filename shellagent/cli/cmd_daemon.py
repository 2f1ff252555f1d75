"""``shellagent daemon``: run, start, stop and inspect the daemon that keeps the model warm."""

from __future__ import annotations

import argparse
import inspect
import json
import os
import signal
import sys
import time
from typing import Any

from shellagent.errors import EnvironmentProblem

FORMATTER = argparse.RawDescriptionHelpFormatter


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "daemon",
        help="run, start, stop or inspect the background daemon",
        description=inspect.cleandoc(run_status.__doc__ or ""),
        formatter_class=FORMATTER,
    )
    parser.set_defaults(func=run_status, json=False)
    sub = parser.add_subparsers(dest="daemon_command", metavar="start|stop|status|run")

    def command(name: str, func: Any, help_text: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(
            name,
            help=help_text,
            formatter_class=FORMATTER,
            description=inspect.cleandoc(func.__doc__ or ""),
        )
        p.set_defaults(func=func)
        return p

    run = command("run", run_foreground, "run the daemon in the foreground")
    run.add_argument(
        "--model",
        metavar="NAME|PATH",
        default=None,
        help="model to keep warm (default: $SHELLAGENT_BACKEND or the embedded one)",
    )
    run.add_argument(
        "--idle-unload",
        type=float,
        metavar="SECONDS",
        default=None,
        help="release the model after this long unused (default 1800)",
    )
    run.add_argument("--quiet", action="store_true", help="log to the log file only")
    command("start", run_start, "start the daemon in the background")
    command("stop", run_stop, "stop the daemon")
    status = command("status", run_status, "model, uptime, sessions, memory")
    status.add_argument("--json", action="store_true", help="the status as one JSON object")
    unit = command("install-unit", run_install_unit, "write the systemd user unit")
    unit.add_argument("--print", action="store_true", help="print the unit instead")


def run_foreground(args: argparse.Namespace) -> int:
    """Run the daemon in this process until stopped (what the systemd unit runs).

    The model named by --model, else $SHELLAGENT_BACKEND, else the embedded one, is loaded
    at start and kept warm; `scripted:FILE.json` runs a scripted model (tests, demos).

    example: shellagent daemon run --idle-unload 600
    """
    from shellagent.daemon import worker

    # Commands run with the user's umask (the client sends it; this is for one that does
    # not); the daemon's own files, socket and state are private.
    worker.START_UMASK = os.umask(0o077)
    from shellagent.daemon.logs import setup_logging
    from shellagent.daemon.server import Daemon, configured_pool
    from shellagent.jobs import Installer
    from shellagent.paths import runtime_dir
    from shellagent.policy import PolicyEngine

    PolicyEngine.load()  # a policy that cannot be read fully stops the daemon here (exit 2)
    setup_logging(stderr=not args.quiet)
    spec = args.model or os.environ.get("SHELLAGENT_BACKEND") or None
    idle = args.idle_unload
    if idle is None:
        idle = float(os.environ.get("SHELLAGENT_IDLE_UNLOAD", "1800"))
    pool = configured_pool(spec, idle_unload_s=idle)  # a broken config.toml stops here (exit 2)
    Daemon(runtime_dir(), pool, job_installer=Installer()).run()
    return 0


def run_start(args: argparse.Namespace) -> int:
    """Start the daemon in the background, unless one is already running.

    example: shellagent daemon start
    """
    from shellagent.cli.ask_client import connect, start_daemon

    try:
        connect().close()
        print("the daemon is already running")
        return 0
    except OSError:
        pass
    took = start_daemon(quiet=True)
    print(f"daemon started in {took:.1f}s")
    return 0


def run_stop(args: argparse.Namespace) -> int:
    """Stop the daemon; its running tasks are cancelled (their transcripts say so).

    example: shellagent daemon stop
    """
    from shellagent.cli.ask_client import request
    from shellagent.daemon.lock import read_pid
    from shellagent.events import Stop
    from shellagent.paths import runtime_dir

    pid = read_pid(runtime_dir())
    try:
        request(Stop())
    except OSError:
        if pid is None:
            print("the daemon is not running")
            return 0
        os.kill(pid, signal.SIGTERM)  # running but not answering: ask the process directly
    deadline = time.monotonic() + 10
    while read_pid(runtime_dir()) is not None:
        if time.monotonic() > deadline:
            raise EnvironmentProblem(f"the daemon (pid {pid}) did not stop", hint=f"kill {pid}")
        time.sleep(0.05)
    print("daemon stopped")
    return 0


def run_status(args: argparse.Namespace) -> int:
    """Show whether the daemon runs: its model, uptime, sessions and memory.

    example: shellagent daemon status --json
    """
    from shellagent.cli.ask_client import request
    from shellagent.daemon.status import render
    from shellagent.events import DaemonStatus, Status, to_dict

    try:
        status = request(Status())
    except OSError:
        if args.json:
            print(json.dumps({"running": False}))
        else:
            print("the daemon is not running (`shellagent daemon start`, or any `ask`)")
        return 1
    if not isinstance(status, DaemonStatus):
        raise EnvironmentProblem(
            f"the daemon answered 'status' with '{status.kind}'",
            hint="restart it: `shellagent daemon stop`",
        )
    fields = to_dict(status)
    del fields["type"]
    if args.json:
        print(json.dumps({"running": True, **fields}))
    else:
        print(render(status))
    return 0


def run_install_unit(args: argparse.Namespace) -> int:
    """Write the systemd user unit that keeps the daemon running.

    example: shellagent daemon install-unit && systemctl --user enable --now shellagent
    """
    from shellagent.daemon.systemd import install_unit, unit_text

    if args.print:
        sys.stdout.write(unit_text())
        return 0
    print(install_unit())
    return 0
