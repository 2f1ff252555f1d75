"""``shellagent eval``: run a task set against a model (or a baseline) and write a report."""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from shellagent.cli.argtypes import count, positive_int
from shellagent.errors import InputError


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="run a task set and score a model",
        description=inspect.cleandoc(run.__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("tasks", type=Path, metavar="TASKS.jsonl")
    parser.add_argument("--limit", type=count, metavar="N", help="run at most N tasks")
    parser.add_argument("--offset", type=count, default=0, metavar="K", help="skip K tasks")
    parser.add_argument("--ids", metavar="A,B", help="only the tasks with these ids")
    parser.add_argument(
        "--jobs",
        type=positive_int,
        default=1,
        metavar="J",
        help="tasks run at the same time (default: 1)",
    )
    parser.add_argument(
        "--samples",
        type=positive_int,
        default=1,
        metavar="N",
        help="run each task N times (rollouts for RL; sample with --temperature; default: 1)",
    )
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="run each episode as a Ray task on the cluster at ADDRESS (none: a local one, "
        "on loopback); needs the scale extra",
    )
    parser.add_argument(
        "--trust-cluster",
        action="store_true",
        help="with --ray ADDRESS: the cluster is yours alone (whoever runs code on it runs "
        "code as you here: results are unpickled)",
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
        type=positive_int,
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
        choices=("on", "off", "mine"),
        default="on",
        help="on (default): the model first chooses a shipped recipe and fills its slots, "
        "and writes commands itself only when none fits; mine: your own recipes and what "
        "you taught too; off: it writes every command",
    )
    parser.add_argument(
        "--threads",
        type=positive_int,
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
    parser.add_argument(
        "--logprobs",
        action="store_true",
        help="record each reply's token logprobs (and token ids where the model gives them) "
        "in the transcripts, for export --format rl",
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


@dataclass(frozen=True)
class AgentSpec:
    """What agent to make, as plain data: a Ray worker makes its own from it."""

    kind: str
    model: str | None = None
    options: tuple[tuple[str, Any], ...] = ()
    max_turns: int = 15
    command_timeout: float = 30.0
    examples: int = 2
    policy: str = "default"
    jobs: int = 1
    logprobs: bool = False
    recipes: bool = False
    own_recipes: bool = False  # with the user's own recipes and what they taught


def build_agent(spec: AgentSpec) -> Any:
    """The agent ``spec`` describes (on a Ray worker too: it must need nothing else)."""
    from shellagent.eval import ModelAgent, NothingAgent

    if spec.kind == "gold":
        from shellagent.taskgen.gold_agent import GoldAgent

        return GoldAgent(command_timeout=spec.command_timeout)
    if spec.kind == "nothing":
        return NothingAgent()
    from shellagent.model import load_backend

    backend = load_backend(spec.model, **dict(spec.options))
    return ModelAgent(
        backend,
        max_turns=spec.max_turns,
        command_timeout=spec.command_timeout,
        model_name=spec.model or backend.name,
        jobs=spec.jobs,
        examples=spec.examples,
        policy=spec.policy,
        capture_logprobs=spec.logprobs,
        recipes=spec.recipes,
        own_recipes=spec.own_recipes,
    )


def agent_spec(args: argparse.Namespace) -> AgentSpec:
    if args.agent in ("nothing", "gold"):
        if args.model:
            raise InputError(f"--model has no effect with --agent {args.agent}", hint="drop one")
        if args.logprobs:
            raise InputError(f"--logprobs has no effect with --agent {args.agent}", hint="drop one")
        return AgentSpec(args.agent, command_timeout=args.command_timeout)
    sampling = {  # both kinds of backend: a server is sent them with each request
        "--temperature": ("temperature", args.temperature),
        "--seed": ("seed", args.seed),
    }
    local_only = {
        "--threads": ("n_threads", args.threads),
        "--repeat-penalty": ("repeat_penalty", args.repeat_penalty),
    }
    remote = (args.model or "").startswith("openai:")
    options: dict[str, int | float] = {}
    for flag, (option, value) in (*sampling.items(), *local_only.items()):
        if value is None:
            continue
        if remote and flag in local_only:
            raise InputError(f"{flag} applies to a local model, not an openai: endpoint")
        options[option] = value
    if args.ray is not None and not remote and "n_threads" not in options:
        options["n_threads"] = 1  # one CPU per Ray task: a local model per worker, one thread
    if args.samples > 1 and not args.temperature:
        print(
            f"note: --samples {args.samples} at temperature 0 gives the same rollout each "
            "time; add --temperature (e.g. 0.8)",
            file=sys.stderr,
        )
    return AgentSpec(
        "model",
        model=args.model,
        options=tuple(sorted(options.items())),
        max_turns=args.max_turns,
        command_timeout=args.command_timeout,
        examples=max(args.examples, 0),
        policy=args.policy,
        jobs=1 if args.ray is not None else args.jobs,
        logprobs=args.logprobs,
        recipes=args.recipes != "off",
        own_recipes=args.recipes == "mine",
    )


def previous_results(out: Path, tasks: Sequence[Any], samples: int) -> list[Any]:
    """The finished episodes an earlier run with this ``--out`` left (a rerun resumes)."""
    from shellagent.eval.runner import TaskResult

    path = out / "results.jsonl"
    if not path.is_file():
        return []
    wanted = {t.id for t in tasks}
    found: dict[tuple[str, int], TaskResult] = {}
    names = {f.name for f in fields(TaskResult)}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
            result = TaskResult(**{k: v for k, v in row.items() if k in names})
        except (ValueError, TypeError):
            continue  # a line cut by a crash: that episode runs again
        if result.id in wanted and result.sample < samples and result.status in FINAL:
            found[(result.id, result.sample)] = result
    return list(found.values())


FINAL = ("solved", "failed", "invalid")  # errors and cancelled episodes run again


def run(args: argparse.Namespace) -> int:
    """Run a task set, one throwaway sandbox per task, and report how many were solved.

    Each task's setup runs first (a failing setup makes the task invalid), then its check
    must fail, then the agent acts with the policy in force (ask = approved), then the check
    decides. The report directory gets summary.txt/json, results.csv/jsonl and one
    transcript per episode in transcripts/ (turn them into RL data with
    `shellagent export --format rl --from DIR/transcripts`).

    exit status: 0 the run completed, 1 some tasks hit a harness error, 130 interrupted
    (the partial report is still written).

    With --samples N each task is run N times (rollouts for RL training); results.jsonl
    numbers them (`sample`) and `shellagent export --format rl --group --from
    DIR/transcripts` groups them with group-relative advantages.

    Rerunning with the same --out resumes: episodes already solved, failed or invalid
    there are kept, the rest run. --ray [ADDRESS] runs each episode as a Ray task (a
    local cluster on loopback without ADDRESS; an ADDRESS needs --trust-cluster: a Ray
    cluster is full trust both ways); the report is the same.

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
    from shellagent.eval.report import result_row
    from shellagent.transcript import Redactor

    if args.ray and args.ray != "local" and not args.trust_cluster:
        from shellagent.eval.distributed import TRUST_HINT

        raise InputError(
            f"will not connect to the Ray cluster at {args.ray} without --trust-cluster",
            hint=TRUST_HINT,
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

    spec = agent_spec(args)
    if args.ray is None:
        from shellagent.sandbox import Sandbox

        Sandbox("ephemeral").close()  # a sandbox that cannot start fails here, with the fix
        agent = build_agent(spec)
        if getattr(agent, "recipes", False):
            agent.recipe_book()  # trains the ranker if the recipe set changed, before any task
        name = agent.name
    else:
        name = (spec.model or "embedded") if spec.kind == "model" else spec.kind
    out = args.out or default_out_dir(name if args.agent == "model" else args.agent)
    out.mkdir(parents=True, exist_ok=True)
    done = previous_results(out, tasks, args.samples)
    if done:
        print(
            f"resuming: {len(done)} of {len(tasks) * args.samples} episodes are already in "
            f"{out} (a new --out starts over)",
            file=sys.stderr,
        )
    config = RunConfig(transcripts_dir=out / "transcripts")
    progress = Progress(len(tasks) * args.samples - len(done))
    stream = (out / "results.jsonl").open("a", encoding="utf-8")
    redactor = Redactor.from_environment()

    def finished(result: Any) -> None:
        progress.update(result)
        row = redactor.redact_record(result_row(result))  # as write_results: redacted
        stream.write(json.dumps(row, ensure_ascii=False) + "\n")
        stream.flush()  # a crash keeps what finished: the rerun resumes from it

    try:
        if args.ray is None:
            eval_run = run_eval(
                tasks,
                agent,
                config,
                jobs=args.jobs,
                samples=args.samples,
                done=done,
                on_result=finished,
            )
        else:
            from shellagent.eval.distributed import run_eval_ray

            eval_run = run_eval_ray(
                tasks,
                functools.partial(build_agent, spec),
                config,
                address=args.ray or None,
                trust_cluster=args.trust_cluster,
                samples=args.samples,
                done=done,
                on_result=finished,
            )
    finally:
        stream.close()
    progress.finish()
    label = f"model {name}" if args.agent == "model" else args.agent
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
