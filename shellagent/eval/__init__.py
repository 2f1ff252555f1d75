"""Task sets: run a model (or a baseline) on shell tasks in throwaway sandboxes and score it.

    tasks = load_tasks("shell-tasks-dev.jsonl").tasks
    run = run_eval(tasks, NothingAgent(), RunConfig(transcripts_dir=out / "transcripts"))
    summary = summarize(run, agent="nothing")

Modules: ``tasks`` (the JSONL format), ``agents`` (the model agent, the do-nothing
baseline), ``runner`` (one sandbox per task, parallel jobs, cancellation), ``report``
(summary, Wilson interval, CSV/JSONL), ``progress`` (the stderr line).
"""

from __future__ import annotations

from shellagent.eval.agents import (
    AgentRun,
    EvalAgent,
    ModelAgent,
    NothingAgent,
)
from shellagent.eval.progress import Progress
from shellagent.eval.report import (
    Scorecard,
    render_summary,
    summarize,
    wilson_interval,
    write_report,
    write_results,
)
from shellagent.eval.runner import (
    EvalRun,
    RunConfig,
    TaskResult,
    run_eval,
    run_one,
)
from shellagent.eval.tasks import (
    Gold,
    Observation,
    Task,
    TaskProblem,
    TaskSet,
    load_tasks,
    parse_task_lines,
    select_tasks,
)

__all__ = [
    "AgentRun",
    "EvalAgent",
    "EvalRun",
    "Gold",
    "ModelAgent",
    "NothingAgent",
    "Observation",
    "Progress",
    "RunConfig",
    "Scorecard",
    "Task",
    "TaskProblem",
    "TaskResult",
    "TaskSet",
    "load_tasks",
    "parse_task_lines",
    "render_summary",
    "run_eval",
    "run_one",
    "select_tasks",
    "summarize",
    "wilson_interval",
    "write_report",
    "write_results",
]
