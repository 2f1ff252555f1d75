"""What the loop writes: the documented event order, on_event, and exports of its sessions."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

from shellagent.agent import Approval, AutoApprover, Oversight, Parts, Recording, run_task
from shellagent.events import ChatMessage, End, SessionStart
from shellagent.policy import PolicyEngine, default_policy_path, preset_path
from shellagent.testing import FakeShell, MemorySink, ScriptedBackend
from shellagent.transcript import (
    TranscriptWriter,
    conversation,
    export,
    iter_transcripts,
    read_transcript,
)

from .conftest import Approvals, cmd, done


class _Confirmed:
    """The sink of a session whose user answered "yes" to "Did that do it?" (as the daemon
    worker records it: the loop's ``end`` with ``success``)."""

    def __init__(self, target: TranscriptWriter) -> None:
        self.target = target
        self.session_id = target.session_id

    def write(self, event: Any) -> None:
        if isinstance(event, End) and event.reason == "finished":
            event = dataclasses.replace(event, success=True)
        self.target.write(event)

    def close(self) -> None:
        self.target.close()


def _session(
    policy: PolicyEngine, shell: Any, replies: list[str], approver: Any, task_id: str | None = None
) -> Path:
    with TranscriptWriter() as sink:
        outcome = run_task(
            "tidy up",
            Parts(backend=ScriptedBackend(replies), shell=shell, policy=policy),
            Oversight(approver=approver),
            Recording(sink=_Confirmed(sink), source="eval" if task_id else "ask", task_id=task_id),
        )
        assert outcome.session_id == sink.session_id
        path: Path = sink.path
    return path


def test_events_come_in_the_documented_order_and_on_event_sees_each_as_written(
    run_agent: Any, fake: FakeShell
) -> None:
    run = run_agent([cmd("touch a"), cmd("echo hello"), done("ok")], fake, approver=AutoApprover())
    kinds = [(e.kind, e.role if isinstance(e, ChatMessage) else None) for e in run.sink.events]
    turn = [("model_turn", None), ("message", "assistant"), ("policy", None)]
    observed = [("execution", None), ("message", "user")]
    assert kinds == [
        ("session_start", None),
        ("message", "system"),
        ("message", "user"),
        *turn, ("approval", None), *observed,
        *turn, *observed,
        ("model_turn", None), ("message", "assistant"),
        ("end", None),
    ]  # fmt: skip
    assert [e.kind for e in run.events] == [e.kind for e in run.sink.events]
    assert [e.seq for e in run.sink.events] == list(range(len(run.sink.events)))
    assert all(getattr(e, "turn", None) in (1, 2, 3) for e in run.sink.events[3:-1])


def test_a_written_transcript_reads_back_with_its_turns_and_outcome(
    policy: PolicyEngine, fake: FakeShell
) -> None:
    path = _session(policy, fake, [cmd("echo hello"), done("said it")], AutoApprover(), "t-1")
    transcript = read_transcript(path)
    assert transcript.problems == []
    assert transcript.outcome == "finished"
    assert transcript.success is True
    assert transcript.start is not None and transcript.start.task_id == "t-1"
    steps = conversation(transcript).steps
    assert [s.status for s in steps] == ["executed", "answer"]
    assert steps[0].observations == ["exit 0\nhello"]


def test_sessions_export_as_sft_dpo_and_rl(policy: PolicyEngine, fake: FakeShell) -> None:
    edited = Approvals(Approval("edit", command="touch b"))
    _session(policy, fake, [cmd("touch a"), done("made b")], edited)
    refused = Approvals(Approval("refuse", reason="no"), Approval("approve"))
    _session(policy, fake, [cmd("touch x"), cmd("touch y"), done("made y")], refused)

    records: dict[str, list[dict[str, Any]]] = {}
    for fmt in ("sft", "dpo", "rl"):
        out = io.StringIO()
        export(fmt, iter_transcripts(), out)
        records[fmt] = [json.loads(line) for line in out.getvalue().splitlines()]

    sft = records["sft"]
    assert len(sft) == 2
    replies = [m["content"] for r in sft for m in r["messages"] if m["role"] == "assistant"]
    assert cmd("touch b") in replies and cmd("touch a") not in replies
    assert cmd("touch x") not in replies
    dpo = records["dpo"]
    pairs = {(p["chosen"][0]["content"], p["rejected"][0]["content"]) for p in dpo}
    assert (cmd("touch b"), cmd("touch a")) in pairs
    assert (cmd("touch y"), cmd("touch x")) in pairs
    rl = records["rl"]
    assert sorted(r["n_turns"] for r in rl) == [2, 3]
    assert all(r["success"] is True and r["reward"] > 0 for r in rl)


def test_session_start_names_the_policy_files_in_force(fake: FakeShell, tmp_path: Path) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text('remove = ["nothing"]\n')
    named = []
    for paths in ([default_policy_path()], [preset_path("strict"), mine]):
        sink = MemorySink()
        run_task(
            "t",
            Parts(
                backend=ScriptedBackend([done("ok"), done("ok")]),
                shell=fake,
                policy=PolicyEngine.load(paths),
            ),
            Oversight(approver=AutoApprover()),
            Recording(sink=sink),
        )
        named.append(sink.of_type(SessionStart)[0].policy)
    assert named == ["default", f"strict + {mine.resolve()}"]
