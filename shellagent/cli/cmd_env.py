"""``shellagent env serve``: the sandbox as an environment server for a trainer."""

from __future__ import annotations

import argparse
import inspect
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from shellagent.cli.argtypes import positive_float
from shellagent.errors import InputError


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
    from shellagent import paths
    from shellagent.env import EnvServer, Episodes
    from shellagent.eval import load_tasks
    from shellagent.sandbox import Sandbox

    if args.max_steps < 1 or args.max_episodes < 1:
        raise InputError("--max-steps and --max-episodes must be 1 or more")
    task_set = load_tasks(args.tasks)
    for problem in task_set.problems:
        print(f"skipped {args.tasks}:{problem.line}: {problem.message}", file=sys.stderr)
    if not task_set.tasks:
        raise InputError(f"no tasks to serve in {args.tasks}")
    Sandbox("ephemeral").close()  # a sandbox that cannot start fails here, with the fix
    episodes = Episodes(
        {t.id: t for t in task_set.tasks},
        policy=args.policy,
        max_steps=args.max_steps,
        command_timeout=args.command_timeout,
        idle_s=args.idle_timeout,
        max_live=args.max_episodes,
    )
    try:
        server = EnvServer(episodes, host=args.host, port=args.port)
    except OSError as exc:
        episodes.shutdown()
        raise InputError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror}",
            hint="choose another --port (0 picks a free one)",
        ) from None
    except BaseException:
        episodes.shutdown()
        raise
    token_file = args.token_file or paths.runtime_dir() / "env-token"
    token_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(server.token + "\n")
    print(json.dumps({"url": server.url, "token_file": str(token_file)}), flush=True)
    print(
        f"serving {len(task_set.tasks)} tasks on {server.url} (token in {token_file}); "
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
        token_file.unlink(missing_ok=True)
    print("stopped; every episode's sandbox is gone", file=sys.stderr)
    return 0
