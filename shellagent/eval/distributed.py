"""Running a task set's episodes as Ray tasks (``shellagent eval --ray [ADDRESS]``).

Ray schedules; nothing here does. Each episode (a task and its sample number) is one Ray
task that needs one CPU: the worker makes the agent (once per worker process, from the
picklable ``make_agent`` the driver hands over, so a local model loads once and stays warm),
starts the throwaway sandbox *on the worker*, runs ``runner.run_one`` and sends back the
``TaskResult`` and the episode's transcript, which the driver writes into the same report
as a local run (``results.jsonl``, ``transcripts/``, the summary) as episodes finish.

A worker first checks, once per process, that it can sandbox at all (bwrap, user
namespaces, the throwaway root: the checks ``doctor`` makes). A node that cannot reports
every episode it is given as a harness ``error`` naming the node and the fix, never as a
failed task. Ctrl-C (or ``cancel``) cancels the episodes not finished (``ray.cancel``,
forced: the worker process and so its sandbox die) and returns what finished.

``ray`` is an optional dependency (``pip install -e .[scale]``); it is imported only here.
"""

from __future__ import annotations

import functools
import pickle
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shellagent.errors import EnvironmentProblem
from shellagent.eval.agents import EvalAgent
from shellagent.eval.runner import EvalRun, RunConfig, TaskResult, run_one
from shellagent.eval.tasks import Task
from shellagent.jsontypes import JsonObject

__all__ = ["RAY_HINT", "run_eval_ray"]

RAY_HINT = "install the scale extra: pip install -e '.[scale]' (or ./install.sh --scale)"
_POLL_S = 0.2


@dataclass(frozen=True)
class _Returned:
    result: TaskResult
    transcript: tuple[str, str] | None  # file name, text


_agents: dict[bytes, EvalAgent] = {}


def _agent(make_agent: Callable[[], EvalAgent]) -> EvalAgent:
    key = pickle.dumps(make_agent)
    if key not in _agents:
        _agents[key] = make_agent()
    return _agents[key]


@functools.cache
def _sandbox_problem() -> str | None:
    """Why this worker cannot run episodes (checked once per process), or None."""
    try:
        from shellagent.sandbox import Sandbox

        Sandbox("ephemeral").close()
    except EnvironmentProblem as exc:
        return exc.text()
    except Exception as exc:
        return f"{exc.__class__.__name__}: {exc}"
    return None


def episode(
    task_line: str,
    sample: int,
    make_agent: Callable[[], EvalAgent],
    config: RunConfig,
) -> _Returned:
    """One episode on a Ray worker (a plain function: Ray wraps it in ``run_eval_ray``)."""
    task = Task.model_validate_json(task_line)
    problem = _sandbox_problem()
    if problem is not None:
        detail = f"node {socket.gethostname()} cannot sandbox: {problem}"
        failed = TaskResult(id=task.id, status="error", detail=detail, sample=sample)
        return _Returned(failed, None)
    with tempfile.TemporaryDirectory(prefix="shellagent-episode-") as tmp:
        local = RunConfig(
            setup_timeout=config.setup_timeout,
            check_timeout=config.check_timeout,
            transcripts_dir=Path(tmp),
            max_session_s=config.max_session_s,
        )
        result = run_one(task, _agent(make_agent), local, threading.Event(), sample=sample)
        files = sorted(Path(tmp).glob("*.jsonl"))
        transcript = (files[0].name, files[0].read_text(encoding="utf-8")) if files else None
    return _Returned(result, transcript)


def run_eval_ray(
    tasks: Sequence[Task],
    make_agent: Callable[[], EvalAgent],
    config: RunConfig,
    *,
    address: str | None = None,
    samples: int = 1,
    done: Sequence[TaskResult] = (),
    cancel: threading.Event | None = None,
    on_result: Callable[[TaskResult], None] | None = None,
    runtime_env: JsonObject | None = None,
) -> EvalRun:
    """Run every (task, sample) not already in ``done`` as a Ray task on the cluster at
    ``address`` (None: the one this process is connected to, else a new local one)."""
    try:
        import ray
    except ImportError:
        raise EnvironmentProblem("--ray needs Ray, which is not installed", hint=RAY_HINT) from None
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:  # a local cluster: small object store (results are small), no dashboard
            ray.init(
                include_dashboard=False,
                log_to_driver=False,
                object_store_memory=100 * 1024 * 1024,
            )
    cancel = cancel or threading.Event()
    remote = ray.remote(num_cpus=1, max_retries=0)(episode)
    if runtime_env:
        remote = remote.options(runtime_env=runtime_env)
    finished = {(r.id, r.sample) for r in done}
    pending: dict[Any, tuple[str, int]] = {}
    for task in tasks:
        for sample in range(samples):
            if (task.id, sample) in finished:
                continue
            ref = remote.remote(task.model_dump_json(), sample, make_agent, config)
            pending[ref] = (task.id, sample)
    results: list[TaskResult] = list(done)
    started = time.monotonic()
    interrupted = False
    try:
        while pending and not cancel.is_set():
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=_POLL_S)
            for ref in ready:
                task_id, sample = pending.pop(ref)
                try:
                    returned: _Returned = ray.get(ref)
                except Exception as exc:  # the worker died: a harness error, not a failure
                    result = TaskResult(
                        id=task_id, status="error", detail=f"worker failed: {exc}", sample=sample
                    )
                else:
                    result = returned.result
                    if returned.transcript is not None and config.transcripts_dir is not None:
                        config.transcripts_dir.mkdir(parents=True, exist_ok=True)
                        name, text = returned.transcript
                        (config.transcripts_dir / name).write_text(text, encoding="utf-8")
                results.append(result)
                if on_result is not None:
                    on_result(result)
    except KeyboardInterrupt:
        interrupted = True
    if pending and (interrupted or cancel.is_set()):
        for ref in pending:
            ray.cancel(ref, force=True)
    order = {t.id: i for i, t in enumerate(tasks)}
    results.sort(key=lambda r: (order.get(r.id, len(order)), r.sample))
    return EvalRun(
        tasks=tasks,
        results=results,
        interrupted=interrupted or cancel.is_set(),
        wall_s=time.monotonic() - started,
        jobs=int(ray.cluster_resources().get("CPU", 1)),  # type: ignore[no-untyped-call]
        samples=samples,
    )
