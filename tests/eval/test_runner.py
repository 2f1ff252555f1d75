from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from shellagent.eval import NothingAgent, RunConfig, load_tasks, run_eval, run_one
from shellagent.events import Check
from shellagent.transcript import episode_reward, read_transcript

from .agents_for_tests import CommandsAgent
from .conftest import make_task


@pytest.fixture
def config(tmp_path: Path) -> RunConfig:
    return RunConfig(transcripts_dir=tmp_path / "transcripts", setup_timeout=20.0)


def test_a_failing_setup_makes_the_task_invalid_with_the_command_and_its_output(
    config: RunConfig,
) -> None:
    agent = CommandsAgent("touch /tmp/done")
    task = make_task(setup=("mkdir -p /data", "echo boom >&2; exit 3", "touch /data/never"))
    result = run_one(task, agent, config, threading.Event())
    assert result.status == "invalid" and result.invalid_reason == "setup failed"
    assert result.detail.startswith("$ echo boom >&2; exit 3\n[exit 3]\n")
    assert "boom" in result.detail
    assert agent.seen == [] and not result.valid


def test_a_check_that_passes_before_the_agent_acts_makes_the_task_invalid(
    config: RunConfig,
) -> None:
    agent = CommandsAgent("touch /tmp/done")
    task = make_task(setup=("mkdir -p /srv/app",), check="[ -d /srv/app ]")
    result = run_one(task, agent, config, threading.Event())
    assert (result.status, result.invalid_reason) == ("invalid", "already satisfied")
    assert agent.seen == []


def test_setup_files_reach_the_agent_and_its_files_reach_the_check(config: RunConfig) -> None:
    agent = CommandsAgent("cp /etc/app/conf /tmp/done", "false")
    task = make_task(
        setup=("mkdir -p /etc/app", "echo v=1 > /etc/app/conf"), check="grep -q v=1 /tmp/done"
    )
    result = run_one(task, agent, config, threading.Event())
    assert result.status == "solved" and result.check_exit_code == 0
    assert (result.turns, result.commands, result.nonzero_exits) == (2, 2, 1)
    assert result.reward == pytest.approx(episode_reward(True, 2, [0, 1]))
    assert result.generated_tokens == 14


def test_the_check_runs_in_a_fresh_shell_unaffected_by_the_agents_variables_and_cwd(
    config: RunConfig,
) -> None:
    agent = CommandsAgent("export MARK=agent; cd /tmp; touch /tmp/here; cd() { :; }; unset PATH")
    task = make_task(check='[ -z "$MARK" ] && [ "$PWD" != /tmp ] && ls /tmp/here')
    result = run_one(task, agent, config, threading.Event())
    assert result.status == "solved"


def test_the_transcript_holds_the_check_before_the_end_and_the_end_holds_the_verdict(
    config: RunConfig,
) -> None:
    task = make_task(check="[ -f /tmp/done ] && echo checked")
    result = run_one(task, CommandsAgent("touch /tmp/done"), config, threading.Event())
    assert config.transcripts_dir is not None
    transcript = read_transcript(config.transcripts_dir / f"{result.session}.jsonl")
    types = [e.kind for e in transcript.events]
    assert types[-2:] == ["check", "end"] and types[0] == "session_start"
    check = transcript.events[-2]
    assert isinstance(check, Check)
    assert check.success is True and check.output == "checked\n"
    assert check.command == task.success_condition
    assert transcript.end is not None and transcript.end.success is True
    assert transcript.success is True


def test_an_unsolved_task_is_failed_with_the_checks_exit_code(config: RunConfig) -> None:
    result = run_one(make_task(check="exit 4"), NothingAgent(), config, threading.Event())
    assert (result.status, result.check_exit_code, result.turns) == ("failed", 4, 0)
    assert result.reward == 0.0


def test_an_agent_that_crashes_is_a_harness_error_not_a_failure(config: RunConfig) -> None:
    def crash(task: object) -> None:
        raise RuntimeError("agent bug")

    result = run_one(make_task(), CommandsAgent(before=crash), config, threading.Event())
    assert result.status == "error" and "agent bug" in result.detail and not result.valid


@pytest.mark.slow
def test_the_do_nothing_agent_solves_no_valid_dev_task(dev_tasks: Path, config: RunConfig) -> None:
    tasks = load_tasks(dev_tasks).tasks
    run = run_eval(tasks, NothingAgent(), config, jobs=2)
    assert len(run.results) == len(tasks) and not run.interrupted
    statuses = {r.status for r in run.results}
    assert statuses <= {"failed", "invalid"}
    assert sum(r.valid for r in run.results) > 250


def test_the_do_nothing_agent_solves_none_of_the_first_dev_tasks(
    dev_tasks: Path, config: RunConfig
) -> None:
    tasks = load_tasks(dev_tasks).tasks[:25]
    run = run_eval(tasks, NothingAgent(), config)
    assert [r.id for r in run.results] == [t.id for t in tasks]
    assert not any(r.status == "solved" for r in run.results)
    assert sum(r.valid for r in run.results) >= 20


def test_parallel_jobs_run_every_task_once_and_report_in_task_order(config: RunConfig) -> None:
    tasks = [make_task(f"t{i}", check=f"[ -f /tmp/t{i} ]") for i in range(6)]
    agent = CommandsAgent("touch /tmp/t0 /tmp/t2 /tmp/t4")
    run = run_eval(tasks, agent, config, jobs=3)
    assert [r.id for r in run.results] == [t.id for t in tasks]
    assert sorted(agent.seen) == sorted(t.id for t in tasks)
    assert [r.status for r in run.results] == ["solved", "failed"] * 3


def test_cancelling_keeps_finished_results_and_marks_the_cut_task_cancelled(
    config: RunConfig,
) -> None:
    assert config.transcripts_dir is not None
    cancel = threading.Event()

    def cancel_on_second(task: object) -> None:
        if getattr(task, "id", "") == "t1":
            cancel.set()

    tasks = [make_task(f"t{i}") for i in range(4)]
    agent = CommandsAgent("touch /tmp/done", before=cancel_on_second)
    run = run_eval(tasks, agent, config, cancel=cancel)
    assert [(r.id, r.status) for r in run.results] == [("t0", "solved"), ("t1", "cancelled")]
    assert run.interrupted and run.not_run == 2
    # The cut episode's transcript has no end: RL export skips it rather than count a failure.
    cut = read_transcript(config.transcripts_dir / f"{run.results[1].session}.jsonl")
    assert cut.end is None and cut.success is None


def test_cancelling_interrupts_a_long_setup_command(config: RunConfig) -> None:
    cancel = threading.Event()
    timer = threading.Timer(0.5, cancel.set)
    timer.start()
    run = run_eval([make_task(setup=("sleep 30",))], NothingAgent(), config, cancel=cancel)
    timer.cancel()
    assert [r.status for r in run.results] == ["cancelled"]
    assert run.wall_s < 10


class _Alternating:
    """Solves every other rollout: the first solves, the second does nothing, and so on."""

    name = "alternating"

    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()

    def run(self, task: Any, *, shell: Any, sink: Any, cancel: threading.Event) -> Any:
        with self.lock:
            self.calls += 1
            solve = self.calls % 2 == 1
        agent = CommandsAgent("touch /tmp/done") if solve else CommandsAgent("true")
        return agent.run(task, shell=shell, sink=sink, cancel=cancel)


def test_samples_run_each_task_n_times_and_group_into_advantages(
    config: RunConfig, tmp_path: Path
) -> None:
    from shellagent.transcript import iter_transcripts
    from shellagent.transcript.export import export

    tasks = [make_task("one"), make_task("two")]
    run = run_eval(tasks, _Alternating(), config, samples=2)
    assert [(r.id, r.sample) for r in run.results] == [
        ("one", 0),
        ("one", 1),
        ("two", 0),
        ("two", 1),
    ]
    assert sorted(r.status for r in run.results) == ["failed", "failed", "solved", "solved"]
    assert run.not_run == 0 and run.samples == 2
    out = tmp_path / "rl.jsonl"
    assert config.transcripts_dir is not None
    with out.open("w") as f:
        report = export("rl", iter_transcripts(config.transcripts_dir), f, group=True)
    assert report.records == 4
    records = [json.loads(line) for line in out.read_text().splitlines()]
    by_group: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_group.setdefault(record["group"], []).append(record)
    assert sorted(by_group) == ["one", "two"]
    for members in by_group.values():
        assert len(members) == 2 and {m["group_size"] for m in members} == {2}
        winner, loser = sorted(members, key=lambda m: -m["reward"])
        assert winner["success"] is True and loser["success"] is False
        assert winner["advantage"] > 0 > loser["advantage"]
        assert winner["advantage"] == pytest.approx(-loser["advantage"])
        assert winner["completion"][0]["role"] == "assistant"
