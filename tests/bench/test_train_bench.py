"""bench/train_bench.py's parts that need no model: which sessions stand for confirmed ones,
the SFT file ``shellagent export`` makes of them, and how two runs are compared."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from shellagent.events import ChatMessage, End, Execution, ModelTurn, SessionStart
from shellagent.transcript import Redactor, TranscriptWriter

ROOT = Path(__file__).resolve().parents[2]
FREE_PROMPT = "You are a shell agent on Linux. You do the user's task by running bash commands."
USE = '{"use": "largest_files", "args": {"dir": "Downloads", "count": "5"}}'


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("train_bench", ROOT / "bench" / "train_bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


bench = _bench()


@pytest.fixture(autouse=True)
def private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONFIG", "DATA", "STATE", "CACHE", "RUNTIME"):
        monkeypatch.setenv(f"SHELLAGENT_{name}_DIR", str(tmp_path / name.lower()))


def _session(
    folder: Path, task_id: str, *, solved: bool, origin: str = "recipe", command: str = "ls"
) -> str:
    """A session written as the eval harness writes one the recipe step (or the free loop)
    answered in one turn; returns its id."""
    writer = TranscriptWriter(directory=folder, redactor=Redactor())
    task = f"Task: {task_id}"
    writer.write(SessionStart(session=writer.session_id, task=task, source="eval", task_id=task_id))
    writer.write(ChatMessage(role="system", content=FREE_PROMPT))
    writer.write(ChatMessage(role="user", content=task))
    reply = USE if origin == "recipe" else json.dumps({"cmd": command, "why": "run ls"})
    action = {"cmd": command, "origin": origin}
    if origin == "recipe":
        action |= {"use": "largest_files", "args": '{"dir": "Downloads", "count": "5"}'}
    tokens = 0 if origin == "recipe" else 12
    writer.write(ModelTurn(turn=1, raw=reply, action=action, valid=True, generated_tokens=tokens))
    writer.write(ChatMessage(role="assistant", content=reply, turn=1))
    writer.write(Execution(turn=1, command=command, output="a\nb", exit_code=0, duration_s=0.01))
    writer.write(ChatMessage(role="user", content="exit 0\na\nb", turn=1))
    writer.write(End(reason="finished", summary="a\nb", turns=1, success=solved))
    writer.close()
    return writer.session_id


def _run(tmp_path: Path, rows: list[tuple[str, bool, str, str]]) -> Path:
    """A run folder as ``train_bench`` leaves it: transcripts and records.jsonl."""
    run = tmp_path / "run"
    records = []
    for task_id, solved, origin, command in rows:
        session = _session(
            run / "transcripts", task_id, solved=solved, origin=origin, command=command
        )
        status = "solved" if solved else "failed"
        records.append({"id": task_id, "status": status, "session": session, "wall_s": 1.0})
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return run


def test_only_the_solved_sessions_stand_for_confirmed_ones(tmp_path: Path) -> None:
    run = _run(tmp_path, [("ev-a", True, "recipe", "ls"), ("ev-b", False, "recipe", "ls")])
    picked = bench.confirmed_sessions(run)
    assert [json.loads(p.read_text().splitlines()[0])["task_id"] for p in picked] == ["ev-a"]


def test_the_export_pairs_a_recipe_reply_with_the_free_loops_prompt(tmp_path: Path) -> None:
    run = _run(tmp_path, [("ev-a", True, "recipe", "ls"), ("ev-b", True, "free", "ls -l")])
    said = bench.export_sft(bench.confirmed_sessions(run), tmp_path / "mine", tmp_path / "sft")
    records = [json.loads(line) for line in (tmp_path / "sft").read_text().splitlines()]
    assert "exported 2 sft records from 2 of 2 sessions" in said
    recipe = next(r["messages"] for r in records if r["messages"][-1]["content"] == USE)
    # what a user's export teaches: the `use` reply after the free loop's system prompt, not
    # the recipe step's prompt the model was asked it under
    assert [m["role"] for m in recipe] == ["system", "user", "assistant"]
    assert recipe[0]["content"] == FREE_PROMPT


def test_a_session_the_free_loop_wrote_in_has_no_recipe_call(tmp_path: Path) -> None:
    run = _run(tmp_path, [("ev-a", True, "recipe", "ls"), ("ev-b", True, "free", "ls -l")])
    calls = sorted(map(str, map(bench._recipe_call, bench.confirmed_sessions(run))))
    assert calls == ["('ev-a', 'largest_files', {'dir': 'Downloads', 'count': '5'})", "None"]


def test_the_model_decided_only_where_it_ran_other_commands_than_first_values(
    tmp_path: Path,
) -> None:
    model = _run(tmp_path / "m", [("ev-a", True, "recipe", "ls"), ("ev-b", True, "free", "du")])
    first = _run(tmp_path / "f", [("ev-a", True, "recipe", "ls"), ("ev-b", False, "recipe", "x")])
    with_model, without = bench.read_run(model), bench.read_run(first)
    assert bench.decided(with_model, without) == ["ev-b"]
    assert bench.flips(without, with_model) == (["ev-b"], [])
    assert "solved 2/2" in bench.summary("m", with_model)
    assert with_model["ev-b"].free and with_model["ev-b"].model_replies == 1
