"""The report of a run: its ``Scorecard`` (95% interval on the solve rate) and per-task files.

``<out>/summary.json``   the scorecard (``shellagent eval --json`` prints the same)
``<out>/summary.txt``    the summary table
``<out>/results.csv``    one row per task that ran, columns ``RESULT_FIELDS``
``<out>/results.jsonl``  the same rows as JSON objects
``<out>/transcripts/``   one transcript per episode (the runner writes them)

Only valid tasks (solved or failed) enter the solve rate and the means; invalid, cancelled
and errored tasks are counted apart.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from shellagent.eval.runner import EvalRun, TaskResult
from shellagent.jsontypes import JsonObject
from shellagent.transcript.redact import Redactor

RESULT_FIELDS = tuple(f.name for f in fields(TaskResult))
Z_95 = 1.959963984540054


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion; (0, 0) for no trials.

    Unlike the normal approximation it stays inside [0, 1] and is honest at 0 of n.
    """
    if trials <= 0:
        return (0.0, 0.0)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)  # exact at the ends
    return (low, high)


@dataclass(frozen=True)
class Scorecard:
    """The figures of one run (``events.Summary`` is the wire's end of one task). ``to_json``
    keys are stable (``--json`` prints them)."""

    agent: str
    tasks: int
    ran: int
    valid: int
    solved: int
    failed: int
    invalid: int
    invalid_by_reason: dict[str, int]
    cancelled: int
    errors: int
    not_run: int
    solve_rate: float | None
    solve_rate_ci95: tuple[float, float] | None
    mean_turns: float | None
    mean_reward: float | None
    mean_nonzero_exits: float | None
    generated_tokens: int
    wall_s: float
    mean_task_s: float | None
    median_sandbox_ms: float | None
    jobs: int
    interrupted: bool
    skipped_lines: list[str] = field(default_factory=list)
    samples: int = 1
    """Rollouts per task; with more than one, the counts above are of episodes."""
    tasks_solved_any: int | None = None
    """Tasks solved by at least one of their rollouts (pass@samples), with ``samples`` > 1."""
    claimed: int = 0
    """Valid tasks whose result the agent presented as done, with no stated doubt."""
    claimed_solved: int = 0
    """Of those, the ones the check found solved: how often a claim is right."""

    def to_json(self) -> JsonObject:
        data: JsonObject = asdict(self)
        if self.solve_rate_ci95 is not None:
            data["solve_rate_ci95"] = list(self.solve_rate_ci95)
        return data


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def summarize(run: EvalRun, *, agent: str, skipped_lines: Sequence[str] = ()) -> Scorecard:
    results = run.results
    valid = [r for r in results if r.valid]
    solved = sum(1 for r in valid if r.status == "solved")
    by_reason = Counter(r.invalid_reason or "?" for r in results if r.status == "invalid")
    sandbox_ms = [r.sandbox_s * 1000 for r in results if r.sandbox_s > 0]
    return Scorecard(
        agent=agent,
        tasks=len(run.tasks),
        ran=len(results),
        valid=len(valid),
        solved=solved,
        failed=len(valid) - solved,
        invalid=sum(by_reason.values()),
        invalid_by_reason=dict(sorted(by_reason.items())),
        cancelled=sum(1 for r in results if r.status == "cancelled"),
        errors=sum(1 for r in results if r.status == "error"),
        not_run=run.not_run,
        solve_rate=solved / len(valid) if valid else None,
        solve_rate_ci95=wilson_interval(solved, len(valid)) if valid else None,
        mean_turns=_mean([r.turns for r in valid]),
        mean_reward=_mean([r.reward for r in valid if r.reward is not None]),
        mean_nonzero_exits=_mean([r.nonzero_exits for r in valid]),
        generated_tokens=sum(r.generated_tokens for r in results),
        wall_s=run.wall_s,
        mean_task_s=_mean([r.wall_s for r in results]),
        median_sandbox_ms=statistics.median(sandbox_ms) if sandbox_ms else None,
        jobs=run.jobs,
        interrupted=run.interrupted,
        skipped_lines=list(skipped_lines),
        samples=run.samples,
        tasks_solved_any=(
            len({r.id for r in valid if r.status == "solved"}) if run.samples > 1 else None
        ),
        claimed=sum(1 for r in valid if r.claimed),
        claimed_solved=sum(1 for r in valid if r.claimed and r.status == "solved"),
    )


def _claims(summary: Scorecard) -> str:
    """How many results were presented as done, and how many of those were right."""
    if not summary.claimed:
        return "0"
    right = summary.claimed_solved / summary.claimed
    return f"{summary.claimed} ({summary.claimed_solved} right: {_pct(right)})"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def render_summary(summary: Scorecard) -> str:
    """The summary table shown at the end of a run."""
    ci = summary.solve_rate_ci95
    interval = f"  (95% CI {_pct(ci[0])}–{_pct(ci[1])})" if ci else ""
    rows = [
        ("agent", summary.agent),
        (
            "tasks",
            f"{summary.ran} of {summary.tasks} ran"
            + (f", {summary.not_run} not run" if summary.not_run else "")
            + (" (interrupted)" if summary.interrupted else ""),
        ),
        *(
            [("rollouts", f"{summary.samples} per task; the counts below are of episodes")]
            if summary.samples > 1
            else []
        ),
        ("valid", str(summary.valid)),
        ("solved", f"{summary.solved}"),
        ("failed", f"{summary.failed}"),
        ("solve rate", f"{_pct(summary.solve_rate)}{interval}"),
        ("claimed", _claims(summary)),
        *(
            [
                (
                    f"pass@{summary.samples}",
                    f"{summary.tasks_solved_any} tasks solved at least once",
                )
            ]
            if summary.tasks_solved_any is not None
            else []
        ),
        ("mean turns", _num(summary.mean_turns)),
        ("mean reward", _num(summary.mean_reward, 3)),
        ("mean non-zero exits", _num(summary.mean_nonzero_exits)),
        ("tokens generated", str(summary.generated_tokens)),
        ("invalid", str(summary.invalid)),
    ]
    rows += [(f"  {reason}", str(n)) for reason, n in summary.invalid_by_reason.items()]
    if summary.cancelled:
        rows.append(("cancelled", str(summary.cancelled)))
    if summary.errors:
        rows.append(("harness errors", str(summary.errors)))
    if summary.skipped_lines:
        rows.append(("bad task lines", str(len(summary.skipped_lines))))
    rows += [
        ("wall time", f"{summary.wall_s:.1f}s with {summary.jobs} job(s)"),
        ("time per task", f"{_num(summary.mean_task_s)}s"),
        (
            "sandbox per task",
            f"{_num(summary.median_sandbox_ms, 1)} ms median (start + setup + checks)",
        ),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name.ljust(width)}  {value}" for name, value in rows)


def result_row(result: TaskResult) -> JsonObject:
    """One line of ``results.jsonl`` (times and rewards rounded)."""
    row = result.to_json()
    row["wall_s"] = round(result.wall_s, 4)
    row["sandbox_s"] = round(result.sandbox_s, 4)
    row["agent_s"] = round(result.agent_s, 4)
    if result.reward is not None:
        row["reward"] = round(result.reward, 6)
    return row


def write_results(results: Sequence[TaskResult], out: Path) -> None:
    """``results.csv`` and ``results.jsonl`` in ``out``, redacted like a transcript (an
    answer or a detail may quote what a command printed)."""
    out.mkdir(parents=True, exist_ok=True)
    redactor = Redactor.from_environment()
    rows = [redactor.redact_record(result_row(result)) for result in results]
    with (out / "results.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=RESULT_FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
    with (out / "results.jsonl").open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_report(run: EvalRun, summary: Scorecard, out: Path) -> None:
    """Every report file of a run into ``out``."""
    write_results(run.results, out)
    redactor = Redactor.from_environment()
    (out / "summary.json").write_text(
        json.dumps(redactor.redact_record(summary.to_json()), indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    (out / "summary.txt").write_text(
        redactor.redact(render_summary(summary)) + "\n", encoding="utf-8"
    )
