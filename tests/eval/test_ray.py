"""``eval --ray``: episodes as Ray tasks on a local cluster (2 CPUs), same report as local."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellagent.cli.main import main
from shellagent.eval import NothingAgent, RunConfig
from shellagent.taskgen.library import library_path

from .conftest import make_task

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def cluster() -> Iterator[None]:
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=100 * 1024 * 1024,
    )
    try:
        yield
    finally:
        ray.shutdown()


def verdicts(out: Path) -> dict[tuple[str, int], str]:
    rows = [json.loads(r) for r in (out / "results.jsonl").read_text().splitlines()]
    return {(r["id"], r["sample"]): r["status"] for r in rows}


@pytest.mark.parametrize("agent", ["gold", "nothing"])
def test_twenty_tasks_through_ray_get_the_same_verdicts_as_a_local_run(
    agent: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = [str(library_path()), "--limit", "20", "--agent", agent]
    assert main(["eval", *common, "--jobs", "2", "--out", str(tmp_path / "local")]) == 0
    assert main(["eval", *common, "--ray", "--json", "--out", str(tmp_path / "ray")]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    local, remote = verdicts(tmp_path / "local"), verdicts(tmp_path / "ray")
    assert len(remote) == 20 and remote == local
    solved = sum(1 for s in remote.values() if s == "solved")
    assert solved == (summary["valid"] if agent == "gold" else 0) and summary["errors"] == 0
    transcripts = list((tmp_path / "ray" / "transcripts").glob("*.jsonl"))
    assert len(transcripts) == summary["valid"]  # invalid tasks never reach the agent


def test_a_rerun_resumes_and_runs_only_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["eval", str(library_path()), "--limit", "4", "--agent", "gold", "--ray"]
    assert main([*args, "--out", str(out)]) == 0
    results = out / "results.jsonl"
    lines = results.read_text().splitlines()
    results.write_text("\n".join(lines[:2]) + '\n{"id": "cut by a cra')  # a crash mid-line
    for transcript in sorted((out / "transcripts").glob("*.jsonl")):
        transcript.unlink()
    capsys.readouterr()
    assert main([*args, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "resuming: 2 of 4 episodes" in err
    assert len(verdicts(out)) == 4
    assert len(list((out / "transcripts").glob("*.jsonl"))) <= 2  # only the two reruns


def test_cancel_stops_the_run_and_leaves_no_sandbox(tmp_path: Path) -> None:
    from shellagent.eval.distributed import run_eval_ray

    tasks = [make_task(f"slow-{i}", setup=("sleep 61.73",)) for i in range(4)]
    cancel = threading.Event()
    threading.Timer(8.0, cancel.set).start()
    run = run_eval_ray(tasks, NothingAgent, RunConfig(transcripts_dir=tmp_path), cancel=cancel)
    assert run.interrupted and len(run.results) == 0
    deadline = time.monotonic() + 20  # a forced cancel kills the worker; its sandbox follows
    while time.monotonic() < deadline:
        left = subprocess.run(["pgrep", "-f", "sleep 61.73"], capture_output=True).stdout
        if not left:
            break
        time.sleep(0.2)
    assert not left


def test_a_worker_that_cannot_sandbox_is_a_harness_error_not_a_failed_task(
    tmp_path: Path,
) -> None:
    from shellagent.eval.distributed import run_eval_ray

    tasks = [make_task(f"t-{i}") for i in range(2)]
    run = run_eval_ray(
        tasks,
        NothingAgent,
        RunConfig(transcripts_dir=tmp_path),
        runtime_env={"env_vars": {"SHELLAGENT_BWRAP": "/nonexistent/bwrap"}},
    )
    assert [r.status for r in run.results] == ["error", "error"]
    assert all("cannot sandbox" in r.detail for r in run.results)
