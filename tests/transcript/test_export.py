from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pytest

from shellagent.events import ChatMessage, End, ModelTurn
from shellagent.transcript import Transcript, read_transcript
from shellagent.transcript.export import export
from shellagent.transcript.reward import episode_reward, length_factor

from .scripted import SYSTEM_PROMPT, Player, Turn


def run_export(fmt: str, paths: list[Path], **kwargs: Any) -> tuple[list[dict[str, Any]], Any]:
    out = io.StringIO()
    report = export(fmt, [read_transcript(p) for p in paths], out, **kwargs)
    return [json.loads(line) for line in out.getvalue().splitlines()], report


@pytest.fixture
def sessions(record_session: Player) -> dict[str, Path]:
    """A spread of realistic sessions: plain success, refusal, edit, denial, failure, eval."""
    return {
        "success": record_session(
            "create notes.txt containing hello",
            [
                Turn(cmd="echo hello > notes.txt", why="write the file"),
                Turn(cmd="cat notes.txt", why="check"),
                Turn(done="notes.txt now contains hello"),
            ],
        ),
        "refused": record_session(
            "free some space in tmp",
            [
                Turn(cmd="rm -rf ./*", policy="ask", approval="refuse", reason="too broad"),
                Turn(cmd="mkdir -p tmp && ls tmp", policy="ask", approval="approve"),
                Turn(done="looked at tmp"),
            ],
        ),
        "edited": record_session(
            "count lines in notes",
            [
                Turn(
                    cmd="wc -l notes.txt", policy="ask", approval="edit", edited="wc -l < notes.txt"
                ),
                Turn(done="counted"),
            ],
        ),
        "denied": record_session(
            "read my ssh key",
            [
                Turn(cmd="cat ~/.ssh/id_rsa", policy="deny"),
                Turn(raw="I will not do that"),
                Turn(cmd="true", why="nothing to do"),
                Turn(done="refused to read the key"),
            ],
        ),
        "failed": record_session(
            "list a missing directory",
            [Turn(cmd="ls /definitely/missing"), Turn(cmd="ls /also/missing")],
            end_reason="turn_limit",
        ),
        "eval": record_session(
            "make /tmp-like dir out",
            [Turn(cmd="mkdir -p out", token_ids=[5, 6, 7], logprobs=[-0.5, -0.25, -0.125])],
            check="test -d out",
            source="eval",
            task_id="task-17",
        ),
    }


def test_sft_is_the_conversation_as_seen_for_successful_sessions_only(
    sessions: dict[str, Path],
) -> None:
    records, report = run_export("sft", list(sessions.values()))
    assert report.records == len(records) == 5  # all but the failed one
    first = records[0]["messages"]
    assert [m["role"] for m in first] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert first[0]["content"] == SYSTEM_PROMPT
    assert first[2]["content"] == '{"cmd": "echo hello > notes.txt", "why": "write the file"}'
    assert first[5]["content"] == "exit code 0\nhello\n"


def test_sft_drops_refused_denied_and_invalid_replies_with_their_observations(
    sessions: dict[str, Path],
) -> None:
    records, _ = run_export("sft", [sessions["refused"], sessions["denied"]])
    text = json.dumps(records)
    assert "rm -rf" not in text and "refused" not in text.replace("refused to read", "")
    assert "id_rsa" not in text and "Denied by policy" not in text
    assert "I will not do that" not in text and "Invalid action" not in text
    denied = records[1]["messages"]
    assert [m["role"] for m in denied] == ["system", "user", "assistant", "user", "assistant"]


def test_sft_writes_the_users_edit_into_the_reply(sessions: dict[str, Path]) -> None:
    (record,), _ = run_export("sft", [sessions["edited"]])
    assert record["messages"][2]["content"] == '{"cmd": "wc -l < notes.txt", "why": ""}'


def test_sft_can_include_unsuccessful_sessions(sessions: dict[str, Path]) -> None:
    records, _ = run_export("sft", [sessions["failed"]], only_successful=False)
    assert len(records) == 1 and records[0]["messages"][-1]["role"] == "assistant"


def test_dpo_pairs_come_from_edits_and_refusals_followed_by_success(
    sessions: dict[str, Path],
) -> None:
    records, _ = run_export("dpo", list(sessions.values()))
    assert len(records) == 2
    by_rejected = {r["rejected"][0]["content"]: r for r in records}
    edit = by_rejected['{"cmd": "wc -l notes.txt", "why": ""}']
    assert edit["chosen"] == [
        {"role": "assistant", "content": '{"cmd": "wc -l < notes.txt", "why": ""}'}
    ]
    assert [m["role"] for m in edit["prompt"]] == ["system", "user"]
    refusal = by_rejected['{"cmd": "rm -rf ./*", "why": ""}']
    assert json.loads(refusal["chosen"][0]["content"])["cmd"] == "mkdir -p tmp && ls tmp"
    assert refusal["prompt"][-1] == {"role": "user", "content": "free some space in tmp"}


def test_refusal_is_not_a_pair_when_the_session_failed(record_session: Player) -> None:
    path = record_session(
        "t",
        [Turn(cmd="rm -r x", policy="ask", approval="refuse"), Turn(cmd="true"), Turn(cmd="false")],
        end_reason="turn_limit",
    )
    assert run_export("dpo", [path])[0] == []


def test_rl_records_carry_turns_success_and_reward(sessions: dict[str, Path]) -> None:
    records, report = run_export("rl", list(sessions.values()))
    assert report.records == 6
    by_task = {r["task"]: r for r in records}
    evaluated = by_task["make /tmp-like dir out"]
    assert evaluated["success"] is True and evaluated["task_id"] == "task-17"
    assert evaluated["check"]["exit_code"] == 0
    assert evaluated["turns"][0]["token_ids"] == [5, 6, 7]
    assert evaluated["turns"][0]["logprobs"] == [-0.5, -0.25, -0.125]
    assert evaluated["reward"] == pytest.approx(episode_reward(True, 1, [0]))
    failed = by_task["list a missing directory"]
    assert failed["success"] is False and failed["exit_codes"] == [2, 2]
    assert failed["reward"] == pytest.approx(-0.1 - 0.02)
    refused = by_task["free some space in tmp"]
    assert [t["status"] for t in refused["turns"]] == ["refused", "executed", "answer"]
    assert refused["turns"][1]["observation"].startswith("exit code 0")


def test_reward_follows_the_design_formula() -> None:
    assert length_factor(15) == pytest.approx(0.5)
    assert episode_reward(True, 15, [0]) == pytest.approx(0.8)
    assert episode_reward(True, 1, []) == pytest.approx(1 - 0.4 * (1 - 1 / (1 + math.exp(-5.6))))
    assert episode_reward(False, 10, [1, 0]) == pytest.approx(-0.05 - 0.1)
    assert episode_reward(False, 500, [1]) == -1.0


def test_filters_select_by_date_turns_and_success(sessions: dict[str, Path]) -> None:
    paths = list(sessions.values())
    assert run_export("rl", paths, min_turns=3)[1].records == 3  # success, refused, denied
    assert run_export("rl", paths, since=1_000_000_000.0)[1].records == 6
    assert run_export("rl", paths, only_successful=True)[1].records == 5
    assert run_export("rl", paths, since=4_000_000_000.0)[1].records == 0


def test_one_bad_session_never_stops_an_export(sessions: dict[str, Path], tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text('not json\n{"v": 1}\n')
    # An action no reader could have produced: exporting it fails inside the converter.
    unwritable: Any = {"cmd": object()}
    weird = Transcript(
        path=tmp_path / "weird.jsonl",
        events=[
            ModelTurn(turn=1, raw="x", action=unwritable, ts=1.0, seq=0),
            ChatMessage(role="assistant", content="x", turn=1, ts=1.0, seq=1),
            End(reason="finished", ts=1.0, seq=2),
        ],
    )
    transcripts = [
        read_transcript(garbage),
        weird,
        *(read_transcript(p) for p in sessions.values()),
    ]
    out = io.StringIO()
    report = export("rl", transcripts, out)
    assert report.records == 6 and report.sessions == 8
    assert any(s.startswith("garbage.jsonl: no readable events") for s in report.skipped)
    assert any(s.startswith("weird.jsonl") for s in report.skipped)


def test_interrupted_session_is_not_an_rl_episode(record_session: Player) -> None:
    path = record_session("t", [Turn(cmd="true")])
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")  # drop the end event
    records, report = run_export("rl", [path])
    assert records == [] and "never ended" in report.skipped[0]


@pytest.mark.parametrize("fmt", ["sft", "dpo", "rl"])
def test_each_format_loads_with_the_datasets_json_loader(
    fmt: str, sessions: dict[str, Path], tmp_path: Path
) -> None:
    datasets = pytest.importorskip("datasets")
    target = tmp_path / f"{fmt}.jsonl"
    with target.open("w") as out:
        report = export(fmt, [read_transcript(p) for p in sessions.values()], out)
    assert report.records > 0
    loaded = datasets.load_dataset(
        "json", data_files=str(target), split="train", cache_dir=str(tmp_path / "hf")
    )
    assert len(loaded) == report.records
    expected = {"sft": {"messages"}, "dpo": {"prompt", "chosen", "rejected"}}.get(
        fmt, {"turns", "success", "n_turns", "reward"}
    )
    assert expected <= set(loaded.column_names)


def test_a_bare_done_nobody_confirmed_is_never_rewarded_or_taught(record_session: Player) -> None:
    """The review's case: "done" after running nothing, recorded as a success and rewarded."""
    bare = record_session(
        "how much space does ~/Documents use", [Turn(done="done")], confirmed=None
    )
    rl, _ = run_export("rl", [bare])
    assert rl[0]["success"] is None and rl[0]["verdict"] == "unverified"
    assert rl[0]["reward"] <= 0
    sft, report = run_export("sft", [bare])
    assert sft == [] and report.records == 0
    # the same session, confirmed by the user, is taught and rewarded
    confirmed = record_session("how much space does ~/Documents use", [Turn(done="done")])
    rl, _ = run_export("rl", [confirmed])
    assert rl[0]["verdict"] == "confirmed" and rl[0]["reward"] > 0


def test_a_pair_is_two_answers_to_one_prompt_never_a_recipe_reply_and_a_free_one(
    tmp_path: Path,
) -> None:
    """A refused recipe reply (under the recipe step's prompt) and a later free command
    answer different prompts: no pair. A refused free command and the accepted one after
    it are a pair, under the conversation the free loop was sent: the refusal it was told
    of, not the recipe's reply it never saw."""
    from shellagent.events import (
        ApprovalRecord,
        Execution,
        PolicyVerdict,
        PromptMessage,
        SessionStart,
    )
    from shellagent.transcript import TranscriptWriter

    asked = (
        PromptMessage("system", "You choose a ready-made command ..."),
        PromptMessage("user", "Task: t"),
    )
    use = '{"use": "wipe", "args": {}}'
    free_no, free_yes = '{"cmd": "rm -r x"}', '{"cmd": "ls x"}'
    refused = "The user refused this command."
    events: list[Any] = [
        SessionStart(session="s", task="t"),
        ChatMessage(role="system", content=SYSTEM_PROMPT),
        ChatMessage(role="user", content="t"),
        ModelTurn(turn=1, raw=use, action={"use": "wipe", "cmd": "rm -rf x"}, prompt=asked),
        ChatMessage(role="assistant", content=use, turn=1),
        PolicyVerdict(turn=1, command="rm -rf x", decision="ask"),
        ApprovalRecord(turn=1, command="rm -rf x", decision="refuse"),
        ChatMessage(role="user", content=refused, turn=1),
        ChatMessage(role="system", content="(recipes: the model writes from here)", turn=1),
        ModelTurn(turn=2, raw=free_no, action={"cmd": "rm -r x"}),
        ChatMessage(role="assistant", content=free_no, turn=2),
        PolicyVerdict(turn=2, command="rm -r x", decision="ask"),
        ApprovalRecord(turn=2, command="rm -r x", decision="refuse"),
        ChatMessage(role="user", content=refused, turn=2),
        ModelTurn(turn=3, raw=free_yes, action={"cmd": "ls x"}),
        ChatMessage(role="assistant", content=free_yes, turn=3),
        PolicyVerdict(turn=3, command="ls x", decision="allow"),
        Execution(turn=3, command="ls x", output="exit 0", exit_code=0),
        ChatMessage(role="user", content="exit 0", turn=3),
        End(reason="finished", success=True),
    ]
    writer = TranscriptWriter(directory=tmp_path / "t", fsync=False)
    for event in events:
        writer.write(event)
    writer.close()
    [pair], _ = run_export("dpo", [writer.path])
    assert pair["rejected"] == [{"role": "assistant", "content": free_no}]
    assert pair["chosen"] == [{"role": "assistant", "content": free_yes}]
    assert pair["prompt"] == [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "t"},
        {"role": "user", "content": refused},
    ]
