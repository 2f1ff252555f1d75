"""How useful is the embedded 135M model as a shell agent? Valid actions, valid bash, tasks solved.

Runs the first N tasks of a ``shell-tasks`` file, each in a fresh ephemeral sandbox: the setup
commands (a task whose setup fails is invalid), the success check (it must fail before the
agent acts, or the task is invalid), the agent with ``ask`` decisions approved (``deny`` still
denies), then the success check again in a fresh bash of the same sandbox.

Prints, over the valid tasks: the share of model turns that produced a valid action, the share
of proposed commands that pass ``bash -n``, tasks solved, and how sessions ended. Every task's
record goes to ``--out`` (JSONL) as it finishes, so a long run can be watched.

    python bench/small_model_bench.py --limit 10 --out /tmp/bench.jsonl
    python bench/small_model_bench.py --temperature 0.2 --repeat-penalty 1.1
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shellagent.events import ModelTurn, PolicyVerdict

if TYPE_CHECKING:
    from shellagent import Agent

TASKS = Path(__file__).resolve().parents[2] / "shared" / "tasks" / "shell-tasks-dev.jsonl"


def bash_syntax_ok(command: str) -> bool:
    """Whether bash parses ``command`` (``bash -n``: read, never executed)."""
    done = subprocess.run(
        ["bash", "-n", "-c", command], capture_output=True, text=True, timeout=10, check=False
    )
    return done.returncode == 0


def check(session: Any, condition: str, cwd: str) -> tuple[int, str]:
    """The success condition in a fresh bash of the sandbox, from the starting directory."""
    result = session.run(f"cd {shlex.quote(cwd)} && bash -c {shlex.quote(condition)}", timeout=30)
    return result.exit_code, result.output


def run_one(task: dict[str, Any], agent: Agent) -> dict[str, Any]:
    from shellagent.testing import MemorySink

    record: dict[str, Any] = {"id": task["id"], "task": task["task"]}
    with agent.open_shell() as session:
        start_cwd = session.cwd
        for command in task["setup_commands"]:
            result = session.run(command, timeout=60)
            if result.exit_code != 0:
                record.update(valid=False, invalid_reason=f"setup failed: {command}")
                return record
        code, _ = check(session, task["success_condition"], start_cwd)
        if code == 0:
            record.update(valid=False, invalid_reason="check passes before the agent acts")
            return record
        sink = MemorySink()
        began = time.perf_counter()
        outcome = agent.run(task["task"], shell=session, sink=sink, task_id=task["id"])
        elapsed = time.perf_counter() - began
        code, output = check(session, task["success_condition"], start_cwd)
    turns = sink.of_type(ModelTurn)
    commands = [t.action["cmd"] for t in turns if t.action and "cmd" in t.action]
    record.update(
        valid=True,
        solved=code == 0,
        reason=outcome.reason,
        turns=len(turns),
        valid_turns=sum(1 for t in turns if t.valid),
        commands=commands,
        bash_ok=[bash_syntax_ok(c) for c in commands],
        denied=sum(1 for e in sink.of_type(PolicyVerdict) if e.decision == "deny"),
        executed=len(outcome.commands),
        nonzero=sum(1 for r in outcome.commands if r.exit_code != 0),
        distinct_commands=len(set(commands)),
        generated_tokens=sum(t.generated_tokens or 0 for t in turns),
        model_s=round(sum(t.duration_s or 0.0 for t in turns), 2),
        seconds=round(elapsed, 2),
        summary=outcome.summary,
        error=outcome.error,
    )
    return record


_PATH = re.compile(r"(?<![\w.~])/[\w.*-]+(?:/[\w.*-]+)*")


def grounded(command: str, task: str) -> bool:
    """Whether every absolute path in ``command`` is under a directory the task names (or
    /tmp): a path taken from the prompt's examples instead of the task is not."""
    for path in _PATH.findall(command):
        top = "/".join(path.split("/")[:3])
        if path != "/" and not (path + "/").startswith("/tmp/") and top not in task:
            return False
    return True


def report(records: list[dict[str, Any]], wall_s: float) -> str:
    valid = [r for r in records if r["valid"]]
    turns = sum(r["turns"] for r in valid)
    valid_turns = sum(r["valid_turns"] for r in valid)
    proposed = sum(len(r["commands"]) for r in valid)
    bash_ok = sum(sum(r["bash_ok"]) for r in valid)
    solved = sum(1 for r in valid if r["solved"])
    reasons = collections.Counter(r["reason"] for r in valid)
    tokens = sum(r["generated_tokens"] for r in valid)
    model_s = sum(r["model_s"] for r in valid)
    distinct = sum(r["distinct_commands"] for r in valid)
    on_task = sum(grounded(c, r["task"]) for r in valid for c in r["commands"])
    executed = sum(r["executed"] for r in valid)
    nonzero = sum(r["nonzero"] for r in valid)

    def share(a: int, b: int) -> str:
        return f"{a}/{b} ({100 * a / b:.1f}%)" if b else f"{a}/0"

    lines = [
        f"tasks run: {len(records)}, valid: {len(valid)}"
        + (
            f" (invalid: {', '.join(r['id'] for r in records if not r['valid'])})"
            if len(valid) < len(records)
            else ""
        ),
        f"valid actions:           {share(valid_turns, turns)} of model turns",
        f"commands passing bash -n: {share(bash_ok, proposed)} of proposed commands",
        f"distinct commands:        {share(distinct, proposed)} of proposed commands",
        f"paths from the task:      {share(on_task, proposed)} of proposed commands",
        f"commands exiting non-0:   {share(nonzero, executed)} of executed commands",
        f"solved:                   {share(solved, len(valid))} of valid tasks",
        f"endings: {dict(reasons.most_common())}",
        f"mean turns per task: {turns / max(len(valid), 1):.1f}; "
        f"model time {model_s:.0f}s for {tokens} tokens; wall {wall_s:.0f}s",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tasks", type=Path, default=TASKS)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--max-turns", type=int, default=15)
    parser.add_argument("--model", default=None, help="model spec (default: embedded)")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--repeat-penalty", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=None, help="JSONL, one record per task")
    parser.add_argument(
        "--report", type=Path, default=None, help="only summarise the records of an earlier --out"
    )
    args = parser.parse_args(argv)
    if args.report:
        done = [json.loads(line) for line in args.report.read_text().splitlines() if line]
        print(report(done, 0.0))
        return 0

    from shellagent import Agent, AgentConfig, AutoApprover
    from shellagent.model import load_backend
    from shellagent.policy import PolicyEngine, default_policy_path

    lines = args.tasks.read_text().splitlines()[args.offset : args.offset + args.limit]
    tasks = [json.loads(line) for line in lines if line.strip()]
    backend = load_backend(
        args.model, temperature=args.temperature, repeat_penalty=args.repeat_penalty
    )
    agent = Agent(
        backend,
        policy=PolicyEngine.load([default_policy_path()], workspace=Path("/root")),
        profile="ephemeral",
        approver=AutoApprover(),
        config=AgentConfig(max_turns=args.max_turns, command_timeout=20.0),
        source="eval",
    )
    out = args.out.open("w") if args.out else None
    records: list[dict[str, Any]] = []
    began = time.perf_counter()
    for task in tasks:
        record = run_one(task, agent)
        records.append(record)
        status = (
            ("SOLVED" if record["solved"] else record["reason"]) if record["valid"] else "invalid"
        )
        print(f"{task['id']}: {status}", file=sys.stderr, flush=True)
        if out:
            out.write(json.dumps(record) + "\n")
            out.flush()
    print(report(records, time.perf_counter() - began))
    return 0


if __name__ == "__main__":
    sys.exit(main())
