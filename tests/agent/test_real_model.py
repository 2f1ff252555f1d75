"""The loop with the embedded SmolLM2-135M model: valid actions, a whole run, its exports."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shellagent.agent import AgentConfig, AutoApprover, Oversight, Parts, Recording, run_task
from shellagent.events import ModelTurn
from shellagent.policy import PolicyEngine
from shellagent.sandbox import Sandbox, get_profile
from shellagent.testing import MemorySink
from shellagent.transcript import TranscriptWriter, export, iter_transcripts

pytestmark = [pytest.mark.model, pytest.mark.slow]

TASKS = [
    "List the files in the current directory.",
    "Count the lines of notes.txt.",
    "Create a directory named backup and copy notes.txt into it.",
    "Show how much disk space the current directory uses.",
]


@pytest.fixture(scope="module")
def backend() -> Iterator[Any]:
    from shellagent.model import load_backend

    model: Any = load_backend(None)
    yield model
    model.close()


@pytest.mark.parametrize("task", TASKS)
def test_the_embedded_model_proposes_a_valid_action_for_everyday_tasks(
    backend: Any, workspace: Path, policy: PolicyEngine, task: str
) -> None:
    sink = MemorySink()
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as shell:
        run_task(
            task,
            Parts(
                backend=backend,
                shell=shell,
                policy=policy,
                config=AgentConfig(max_turns=1, dry_run=True),
            ),
            Oversight(approver=AutoApprover()),
            Recording(sink=sink),
        )
    turn = sink.of_type(ModelTurn)[0]
    if turn.stop == "end":
        assert turn.valid is True, turn.raw
        action = turn.action
        assert action is not None and action.get("cmd", action.get("done", "")).strip()
    else:  # cut by the token limit or as a loop: the only way to be invalid
        assert (turn.generated_tokens or 0) >= 64, turn.raw


def test_a_whole_run_with_the_real_model_reuses_its_prefix_and_exports(
    backend: Any, workspace: Path, policy: PolicyEngine
) -> None:
    with (
        Sandbox(get_profile("default", cwd=workspace), timeout=10) as shell,
        TranscriptWriter() as sink,
    ):
        outcome = run_task(
            "Count the lines of notes.txt.",
            Parts(
                backend=backend,
                shell=shell,
                policy=policy,
                config=AgentConfig(max_turns=3, capture_logprobs=True),
            ),
            Oversight(approver=AutoApprover()),
            Recording(sink=sink, model_name="smollm2-135m"),
        )
        path = sink.path
    # A 135M model may loop twice in a row: that ends the session, saying so.
    model_gave_up = outcome.reason == "error" and "not actions" in outcome.error
    assert outcome.reason in ("finished", "turn_limit", "repeated_failure") or model_gave_up
    events = [json.loads(line) for line in Path(path).read_text().splitlines()]
    turns = [e for e in events if e["type"] == "model_turn"]
    assert turns and all(t["valid"] or t["stop"] != "end" for t in turns)
    assert all(t["token_ids"] and len(t["token_ids"]) == len(t["logprobs"]) for t in turns)
    if len(turns) >= 2:
        # Turn 2 evaluates only what was appended (the reply and the observation).
        assert turns[1]["evaluated_prompt_tokens"] < turns[1]["prompt_tokens"] // 3
    records = {}
    for fmt in ("sft", "dpo", "rl"):
        out = io.StringIO()
        export(fmt, iter_transcripts(), out, only_successful=False)
        records[fmt] = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(records["rl"]) == 1
    rl = records["rl"][0]
    assert rl["model"] == "smollm2-135m" and rl["n_turns"] == len(turns)
    assert rl["turns"][0]["token_ids"] == turns[0]["token_ids"]
    assert len(records["sft"]) <= 1 and records["dpo"] == []
