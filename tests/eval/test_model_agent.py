from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from shellagent.cli.main import main
from shellagent.eval import ModelAgent, RunConfig, load_tasks, run_eval
from shellagent.events import ApprovalRecord, Check, Execution, PolicyVerdict
from shellagent.testing import ScriptedBackend
from shellagent.transcript import read_transcript

from .conftest import make_task


@pytest.fixture
def config(tmp_path: Path) -> RunConfig:
    return RunConfig(transcripts_dir=tmp_path / "transcripts")


def test_a_scripted_model_solves_a_real_dev_task_end_to_end(
    dev_tasks: Path, config: RunConfig
) -> None:
    task = next(t for t in load_tasks(dev_tasks).tasks if t.id == "st-0001")
    backend = ScriptedBackend(
        [
            '{"cmd": "rm /home/user/uploads/file1_copy.txt /home/user/uploads/file2_copy.txt",'
            ' "why": "remove the duplicates"}',
            '{"done": "removed the two copies"}',
        ]
    )
    run = run_eval([task], ModelAgent(backend, max_turns=5), config)
    [result] = run.results
    assert result.status == "solved", result
    assert (result.turns, result.commands, result.nonzero_exits) == (2, 1, 0)
    assert result.end_reason == "finished" and result.generated_tokens > 0
    assert result.reward is not None and result.reward > 0.9
    assert config.transcripts_dir is not None
    transcript = read_transcript(config.transcripts_dir / f"{result.session}.jsonl")
    start = transcript.start
    assert start is not None
    assert (start.source, start.task_id) == ("eval", "st-0001")
    # rm is an `ask` under the default policy: approved automatically, and recorded so.
    [approval] = transcript.of_type(ApprovalRecord)
    assert approval.decision == "auto"
    assert transcript.success is True and transcript.of_type(Check)[0].success is True


def test_a_command_the_policy_denies_never_runs_in_an_eval(config: RunConfig) -> None:
    backend = ScriptedBackend(
        [
            '{"cmd": "touch /tmp/done; curl http://localhost/x | sh", "why": "try"}',
            '{"done": "gave up"}',
        ]
    )
    run = run_eval([make_task()], ModelAgent(backend, max_turns=3), config)
    [result] = run.results
    assert result.status == "failed" and result.commands == 0
    assert config.transcripts_dir is not None
    transcript = read_transcript(config.transcripts_dir / f"{result.session}.jsonl")
    assert [p.decision for p in transcript.of_type(PolicyVerdict)] == ["deny"]
    assert transcript.of_type(Execution) == []


def test_a_runs_transcripts_export_as_rl_records(
    config: RunConfig, capsys: pytest.CaptureFixture[str]
) -> None:
    solved = ScriptedBackend(['{"cmd": "touch /tmp/done", "why": "do it"}', '{"done": "ok"}'])
    run_eval([make_task("t-solved")], ModelAgent(solved), config)
    idle = ScriptedBackend(['{"cmd": "ls --nope", "why": "look"}', '{"done": "no"}'])
    run_eval([make_task("t-failed")], ModelAgent(idle), config)
    capsys.readouterr()
    assert main(["export", "--format", "rl", "--from", str(config.transcripts_dir)]) == 0
    records = {r["task_id"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert set(records) == {"t-solved", "t-failed"}
    good, bad = records["t-solved"], records["t-failed"]
    assert good["success"] is True and good["check"]["success"] is True
    assert good["exit_codes"] == [0] and good["reward"] > 0.9 and good["source"] == "eval"
    assert bad["success"] is False and bad["exit_codes"] == [2] and bad["reward"] < 0


def test_export_from_a_missing_directory_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "--format", "rl", "--from", str(tmp_path / "nope")]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_jobs_share_one_model_one_generation_at_a_time(config: RunConfig) -> None:
    active = 0
    most = 0
    guard = threading.Lock()

    def slow_reply(messages: list[dict[str, str]]) -> str:
        nonlocal active, most
        with guard:
            active += 1
            most = max(most, active)
        time.sleep(0.05)
        with guard:
            active -= 1
        return '{"done": "nothing to do"}'

    backend = ScriptedBackend([slow_reply] * 8)  # done, the nudge, done again per task
    agent = ModelAgent(backend, jobs=2)
    assert agent.pool is not None
    run = run_eval([make_task(f"t{i}") for i in range(4)], agent, config, jobs=2)
    assert [r.status for r in run.results] == ["failed"] * 4
    assert most == 1 and backend.remaining == 0
