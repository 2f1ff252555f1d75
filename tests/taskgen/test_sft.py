"""The verified library as SFT data: prompted exactly as the agent prompts, readable by the
trainer, and its prompt's examples come from the rest of the library."""

from __future__ import annotations

import json
from pathlib import Path

from shellagent.agent.actions import parse_action
from shellagent.agent.examples import SHIPPED_LIBRARY, ExampleLibrary
from shellagent.agent.loop import opening
from shellagent.agent.prompts import Environment
from shellagent.cli.main import main
from shellagent.taskgen.sft import conversations


def test_each_record_is_a_session_as_the_loop_would_prompt_it() -> None:
    library = ExampleLibrary.load([SHIPPED_LIBRARY])
    records = []
    for record in conversations(library, k=2):
        records.append(record)
        if len(records) == 40:
            break
    for record in records:
        messages = record["messages"]
        roles = [m["role"] for m in messages]
        assert roles[:2] == ["system", "user"] and roles[-1] == "assistant"
        assert all(a != b for a, b in zip(roles[1:], roles[2:], strict=False))  # alternate
        example = next(e for e in library.examples if e.id == record["task_id"])
        assert messages[1]["content"] == f"Task: {example.task}"
        for reply in messages[2::2]:
            parse_action(reply["content"])  # every reply is an action the grammar allows
        assert json.loads(messages[-1]["content"]) == {"done": example.answer}
    # the system prompt is the one a session of that task starts with
    first = records[0]
    example = next(e for e in library.examples if e.id == first["task_id"])
    others = library.search(example.task, 2, exclude=example.id)
    assert others and example.id not in {e.id for e in others}
    assert others[0].family == example.family  # another task of its family, as at run time
    env = Environment(cwd="/root", anywhere_writable=True)
    assert first["messages"][0]["content"] == opening(env, example.task, others)[0]


def test_shellagent_tasks_sft_writes_what_the_trainer_reads(tmp_path: Path) -> None:
    out = tmp_path / "lib.jsonl"
    assert main(["tasks", "sft", "-o", str(out), "--limit", "25"]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 25
    from shellagent.training.data import load_conversations

    assert len(load_conversations([out])) == 25
