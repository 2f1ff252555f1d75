"""The gold agent runs a task's gold commands through the eval harness and answers from them."""

from __future__ import annotations

import threading
from pathlib import Path

from shellagent.eval import RunConfig, Task, run_one
from shellagent.taskgen import DEFAULT_SEED, GoldAgent, generate, verify_task
from shellagent.transcript import read_transcript


def test_the_gold_agent_solves_a_generated_task_with_the_verified_answer(tmp_path: Path) -> None:
    (task,) = generate(DEFAULT_SEED, 1, ["largest_files"])
    config = RunConfig(transcripts_dir=tmp_path)
    result = run_one(task, GoldAgent(), config, threading.Event())
    assert result.status == "solved"
    assert result.answer == verify_task(task).answer
    transcript = read_transcript(tmp_path / f"{result.session}.jsonl")
    kinds = [e.kind for e in transcript.events]
    assert kinds[0] == "session_start" and kinds[-2:] == ["check", "end"]
    assert transcript.end is not None and transcript.end.summary == result.answer


def test_a_task_without_gold_commands_fails_with_the_reason(tmp_path: Path) -> None:
    task = Task(id="bare", task="t", setup_commands=(), success_condition="[ -f /tmp/x ]")
    result = run_one(task, GoldAgent(), RunConfig(transcripts_dir=tmp_path), threading.Event())
    assert result.status == "failed" and "no gold commands" in result.detail
