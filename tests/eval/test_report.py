from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from shellagent.eval import EvalRun, TaskResult, render_summary, summarize, write_report
from shellagent.eval import wilson_interval as wilson
from shellagent.eval.report import RESULT_FIELDS

from .conftest import make_task


def test_wilson_interval_matches_known_values() -> None:
    assert wilson(0, 0) == (0.0, 0.0)
    low, high = wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    low, high = wilson(10, 10)
    assert low == pytest.approx(0.7225, abs=1e-4) and high == 1.0


def _run() -> EvalRun:
    tasks = [make_task(f"t{i}") for i in range(7)]
    results = [
        TaskResult(
            "t0",
            "solved",
            turns=2,
            commands=1,
            reward=0.98,
            generated_tokens=30,
            wall_s=2.0,
            sandbox_s=0.04,
        ),
        TaskResult(
            "t1",
            "failed",
            turns=4,
            commands=4,
            nonzero_exits=4,
            reward=-0.14,
            generated_tokens=90,
            wall_s=4.0,
            sandbox_s=0.05,
        ),
        TaskResult(
            "t2",
            "invalid",
            invalid_reason="setup failed",
            detail="$ chown x\n[exit 1]",
            wall_s=0.03,
            sandbox_s=0.03,
        ),
        TaskResult(
            "t3", "invalid", invalid_reason="already satisfied", wall_s=0.02, sandbox_s=0.02
        ),
        TaskResult("t4", "invalid", invalid_reason="setup failed", wall_s=0.03, sandbox_s=0.03),
        TaskResult("t5", "error", detail="boom", wall_s=0.1),
    ]
    return EvalRun(tasks=tasks, results=results, interrupted=True, wall_s=6.5, jobs=2)


def test_only_valid_tasks_enter_the_rate_and_the_means() -> None:
    summary = summarize(_run(), agent="nothing", skipped_lines=["tasks.jsonl:3: bad"])
    assert (summary.valid, summary.solved, summary.failed) == (2, 1, 1)
    assert summary.invalid == 3
    assert summary.invalid_by_reason == {"already satisfied": 1, "setup failed": 2}
    assert (summary.errors, summary.not_run, summary.ran, summary.tasks) == (1, 1, 6, 7)
    assert summary.solve_rate == 0.5 and summary.solve_rate_ci95 == wilson(1, 2)
    assert summary.mean_turns == 3.0 and summary.mean_reward == pytest.approx(0.42)
    assert summary.generated_tokens == 120 and summary.median_sandbox_ms == pytest.approx(30)
    table = render_summary(summary)
    assert "solve rate           50.0%  (95% CI" in table
    assert "  setup failed       2" in table and "(interrupted)" in table
    assert "bad task lines       1" in table


def test_a_run_with_no_valid_task_has_no_rate() -> None:
    run = EvalRun(
        tasks=[make_task()], results=[TaskResult("t-1", "invalid", invalid_reason="setup failed")]
    )
    summary = summarize(run, agent="nothing")
    assert summary.solve_rate is None and summary.solve_rate_ci95 is None
    assert "solve rate           -" in render_summary(summary)


def test_the_report_files_hold_one_row_per_task_that_ran(tmp_path: Path) -> None:
    run = _run()
    summary = summarize(run, agent="nothing")
    write_report(run, summary, tmp_path)
    with (tmp_path / "results.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == RESULT_FIELDS
    assert [r["id"] for r in rows] == ["t0", "t1", "t2", "t3", "t4", "t5"]
    assert rows[2]["detail"] == "$ chown x\n[exit 1]" and rows[2]["status"] == "invalid"
    lines = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert lines[1]["reward"] == -0.14 and lines[1]["nonzero_exits"] == 4
    assert lines[2]["reward"] is None
    data = json.loads((tmp_path / "summary.json").read_text())
    assert data["solve_rate_ci95"] == list(wilson(1, 2)) and data["interrupted"] is True
    assert (tmp_path / "summary.txt").read_text() == render_summary(summary) + "\n"


def test_claims_are_counted_with_how_many_were_right() -> None:
    tasks = [make_task(f"t{i}") for i in range(4)]
    results = [
        TaskResult("t0", "solved", claimed=True),
        TaskResult("t1", "failed", claimed=True),
        TaskResult("t2", "solved"),
        TaskResult("t3", "invalid", invalid_reason="setup failed", claimed=True),
    ]
    card = summarize(EvalRun(tasks=tasks, results=results, jobs=1, wall_s=1.0), agent="a")
    assert (card.claimed, card.claimed_solved) == (2, 1)  # the invalid task counts for nothing
    assert card.to_json()["claimed"] == 2 and card.to_json()["claimed_solved"] == 1
    assert "2 (1 right: 50.0%)" in render_summary(card)
