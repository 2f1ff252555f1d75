from __future__ import annotations

import json
from pathlib import Path

import pytest

from shellagent.cli.main import main
from shellagent.transcript import read_transcript

from .scripted import Player, Turn


@pytest.fixture
def two_sessions(record_session: Player) -> list[Path]:
    ok = record_session("say hello", [Turn(cmd="echo hello", why="greet"), Turn(done="said hello")])
    bad = record_session(
        "list nothing",
        [Turn(cmd="ls /nope", policy="ask", approval="edit", edited="ls /nope/either")],
        end_reason="turn_limit",
    )
    return [ok, bad]


def test_logs_list_shows_a_row_per_session(
    two_sessions: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["logs", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["WHEN", "ID", "N", "OUTCOME", "TASK"]
    body = "\n".join(lines[1:])
    assert "say hello" in body and "confirmed" in body
    assert "list nothing" in body and "turn_limit" in body
    assert len(lines) == 3 and max(len(line) for line in lines) <= 80


def test_bare_logs_lists_and_json_rows_have_stable_keys(
    two_sessions: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["logs"]) == 0
    assert "say hello" in capsys.readouterr().out
    assert main(["logs", "list", "--json", "-n", "1"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert set(row) == {"id", "started", "task", "turns", "outcome", "success", "model", "path"}


def test_logs_show_renders_a_session_by_id_prefix(
    two_sessions: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    session_id = read_transcript(two_sessions[1]).session_id
    assert main(["logs", "show", session_id[:-2]]) == 0
    page = capsys.readouterr().out
    assert "$ ls /nope" in page
    assert "user: edit → $ ls /nope/either" in page
    assert "end: turn_limit (failed)" in page


def test_logs_show_unknown_id_is_a_usage_error(
    two_sessions: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["logs", "show", "19990101"]) == 2
    assert "no session '19990101'" in capsys.readouterr().err


def test_logs_show_ambiguous_prefix_is_a_usage_error(
    two_sessions: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["logs", "show", "2"]) == 2
    assert "ambiguous" in capsys.readouterr().err


def test_export_writes_a_private_file_and_reports_counts(
    two_sessions: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "out" / "sft.jsonl"
    target.parent.mkdir()
    assert main(["export", "--format", "sft", "-o", str(target)]) == 0
    (record,) = [json.loads(line) for line in target.read_text().splitlines()]
    assert record["messages"][1]["content"] == "say hello"
    assert target.stat().st_mode & 0o777 == 0o600
    assert "exported 1 sft records from 1 of 2 sessions" in capsys.readouterr().err
    assert list(target.parent.iterdir()) == [target]


def test_export_to_stdout_with_filters(
    two_sessions: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "--format", "rl", "--include-unsuccessful", "--min-turns", "1"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sorted(r["success"] for r in records) == [False, True]
    assert main(["export", "--format", "rl", "--since", "2999-01-01"]) == 0
    assert capsys.readouterr().out == ""


def test_export_survives_a_corrupt_transcript_and_names_it(
    two_sessions: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    two_sessions[0].write_text(two_sessions[0].read_text()[:-40] + "\n\x00garbage\n")
    assert main(["export", "--format", "rl"]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 1
    assert f"skipped {two_sessions[0].name}: the episode never ended" in captured.err


def test_export_with_a_bad_date_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--format", "dpo", "--since", "last tuesday"]) == 2
    assert "is not a date" in capsys.readouterr().err


def test_export_into_a_missing_directory_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "--format", "dpo", "-o", str(tmp_path / "no" / "x.jsonl")]) == 2
    assert "cannot write" in capsys.readouterr().err
