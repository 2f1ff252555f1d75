"""The event model: every kind round-trips through JSON, matches the shipped schema, and a
reader either knows a kind or says clearly that it does not."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from shellagent import events, protocol
from shellagent.errors import ShellagentError
from shellagent.events import (
    TRANSCRIPT_EVENTS,
    WIRE_EVENTS,
    EventError,
    TranscriptEvent,
    WireEvent,
)
from shellagent.transcript import TranscriptWriter, read_transcript
from shellagent.transcript.store import stamp_event

SCHEMA = json.loads((Path(__file__).parents[1] / "docs" / "transcript.schema.json").read_text())

# One event of each kind with every field set away from its default, and one with only
# what is required: between them, every field is written and every field is left out.
FULL: list[TranscriptEvent] = [
    events.SessionStart(
        session="s1",
        task="tidy",
        model="m",
        backend="ScriptedBackend",
        policy="default",
        profile="default",
        cwd="/w",
        versions={"shellagent": "0.1.0"},
        source="eval",
        task_id="t-1",
        ts=1.5,
        seq=0,
    ),
    events.ChatMessage(role="assistant", content="{}", turn=2, ts=2.0, seq=1),
    events.ModelTurn(
        turn=1,
        raw='{"cmd": "ls", "why": ""}',
        action={"cmd": "ls", "why": ""},
        valid=True,
        stop="length",
        prompt_tokens=10,
        evaluated_prompt_tokens=3,
        generated_tokens=4,
        duration_s=0.25,
        token_ids=(1, 2),
        logprobs=(-0.5, -0.25),
        redacted=True,
        ts=3.0,
        seq=2,
    ),
    events.PolicyVerdict(
        turn=1,
        command="rm x",
        decision="ask",
        reasons=("deletes files",),
        segments=(
            events.PolicySegment(
                argv=("rm", "x"),
                program="rm",
                decision="ask",
                reasons=("deletes files",),
                executable="/bin/rm",
                wrappers=("sudo",),
                assignments=("LC_ALL=C",),
                writes=("x",),
                context="pipeline",
                traits=("delete",),
                rules=("rm-asks",),
                key="rm x",
                read_only=True,
                effects=("deletes",),
            ),
            events.PolicySegment(argv=("ls",), program="ls", decision="allow", key="ls"),
        ),
        ts=4.0,
        seq=3,
    ),
    events.ApprovalRecord(
        turn=1,
        command="rm x",
        decision="edit",
        reason="safer",
        edited_command="rm -i x",
        scope="directory",
        ts=5.0,
        seq=4,
    ),
    events.Execution(
        turn=1,
        command="rm -i x",
        output="",
        exit_code=None,
        duration_s=1.0,
        timed_out=True,
        truncated=True,
        shell_restarted=True,
        note="the command timed out",
        ts=6.0,
        seq=5,
    ),
    events.Check(exit_code=0, success=True, command="test -f y", output="ok", ts=7.0, seq=6),
    events.JobInstalled(
        turn=3,
        job_id="backup-1a2b3c",
        name="backup",
        commands=("tar czf b.tgz docs",),
        schedule="every day at 09:00",
        on_calendar="*-*-* 09:00:00",
        cron="0 9 * * *",
        installed=("/jobs/backup-1a2b3c.toml",),
        ts=8.0,
        seq=7,
    ),
    events.ChangeSetRecord(
        outcome="refused",
        created=1,
        modified=2,
        deleted=3,
        renamed=1,
        paths=("/home/u/a", "/home/u/.bashrc"),
        reason="touches a startup file",
        ts=8.5,
        seq=9,
    ),
    events.End(
        reason="error", summary="stopped", turns=3, success=False, error="boom", ts=9.0, seq=8
    ),
]
MINIMAL: list[TranscriptEvent] = [
    events.SessionStart(session="s", task="t"),
    events.ChatMessage(role="user", content="hi"),
    events.ModelTurn(turn=1, raw="x"),
    events.PolicyVerdict(turn=1, command="ls", decision="allow"),
    events.ApprovalRecord(turn=1, command="ls", decision="auto"),
    events.Execution(turn=1, command="ls", output="", exit_code=0),
    events.Check(exit_code=1, success=False),
    events.JobInstalled(
        turn=1, job_id="j", name="j", commands=("ls",), schedule="s", on_calendar="o", cron="c"
    ),
    events.ChangeSetRecord(outcome="none"),
    events.End(reason="finished"),
]
WIRE: list[WireEvent] = [
    events.Accepted(session="s", model="m"),
    events.Queued(position=2),
    events.Thinking(turn=1),
    events.InvalidReply(turn=1, stop="repeat", raw="{{{"),
    events.Proposed(turn=1, command="ls", why="look", decision="allow", reasons=("reads",)),
    events.ApprovalNeeded(id=3, turn=1, command="rm x", why="", decision="ask", reasons=("rm",)),
    events.Decided(turn=1, command="rm x", decision="always", reason="ok", scope="session"),
    events.Output(data="line\n"),
    events.Result(turn=1, command="ls", exit_code=0, duration_s=0.1),
    events.ChangesReady(
        session="s",
        summary="1 deleted",
        lines=("1 deleted:", "! DEL  notes/a.txt   6 B"),
        total=1,
        deleted=1,
        diff="--- a\n+++ /dev/null\n",
        id=4,
        choices=("apply", "discard", "keep"),
    ),
    events.ChangesDone(outcome="applied", message="applied 1 changes", applied=1),
    events.ChoiceRequest(
        id=6,
        ran="the files of a folder (dir: docs)",
        doubts=("'how many' was asked, and the answer is 3 lines",),
        alternatives=(
            events.Alternative("count_files", "how many files a folder has", "ls | wc -l", "3"),
        ),
        answer="a\nb\nc",
    ),
    events.ConfirmRequest(id=5, summary="a.txt says hello"),
    events.Summary(
        reason="finished",
        summary="done",
        turns=2,
        session="s",
        commands=("ls",),
        exit_codes=(0,),
        error="",
        exit_code=0,
        transcript="/t/s.jsonl",
    ),
    events.DaemonStatus(
        pid=1,
        version="0.1.0",
        protocol=1,
        uptime_s=1.5,
        socket="/run/d.sock",
        model=events.ModelStatus(
            spec="smollm2",
            loaded=True,
            name="smollm2",
            loads=1,
            waiting=0,
            idle_s=2.5,
            idle_unload_s=None,
        ),
        sessions=(
            events.SessionStatus(
                session="s", task="tidy", state="thinking", running_s=1.0, client_pid=7
            ),
        ),
        clients=1,
        refused=0,
        rss_kb=None,
        peak_rss_kb=2048,
    ),
    events.Stopping(),
    events.Failure(code="failed", message="no", fatal=True, exit_code=3),
    events.Note(message="continuing session s"),
]


def test_the_examples_cover_every_kind() -> None:
    assert sorted(e.kind for e in FULL) == sorted(TRANSCRIPT_EVENTS)
    assert sorted(e.kind for e in MINIMAL) == sorted(TRANSCRIPT_EVENTS)
    assert sorted(e.kind for e in WIRE) == sorted(WIRE_EVENTS)


@pytest.mark.parametrize("event", FULL + MINIMAL, ids=lambda e: f"{e.kind}-{e.seq}")
def test_every_transcript_event_round_trips_through_json(event: TranscriptEvent) -> None:
    assert events.from_dict(json.loads(json.dumps(events.to_dict(event)))) == event


@pytest.mark.parametrize("event", FULL + MINIMAL, ids=lambda e: f"{e.kind}-{e.seq}")
def test_every_stored_line_matches_the_shipped_schema(event: TranscriptEvent) -> None:
    line = json.loads(json.dumps(stamp_event(event, 0)))
    jsonschema.validate(line, SCHEMA)
    [variant] = [v for v in SCHEMA["oneOf"] if v["properties"]["type"]["const"] == event.kind]
    assert set(line) <= set(variant["properties"])  # nothing written that is not documented


def test_the_schema_rejects_a_line_that_breaks_it() -> None:
    line = stamp_event(events.Execution(turn=1, command="ls", output="", exit_code=0), 0)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**line, "exit_code": "zero"}, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({k: v for k, v in line.items() if k != "output"}, SCHEMA)


def test_optional_keys_are_left_out_while_unset() -> None:
    line = events.to_dict(events.ApprovalRecord(turn=1, command="ls", decision="approve"))
    assert line == {
        "type": "approval",
        "turn": 1,
        "command": "ls",
        "decision": "approve",
        "reason": None,
    }
    assert "error" not in events.to_dict(events.End(reason="finished", summary="ok", turns=1))


@pytest.mark.parametrize("event", WIRE, ids=lambda e: e.kind)
def test_every_daemon_message_round_trips_through_the_protocol(event: WireEvent) -> None:
    line = protocol.encode_event(event)
    assert line.startswith(b'{"v":1,"type":"' + event.kind.encode() + b'"')
    assert protocol.decode_event(line) == event


def test_a_note_from_a_daemon_of_before_reads_as_a_note() -> None:
    """Daemons before the ``note`` event sent notes as non-fatal errors with code ``note``."""
    line = protocol.encode("error", code="note", message="continuing session s", fatal=False)
    assert protocol.decode_event(line) == events.Note(message="continuing session s")
    failure = protocol.encode("error", code="failed", message="no", fatal=False)
    assert protocol.decode_event(failure) == events.Failure(code="failed", message="no")


def test_a_strict_reader_rejects_an_unknown_kind_and_names_the_known_ones() -> None:
    with pytest.raises(EventError) as caught:
        events.from_dict({"type": "plan_update", "steps": []})
    assert "unknown transcript event type 'plan_update'" in caught.value.message
    assert "session_start" in (caught.value.hint or "")
    with pytest.raises(EventError, match="unknown daemon message type 'telemetry'"):
        events.wire_from_dict({"type": "telemetry"})
    with pytest.raises(EventError, match="needs a string 'type'"):
        events.from_dict({"role": "user"})


def test_the_file_reader_skips_an_unknown_kind_and_checks_a_known_one() -> None:
    assert events.read_event({"type": "plan_update"}) is None
    with pytest.raises(EventError, match="'exit_code' must be an integer or null"):
        events.read_event(
            {"type": "execution", "turn": 1, "command": "ls", "output": "", "exit_code": "0"}
        )


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"turn": None}, "'turn' must be an integer"),
        ({"turn": True}, "'turn' must be an integer"),
        ({"decision": "maybe"}, "'decision' must be one of allow, ask, deny"),
        ({"reasons": "x"}, "'reasons' must be a list"),
        ({"reasons": [1]}, "'reasons'[0] must be a string"),
        ({"segments": [[]]}, "'segments'[0] must be an object"),
        ({"segments": [{"argv": ["ls"], "key": "ls"}]}, "'segments'[0]: missing 'program'"),
        (
            {"segments": [{"argv": [1], "program": "ls", "decision": "allow", "key": "ls"}]},
            "'segments'[0]: 'argv'[0] must be a string",
        ),
    ],
)
def test_a_mistyped_field_is_named(change: dict[str, Any], problem: str) -> None:
    good = events.to_dict(events.PolicyVerdict(turn=1, command="ls", decision="allow"))
    with pytest.raises(EventError, match=problem.replace("[", r"\[")):
        events.from_dict(good | change)
    missing = {k: v for k, v in good.items() if k != "command"}
    with pytest.raises(EventError, match="policy event: missing 'command'"):
        events.from_dict(missing)


def test_keys_a_reader_does_not_know_are_ignored() -> None:
    line = events.to_dict(events.End(reason="finished")) | {"mood": "calm"}
    assert events.from_dict(line) == events.End(reason="finished")


def test_a_daemon_message_ask_does_not_know_is_a_clear_error_not_a_traceback() -> None:
    import socket

    from shellagent.cli.ask_client import Connection

    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(protocol.encode("telemetry", cpu=3))
        with pytest.raises(ShellagentError) as caught:
            Connection(ours).read()
    assert "unknown daemon message type 'telemetry'" in caught.value.message
    assert "shellagent daemon stop" in (caught.value.hint or "")


def test_a_transcript_written_by_the_writer_reads_back_event_for_event(tmp_path: Path) -> None:
    with TranscriptWriter(directory=tmp_path) as writer:
        for event in FULL:
            writer.write(event)
    back = read_transcript(writer.path)
    assert back.problems == [] and back.unknown == []
    assert back.events == [dataclasses.replace(e, seq=n) for n, e in enumerate(FULL)]


def test_exit_codes_of_end_reasons() -> None:
    assert [events.exit_code(r) for r in ("finished", "cancelled", "turn_limit", "error")] == [
        0,
        130,
        1,
        1,
    ]


def test_the_event_model_imports_only_the_standard_library() -> None:
    code = (
        "import sys; before = set(sys.modules); import shellagent.events; "
        "print(sorted(m for m in set(sys.modules) - before "
        "if m.split('.')[0] not in sys.stdlib_module_names))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout.replace("'", '"'))
    assert [m for m in loaded if not m.startswith("shellagent.events.")] == [
        "shellagent",
        "shellagent.errors",
        "shellagent.events",
    ]
    assert "shellagent.events.codec" in loaded  # the premise: its own modules are counted
