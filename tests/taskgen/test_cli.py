"""`shellagent tasks …` and `shellagent eval --agent gold` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shellagent.cli.main import main
from shellagent.eval import load_tasks


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_families_are_listed_one_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tasks", "families", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) >= 40
    assert {"name", "area", "summary"} == set(rows[0])


def test_generate_verify_and_eval_a_small_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = tmp_path / "sample.jsonl"
    code, _, err = run(
        capsys, "tasks", "generate", "--family", "git_tag,line_count", "--per-family", "1",
        "-o", str(sample),
    )  # fmt: skip
    assert code == 0 and "wrote 2 tasks" in err
    assert [t.family for t in load_tasks(sample).tasks] == ["git_tag", "line_count"]

    verified = tmp_path / "verified.jsonl.gz"
    cache = tmp_path / "cache.jsonl"
    code, out, _ = run(
        capsys, "tasks", "verify", str(sample), "--cache", str(cache), "-o", str(verified),
        "--json",
    )  # fmt: skip
    summary = json.loads(out)
    assert code == 0 and (summary["verified"], summary["failed"], summary["from_cache"]) == (
        2,
        0,
        0,
    )
    assert all(t.gold and t.gold.answer for t in load_tasks(verified).tasks)
    code, out, _ = run(capsys, "tasks", "verify", str(sample), "--cache", str(cache), "--json")
    assert code == 0 and json.loads(out)["from_cache"] == 2

    code, out, _ = run(
        capsys, "eval", str(verified), "--agent", "gold", "--json", "--out", str(tmp_path / "r"),
    )  # fmt: skip
    assert code == 0 and json.loads(out)["solved"] == 2


def test_a_task_that_does_not_verify_is_reported_and_the_exit_status_is_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = {
        "id": "bad",
        "task": "Make /srv/x.",
        "setup_commands": ["true"],
        "success_condition": "[ -d /srv/x ]",
        "gold": {"commands": ["mkdir /srv/x/y"], "answer_template": "{out}"},
    }
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(bad) + "\n")
    code, out, _ = run(capsys, "tasks", "verify", str(path), "--no-cache")
    assert code == 1
    assert "failed at gold: 1" in out and "bad: gold: $ mkdir /srv/x/y" in out


def test_leakage_reports_the_nearest_pair_and_max_sets_the_exit_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = {"setup_commands": [], "success_condition": "false"}
    ours, theirs = tmp_path / "ours.jsonl", tmp_path / "theirs.jsonl"
    ours.write_text(json.dumps({**line, "id": "a", "task": "Count the lines of /srv/a.log"}))
    theirs.write_text(json.dumps({**line, "id": "b", "task": "count the lines of '/x/b.log'"}))
    code, out, _ = run(capsys, "tasks", "leakage", str(ours), "--against", str(theirs))
    assert code == 0 and "max similarity 1.0" in out and "b: count the lines" in out
    code, _, err = run(
        capsys, "tasks", "leakage", str(ours), "--against", str(theirs), "--max", "0.6"
    )
    assert code == 1 and "reaches similarity 1.000" in err


def test_gold_agent_takes_no_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"id": "a", "task": "t", "setup_commands": [],
                                "success_condition": "false"}))  # fmt: skip
    code, _, err = run(capsys, "eval", str(path), "--agent", "gold", "--model", "x")
    assert code == 2 and "--model has no effect with --agent gold" in err


def test_everyday_prints_the_hand_written_set(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tasks", "everyday")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(lines) >= 50 and lines[0]["id"].startswith("ev-01-")
