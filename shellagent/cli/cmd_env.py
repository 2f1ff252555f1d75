"""``shellagent env serve``: the sandbox as an environment server for a trainer."""

from __future__ import annotations

import argparse
import inspect
import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shellagent.cli.argtypes import positive_float
from shellagent.errors import InputError

if TYPE_CHECKING:
    from shellagent.env import EnvServer
    from shellagent.eval import Task


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM stops the server as Ctrl-C does, sandboxes included


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "env",
        help="serve task episodes over HTTP for a trainer",
        description=inspect.cleandoc(serve.__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="env_command", metavar="serve", required=True)
    p = sub.add_parser("serve", help="serve reset/step/close on loopback")
    p.add_argument("tasks", type=Path, metavar="TASKS.jsonl")
    p.add_argument("--host", default="127.0.0.1", help="a loopback address (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="0 picks a free one (default: 8765)")
    p.add_argument(
        "--policy",
        choices=("default", "throwaway"),
        default="throwaway",
        help="the policy steps are judged by (default: throwaway, as eval's task sets)",
    )
    p.add_argument("--max-steps", type=int, default=15, metavar="N", help="steps per episode")
    p.add_argument(
        "--max-episodes", type=int, default=8, metavar="N", help="episodes alive at once"
    )
    p.add_argument(
        "--idle-timeout",
        type=positive_float,
        default=300.0,
        metavar="S",
        help="destroy an episode nobody touched for S seconds (default: 300)",
    )
    p.add_argument(
        "--command-timeout", type=positive_float, default=30.0, metavar="S", help="per step"
    )
    p.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="where the token is written, 0600 (default: env-token in the runtime dir)",
    )
    p.set_defaults(func=serve)


def serve(args: argparse.Namespace) -> int:
    """Serve the tasks of a task set as episodes over HTTP on loopback, for an external
    trainer: POST /reset {"task_id"} → observation, POST /step {"episode", "command"} →
    output, exit code, done, POST /close {"episode", "answer"} → reward (the task's check).
    Every request needs `Authorization: Bearer TOKEN`; the token is in --token-file.
    Python: `shellagent.env.EnvClient(url, token)` or the Gym-style `ShellEnv`.

    example: shellagent env serve tasks.jsonl --port 8765
    """
    from shellagent.env import TokenFile
    from shellagent.eval import load_tasks

    if args.max_steps < 1 or args.max_episodes < 1:
        raise InputError("--max-steps and --max-episodes must be 1 or more")
    task_set = load_tasks(args.tasks)
    for problem in task_set.problems:
        print(f"skipped {args.tasks}:{problem.line}: {problem.message}", file=sys.stderr)
    if not task_set.tasks:
        raise InputError(f"no tasks to serve in {args.tasks}")
    # Where the token goes is checked before anything starts: a place another user could
    # read or plant it refuses the start, with the fix.
    token_file = TokenFile.open(args.token_file)
    try:
        server = _start(args, task_set.tasks)
    except BaseException:
        token_file.remove()
        raise
    try:
        token_file.write(server.token)
    except BaseException:
        server.shutdown()
        token_file.remove()
        raise
    print(json.dumps({"url": server.url, "token_file": str(token_file.path)}), flush=True)
    print(
        f"serving {len(task_set.tasks)} tasks on {server.url} (token in {token_file.path}); "
        "Ctrl-C stops",
        file=sys.stderr,
        flush=True,
    )
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        token_file.remove()
    print("stopped; every episode's sandbox is gone", file=sys.stderr)
    return 0


def _start(args: argparse.Namespace, tasks: Sequence[Task]) -> EnvServer:
    """The server, listening, over its episodes; a sandbox that cannot start fails first."""
    from shellagent.env import EnvServer, Episodes
    from shellagent.sandbox import Sandbox

    Sandbox("ephemeral").close()  # a sandbox that cannot start fails here, with the fix
    episodes = Episodes(
        {t.id: t for t in tasks},
        policy=args.policy,
        max_steps=args.max_steps,
        command_timeout=args.command_timeout,
        idle_s=args.idle_timeout,
        max_live=args.max_episodes,
    )
    try:
        return EnvServer(episodes, host=args.host, port=args.port)
    except OSError as exc:
        episodes.shutdown()
        raise InputError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror}",
            hint="choose another --port (0 picks a free one)",
        ) from None
    except BaseException:
        episodes.shutdown()
        raise
