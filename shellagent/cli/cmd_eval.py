"""``shellagent eval``: run a task set against a model (or a baseline) and write a report."""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
from pathlib import Path
from typing import Any

from shellagent.errors import InputError


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="run a task set and score a model",
        description=inspect.cleandoc(run.__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("tasks", type=Path, metavar="TASKS.jsonl")
    parser.add_argument("--limit", type=_count, metavar="N", help="run at most N tasks")
    parser.add_argument("--offset", type=_count, default=0, metavar="K", help="skip K tasks")
    parser.add_argument("--ids", metavar="A,B", help="only the tasks with these ids")
    parser.add_argument(
        "--jobs",
        type=_positive,
        default=1,
        metavar="J",
        help="tasks run at the same time (default: 1)",
    )
    parser.add_argument(
        "--agent",
        choices=("model", "nothing", "gold"),
        default="model",
        help="model (default), the do-nothing baseline, or gold: run each task's gold "
        "commands and answer from their output",
    )
    parser.add_argument(
        "--model",
        metavar="M",
        help="model name, .gguf path or openai:URL#model (default: embedded)",
    )
    parser.add_argument(
        "--max-turns",
        type=_positive,
        default=15,
        metavar="T",
        help="turn limit per task (default: 15)",
    )
    parser.add_argument(
        "--command-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="time limit of one agent command (default: 30)",
    )
    parser.add_argument(
        "--policy",
        choices=("default", "throwaway"),
        default="default",
        help="the policy the model is judged by: default (a personal machine's; the README's "
        "figures) or throwaway (system paths are the task's own in a throwaway root)",
    )
    parser.add_argument(
        "--examples",
        type=int,
        default=2,
        metavar="K",
        help="worked examples retrieved from the shipped library per task (default: 2; 0: "
        "none, the prompt shows only the reply format)",
    )
    parser.add_argument(
        "--recipes",
        choices=("on", "off"),
        default="on",
        help="on (default): the model first chooses a shipped recipe and fills its slots, "
        "and writes commands itself only when none fits; off: it writes every command",
    )
    parser.add_argument(
        "--threads",
        type=_positive,
        metavar="N",
        help="CPU threads of a local model (default: one per core, up to 8)",
    )
    parser.add_argument(
        "--temperature",
        type=float,
        metavar="T",
        help="sample a local model at temperature T (default: 0, greedy)",
    )
    parser.add_argument(
        "--repeat-penalty",
        type=float,
        metavar="P",
        help="penalise tokens of the last 64 (llama.cpp's repeat penalty; default: 1, none)",
    )
    parser.add_argument(
        "--seed", type=int, metavar="N", help="random seed of a sampled local model (default: 0)"
    )
    parser.add_argument("--json", action="store_true", help="print the summary as one object")
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="report directory (default: a new one under the data dir)",
    )
    parser.set_defaults(func=run)


def default_out_dir(agent: str) -> Path:
    from shellagent import paths

    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return paths.data_dir() / "eval" / f"{stamp}-{agent}"


def _make_agent(args: argparse.Namespace) -> Any:
    from shellagent.eval import ModelAgent, NothingAgent

    if args.agent in ("nothing", "gold"):
        if args.model:
            raise InputError(f"--model has no effect with --agent {args.agent}", hint="drop one")
        if args.agent == "gold":
            from shellagent.taskgen.gold_agent import GoldAgent

            return GoldAgent(command_timeout=args.command_timeout)
        return NothingAgent()
    from shellagent.model import load_backend

    local_only = {
        "--threads": ("n_threads", args.threads),
        "--temperature": ("temperature", args.temperature),
        "--repeat-penalty": ("repeat_penalty", args.repeat_penalty),
        "--seed": ("seed", args.seed),
    }
    options: dict[str, Any] = {}
    for flag, (option, value) in local_only.items():
        if value is None:
            continue
        if (args.model or "").startswith("openai:"):
            raise InputError(f"{flag} applies to a local model, not an openai: endpoint")
        options[option] = value
    backend = load_backend(args.model, **options)
    return ModelAgent(
        backend,
        max_turns=args.max_turns,
        command_timeout=args.command_timeout,
        model_name=args.model or backend.name,
        jobs=args.jobs,
        examples=max(args.examples, 0),
        policy=args.policy,
        recipes=args.recipes == "on",
    )


def run(args: argparse.Namespace) -> int:
    """Run a task set, one throwaway sandbox per task, and report how many were solved.

    Each task's setup runs first (a failing setup makes the task invalid), then its check
    must fail, then the agent acts with the policy in force (ask = approved), then the check
    decides. The report directory gets summary.txt/json, results.csv/jsonl and one
    transcript per episode in transcripts/ (turn them into RL data with
    `shellagent export --format rl --from DIR/transcripts`).

    exit status: 0 the run completed, 1 some tasks hit a harness error, 130 interrupted
    (the partial report is still written).

    example: shellagent eval tasks.jsonl --limit 20 --jobs 2 --out runs/smollm
    """
    from shellagent.eval import (
        Progress,
        RunConfig,
        load_tasks,
        render_summary,
        run_eval,
        select_tasks,
        summarize,
        write_report,
    )

    task_set = load_tasks(args.tasks)
    skipped = [f"{args.tasks}:{p.line}: {p.message}" for p in task_set.problems]
    for line in skipped:
        print(f"skipped {line}", file=sys.stderr)
    ids = [i.strip() for i in args.ids.split(",") if i.strip()] if args.ids else None
    tasks = select_tasks(task_set.tasks, offset=args.offset, limit=args.limit, ids=ids)
    if not tasks:
        raise InputError(
            f"no tasks to run in {args.tasks}", hint="check --offset, --limit and --ids"
        )

    from shellagent.sandbox import Session

    Session("ephemeral").close()  # a sandbox that cannot start fails here, once, with the fix
    agent = _make_agent(args)
    if getattr(agent, "recipes", False):
        agent.recipe_book()  # trains the ranker if the recipe set changed, before any task
    out = args.out or default_out_dir(agent.name if args.agent == "model" else args.agent)
    out.mkdir(parents=True, exist_ok=True)
    config = RunConfig(transcripts_dir=out / "transcripts")
    progress = Progress(len(tasks))
    eval_run = run_eval(tasks, agent, config, jobs=args.jobs, on_result=progress.update)
    progress.finish()
    label = f"model {agent.name}" if args.agent == "model" else args.agent
    summary = summarize(eval_run, agent=label, skipped_lines=skipped)
    write_report(eval_run, summary, out)
    if args.json:
        print(json.dumps({**summary.to_json(), "out": str(out)}))
    else:
        print(render_summary(summary))
    print(f"report in {out}", file=sys.stderr)
    if eval_run.interrupted:
        print("interrupted: the report covers the tasks that finished", file=sys.stderr)
        return 130
    return 1 if summary.errors else 0
