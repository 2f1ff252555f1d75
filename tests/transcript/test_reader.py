from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import shellagent.transcript as transcript_pkg
from shellagent.events import End, SessionStart, json_schema, upgrade
from shellagent.jsontypes import JsonObject
from shellagent.transcript import (
    MIGRATIONS,
    VERSION,
    list_sessions,
    read_transcript,
    render_transcript,
)

from .scripted import Player, Turn


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


def base(seq: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "type": kind, "ts": 1_700_000_000.0 + seq, "seq": seq, **fields}


def test_unknown_keys_and_event_types_from_newer_writers_are_skipped_not_errors(
    tmp_path: Path,
) -> None:
    path = write_lines(
        tmp_path / "s.jsonl",
        [
            base(0, "session_start", session="s", task="t", gpu="rtx"),
            base(1, "plan_update", steps=["a", "b"]),
            base(2, "end", reason="finished", summary=None, mood="calm"),
        ],
    )
    transcript = read_transcript(path)
    assert transcript.problems == []
    assert transcript.events == [
        SessionStart(session="s", task="t", ts=1_700_000_000.0, seq=0),
        End(reason="finished", ts=1_700_000_002.0, seq=2),
    ]
    assert transcript.unknown == ["plan_update"]
    assert transcript.success is None and transcript.verdict == "unverified"
    assert "events this version does not show: plan_update" in render_transcript(transcript)


def test_corrupt_lines_are_skipped_with_file_and_line_named(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "s.jsonl",
        [
            base(0, "session_start", session="s", task="t"),
            "{not json",
            "[1, 2]",
            {"type": "message", "role": "user", "content": "no base keys"},
            base(4, "execution", turn=1, command="ls", output="x", exit_code="zero?"),
            base(5, "message", role="user", content="still read"),
        ],
    )
    transcript = read_transcript(path)
    assert [e.seq for e in transcript.events] == [0, 5]
    assert [p.split(": ")[0] for p in transcript.problems] == [f"{path}:{n}" for n in (2, 3, 4, 5)]
    assert "exit_code" in transcript.problems[3]


def test_lines_of_a_newer_format_version_are_skipped_not_misread(tmp_path: Path) -> None:
    future = base(1, "message", role="user", content="x") | {"v": VERSION + 1}
    path = write_lines(
        tmp_path / "s.jsonl", [base(0, "session_start", session="s", task="t"), future]
    )
    transcript = read_transcript(path)
    assert len(transcript.events) == 1
    assert f"format v{VERSION + 1} is newer" in transcript.problems[0]


def test_migrations_upgrade_old_lines_step_by_step() -> None:
    def v1_to_v2(event: dict[str, Any]) -> dict[str, Any]:
        event["output"] = event.pop("stdout", "")
        return event

    def v2_to_v3(event: dict[str, Any]) -> dict[str, Any]:
        event["exit_code"] = int(event["exit_code"])
        return event

    old: JsonObject = {"v": 1, "type": "execution", "stdout": "hi", "exit_code": "0"}
    assert upgrade(old, [v1_to_v2, v2_to_v3]) == {
        "v": 3,
        "type": "execution",
        "output": "hi",
        "exit_code": 0,
    }
    assert old["v"] == 1  # the caller's dict is not modified
    assert upgrade({"v": 3, "type": "x"}, [v1_to_v2, v2_to_v3]) == {"v": 3, "type": "x"}


def test_there_is_one_migration_per_version_step() -> None:
    assert len(MIGRATIONS) == VERSION - 1


def test_list_sessions_summarises_each_transcript_oldest_first(record_session: Player) -> None:
    record_session("first", [Turn(cmd="true"), Turn(done="ok")])
    record_session("second", [Turn(cmd="false")], end_reason="repeated_failure")
    sessions = list_sessions()
    assert sorted(s.task for s in sessions) == ["first", "second"]
    assert [s.session_id for s in sessions] == sorted(s.session_id for s in sessions)
    by_task = {s.task: s for s in sessions}
    assert (by_task["first"].turns, by_task["first"].success) == (2, True)
    assert (by_task["second"].outcome, by_task["second"].success) == ("repeated_failure", False)


def test_finished_session_whose_last_command_failed_is_not_a_success(
    record_session: Player,
) -> None:
    path = record_session(
        "t", [Turn(cmd="true"), Turn(cmd="exit 3"), Turn(done="gave up")], confirmed=False
    )
    assert read_transcript(path).success is False


def test_a_finished_session_nobody_confirmed_is_unverified_not_a_success(
    record_session: Player,
) -> None:
    path = record_session("t", [Turn(done="all done")], confirmed=None)
    transcript = read_transcript(path)
    assert transcript.success is None and transcript.verdict == "unverified"
    confirmed = read_transcript(record_session("t", [Turn(cmd="true"), Turn(done="ok")]))
    assert confirmed.success is True and confirmed.verdict == "confirmed"


def test_public_names_are_sorted_and_all_exported() -> None:
    assert transcript_pkg.__all__ == sorted(transcript_pkg.__all__)
    for name in transcript_pkg.__all__:
        assert hasattr(transcript_pkg, name)


def test_documented_json_schema_matches_the_event_types() -> None:
    documented = Path(__file__).parents[2] / "docs" / "transcript.schema.json"
    assert json.loads(documented.read_text()) == json_schema(), (
        "regenerate it: see docs/transcripts.md, 'JSON Schema'"
    )


def test_every_event_the_loop_writes_is_a_documented_type(record_session: Player) -> None:
    path = record_session(
        "t",
        [Turn(cmd="true", policy="ask", approval="edit", edited="true 1"), Turn(done="x")],
        check="true",
    )
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    shipped: Any = json_schema()
    variants = {v["properties"]["type"]["const"]: v for v in shipped["oneOf"]}
    for line in lines:
        schema = variants[line["type"]]
        assert set(schema["required"]) <= set(line), line
        assert set(line) <= set(schema["properties"]), line
