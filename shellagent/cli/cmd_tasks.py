"""``shellagent tasks``: generate, verify and compare task sets; the verified library."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from shellagent.cli.argtypes import positive_int, subcommand
from shellagent.errors import InputError, TaskFailed

if TYPE_CHECKING:
    from shellagent.taskgen.verify import VerifyRun


def _verify_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs", type=positive_int, default=2, metavar="J", help="sandboxes at once (2)"
    )
    parser.add_argument("--cache", type=Path, metavar="FILE", help="verdict cache file")
    parser.add_argument("--no-cache", action="store_true", help="verify everything again")
    parser.add_argument("--json", action="store_true", help="print the summary as one object")


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "tasks",
        help="generate and verify task sets (families, generate, verify, build, leakage)",
        description="Task sets made from families of everyday shell work, verified in the\n"
        "ephemeral sandbox.\n\nexample: shellagent tasks build --jobs 2",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="tasks_command", metavar="ACTION", required=True)
    fam = subcommand(sub, "families", cmd_families, "list the task families")
    fam.add_argument("--json", action="store_true", help="one JSON object per family")

    gen = subcommand(sub, "generate", cmd_generate, "draw a task set from the families")
    _seed_options(gen)
    gen.add_argument("--family", metavar="A,B", help="only these families")
    gen.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (.gz: gzip)")

    ver = subcommand(sub, "verify", cmd_verify, "verify a task set in the ephemeral sandbox")
    ver.add_argument("tasks", type=Path, metavar="TASKS.jsonl")
    ver.add_argument("-o", "--output", type=Path, metavar="FILE", help="write the verified lines")
    _verify_options(ver)

    build = subcommand(sub, "build", cmd_build, "generate, verify and write the library")
    _seed_options(build)
    build.add_argument("-o", "--output", type=Path, metavar="FILE", help="library file")
    _verify_options(build)

    leak = subcommand(sub, "leakage", cmd_leakage, "how close a task set comes to reference sets")
    leak.add_argument("tasks", type=Path, metavar="TASKS.jsonl")
    leak.add_argument(
        "--against", type=Path, action="append", required=True, metavar="FILE",
        help="reference task set (repeatable)",
    )  # fmt: skip
    leak.add_argument(
        "--top", type=positive_int, default=10, metavar="K", help="nearest pairs shown"
    )
    leak.add_argument("--max", type=float, metavar="S", help="exit 1 if any pair reaches S")
    leak.add_argument("--json", action="store_true", help="print the report as one object")

    sft = subcommand(sub, "sft", cmd_sft, "the verified library as SFT data for `shellagent train`")
    sft.add_argument("-o", "--output", type=Path, required=True, metavar="FILE")
    sft.add_argument("--limit", type=positive_int, metavar="N", help="only the first N tasks")
    sft.add_argument(
        "--examples", type=int, default=2, metavar="K", help="worked examples per prompt (2)"
    )
    every = subcommand(sub, "everyday", cmd_everyday, "write the hand-written answer-checked set")
    every.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here")


def _seed_options(parser: argparse.ArgumentParser) -> None:
    from shellagent.taskgen.generate import DEFAULT_PER_FAMILY, DEFAULT_SEED

    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"({DEFAULT_SEED})")
    parser.add_argument(
        "--per-family", type=positive_int, default=DEFAULT_PER_FAMILY, metavar="N",
        help=f"instances per family ({DEFAULT_PER_FAMILY})",
    )  # fmt: skip


def cmd_families(args: argparse.Namespace) -> int:
    """List the task families: name, area of work and what an instance asks.

    example: shellagent tasks families
    """
    from shellagent.taskgen.generate import families

    for fam in families():
        if args.json:
            print(json.dumps({"name": fam.name, "area": fam.area, "summary": fam.summary}))
        else:
            print(f"{fam.name:26} {fam.area:12} {fam.summary}")
    return 0


def _write_lines(tasks: Any, output: Path | None) -> None:
    from shellagent.taskgen.library import write_tasks

    if output is None:
        for task in tasks:
            sys.stdout.write(task.to_line() + "\n")
    else:
        write_tasks(tasks, output)
        print(f"wrote {len(tasks)} tasks to {output}", file=sys.stderr)


def cmd_generate(args: argparse.Namespace) -> int:
    """Draw a task set: --per-family instances of every family, reproducibly from --seed.

    The lines are in the task-set format (`shellagent eval` runs them) with the family,
    slots and gold commands; nothing is verified yet (see `shellagent tasks verify`).

    example: shellagent tasks generate --seed 14 --per-family 5 -o sample.jsonl
    """
    from shellagent.taskgen.generate import generate

    names = [n.strip() for n in args.family.split(",") if n.strip()] if args.family else None
    tasks = generate(args.seed, args.per_family, names)
    _write_lines(tasks, args.output)
    return 0


class _Ticker:
    """Verification progress on stderr: rewritten on a terminal, every 100 otherwise."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total, self.stream = total, stream
        self.live = stream.isatty()
        self.done = self.ok = self.cached = 0
        self.started = time.monotonic()
        self.lock = threading.Lock()

    def __call__(self, task: Any, verdict: Any, cached: bool) -> None:
        with self.lock:
            self.done += 1
            self.ok += verdict.ok
            self.cached += cached
            if self.live or self.done % 100 == 0 or self.done == self.total:
                rate = (self.done - self.cached) / max(time.monotonic() - self.started, 1e-6)
                line = (
                    f"[{self.done}/{self.total}] verified {self.ok} failed "
                    f"{self.done - self.ok} cached {self.cached} ({rate:.1f}/s)"
                )
                end = "\r" if self.live and self.done < self.total else "\n"
                self.stream.write(line + end)
                self.stream.flush()


def _run_verification(tasks: Any, args: argparse.Namespace) -> VerifyRun:
    from shellagent.sandbox import Sandbox
    from shellagent.taskgen.cache import VerifyCache, default_cache_path
    from shellagent.taskgen.verify import verify_all

    Sandbox("ephemeral").close()  # a sandbox that cannot start fails here, once, with the fix
    cache = None if args.no_cache else VerifyCache(args.cache or default_cache_path())
    return verify_all(
        tasks, jobs=args.jobs, cache=cache, on_verdict=_Ticker(len(tasks), sys.stderr)
    )


def _report(run: VerifyRun, args: argparse.Namespace, extra: Mapping[str, object]) -> int:
    """Print the run's figures (``extra`` added to the JSON); the exit status."""
    from shellagent.taskgen.verify import summarize

    summary = summarize(run)
    if args.json:
        print(json.dumps({**summary, **extra}))
    else:
        print(
            f"verified {summary['verified']} of {summary['tasks']} "
            f"({summary['failed']} failed, {summary['not_verified']} not verified, "
            f"{summary['from_cache']} from the cache) in {summary['wall_s']:.1f}s, "
            f"{summary['per_second']:.2f} tasks/s with {summary['jobs']} jobs"
        )
        for step, n in summary["failed_by_step"].items():
            print(f"  failed at {step}: {n}")
        for failure in summary["failures"]:
            print(f"  {failure['id']}: {failure['step']}: {failure['detail'].splitlines()[0]}")
    if run.interrupted:
        print("interrupted: rerun the same command to go on", file=sys.stderr)
        return 130
    return 1 if summary["failed"] else 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Verify every task of a set in its own ephemeral sandbox.

    Setup must succeed; the check must fail before anything is done and refuse the
    do-nothing answer, the task text and the task's wrong answers; the gold commands must
    exit 0; the check must pass with the answer built from their output. Verdicts are
    cached by task hash, so a second run (or one after Ctrl-C) only does what is new.
    -o writes the verified tasks with their observations and final answers.

    exit status: 0 all verified, 1 some failed, 130 interrupted.

    example: nice shellagent tasks verify sample.jsonl --jobs 2 -o sample-verified.jsonl
    """
    from shellagent.eval import load_tasks

    task_set = load_tasks(args.tasks)
    if task_set.problems:
        raise InputError(f"{args.tasks}:{task_set.problems[0]}", hint="fix the line first")
    run = _run_verification(list(task_set.tasks), args)
    if args.output is not None:
        _write_lines(run.ok, args.output)
    return _report(run, args, {})


def cmd_build(args: argparse.Namespace) -> int:
    """Generate the task set from --seed and write the verified library.

    The same seed and --per-family give the same library, byte for byte. Without -o the
    library shipped with the package is rewritten. A line whose gold holds a recipe with a
    plain form gets those plain commands verified too, and keeps them only where they pass
    its check with the same output (what a worked example shows).

    exit status: 0 every instance verified, 1 some failed (the library leaves them out),
    130 interrupted (nothing written).

    example: nice shellagent tasks build --jobs 2
    """
    from shellagent.taskgen import plain
    from shellagent.taskgen.generate import generate
    from shellagent.taskgen.library import library_bytes, library_path

    tasks = generate(args.seed, args.per_family)
    run = _run_verification(tasks, args)
    output = args.output or library_path()
    extra: dict[str, str | int] = {"seed": args.seed, "per_family": args.per_family}
    ok = run.ok
    if not run.interrupted:
        # the plain commands a worked example shows, each verified as a task of its own
        variants = [v for v in map(plain.variant, ok) if v is not None]
        print(f"the plain commands of {len(variants)} tasks", file=sys.stderr)
        checked = _run_verification(variants, args)
        run.interrupted = checked.interrupted
        verdicts = {
            t.id.removesuffix("/plain"): v
            for t, v in zip(checked.tasks, checked.verdicts, strict=True)
            if v is not None
        }
        ok = plain.settle(ok, verdicts)
        extra["plain"] = sum(bool(t.gold and t.gold.plain) for t in ok)
    if not run.interrupted:
        data = library_bytes(ok)
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_bytes(data)
        extra.update(library=str(output), library_bytes=len(data))
        print(
            f"wrote {len(ok)} verified tasks to {output} ({len(data)} bytes), "
            f"{extra['plain']} with plain commands",
            file=sys.stderr,
        )
    return _report(run, args, extra)


def cmd_leakage(args: argparse.Namespace) -> int:
    """Compare every task of a set with every task of the reference sets.

    Texts are compared as sets of normalised words (paths, file names and numbers
    abstracted); the report gives the highest similarity (Jaccard, 0 to 1), how the
    candidates' maxima are spread, and the nearest pairs.

    exit status: 0, or 1 when --max S is given and some pair reaches S.

    example: shellagent tasks leakage library.jsonl.gz --against shell-tasks-dev.jsonl
    """
    from shellagent.eval import load_tasks
    from shellagent.taskgen.leakage import compare

    candidates = [(t.id, t.task) for t in load_tasks(args.tasks).tasks]
    references = [(t.id, t.task) for path in args.against for t in load_tasks(path).tasks]
    report = compare(candidates, references, top=args.top)
    data = report.to_json()
    if args.json:
        print(json.dumps(data))
    else:
        print(
            f"{data['candidates']} tasks against {data['references']}: max similarity "
            f"{data['max_similarity']}, median {data['median']}, p99 {data['p99']}, "
            f"{data['exact']} exact, {data['at_least_0.5']} at 0.5 or more"
        )
        for pair in report.nearest:
            print(f"  {pair.similarity:.3f}  {pair.candidate_id}: {pair.candidate}")
            print(f"         {pair.reference_id}: {pair.reference}")
    if args.max is not None and report.max_similarity >= args.max:
        raise TaskFailed(
            f"a task reaches similarity {report.max_similarity:.3f} (--max {args.max})"
        )
    return 0


def cmd_everyday(args: argparse.Namespace) -> int:
    """Write the hand-written answer-checked everyday task set.

    The set shipped as shellagent/taskgen/data/everyday-answers.jsonl is this output.

    example: shellagent tasks everyday -o everyday-answers.jsonl
    """
    from shellagent.taskgen.everyday import everyday_tasks

    _write_lines(everyday_tasks(), args.output)
    return 0


def cmd_sft(args: argparse.Namespace) -> int:
    """Write the verified library as SFT conversations, prompted as the agent prompts.

    Each line is {"messages": [...]}: the system prompt with worked examples retrieved for
    the task from the rest of the library, the task, the gold commands with their recorded
    output as the loop would show it, and the gold answer.

    example: shellagent tasks sft -o lib.jsonl && shellagent train lib.jsonl -o lib.gguf
    """
    import itertools
    import json

    from shellagent.agent.examples import default_library
    from shellagent.taskgen.sft import conversations

    records = conversations(default_library(), k=args.examples)
    if args.limit is not None:
        records = itertools.islice(records, args.limit)
    count = 0
    with open(args.output, "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    print(f"wrote {count} conversations to {args.output}", file=sys.stderr)
    return 0
