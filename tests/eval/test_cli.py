from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import shellagent.eval as eval_pkg
from shellagent.cli.main import main

SOLVABLE = {
    "id": "ok",
    "task": "t",
    "setup_commands": ["mkdir -p /data"],
    "success_condition": "[ -f /data/x ]",
}


def test_eval_with_the_do_nothing_agent_prints_a_json_summary_and_writes_the_report(
    write_tasks: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_tasks(
        SOLVABLE,
        {**SOLVABLE, "id": "broken", "setup_commands": ["false"]},
        '{"id": "half"',
        {**SOLVABLE, "id": "done", "success_condition": "true"},
        {**SOLVABLE, "id": "two"},
    )
    out = tmp_path / "run"
    code = main(
        ["eval", str(path), "--agent", "nothing", "--json", "--jobs", "2", "--out", str(out)]
    )
    captured = capsys.readouterr()
    assert code == 0
    summary = json.loads(captured.out)
    assert (summary["valid"], summary["solved"], summary["invalid"]) == (2, 0, 2)
    assert summary["invalid_by_reason"] == {"already satisfied": 1, "setup failed": 1}
    assert summary["solve_rate"] == 0.0 and summary["out"] == str(out)
    assert summary["skipped_lines"] == [
        f"{path}:3: not valid JSON: " + summary["skipped_lines"][0].split("not valid JSON: ")[1]
    ]
    assert f"skipped {path}:3: not valid JSON" in captured.err
    assert "[4/4]" in captured.err
    for name in ("summary.json", "summary.txt", "results.csv", "results.jsonl"):
        assert (out / name).is_file()
    assert len(list((out / "transcripts").glob("*.jsonl"))) == 2


def test_eval_selects_tasks_by_ids_offset_and_limit(
    write_tasks: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_tasks(*({**SOLVABLE, "id": f"t{i}"} for i in range(5)))
    out = tmp_path / "run"
    assert (
        main(
            [
                "eval",
                str(path),
                "--agent",
                "nothing",
                "--ids",
                "t1,t3,t4",
                "--offset",
                "1",
                "--limit",
                "1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    rows = (out / "results.jsonl").read_text().splitlines()
    assert [json.loads(r)["id"] for r in rows] == ["t3"]
    assert "solve rate" in capsys.readouterr().out


def test_eval_refuses_contradictory_options_unknown_ids_and_missing_files(
    write_tasks: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_tasks(SOLVABLE)
    assert main(["eval", str(path), "--agent", "nothing", "--model", "x.gguf"]) == 2
    assert main(["eval", str(path), "--agent", "nothing", "--ids", "zz"]) == 2
    assert main(["eval", str(path.parent / "missing.jsonl"), "--agent", "nothing"]) == 2
    assert (
        main(["eval", str(path), "--model", "openai:http://127.0.0.1:9/v1#m", "--threads", "1"])
        == 2
    )
    endpoint = "openai:http://127.0.0.1:9/v1#m"
    assert main(["eval", str(path), "--model", endpoint, "--repeat-penalty", "1.1"]) == 2
    assert main(["eval", str(path), "--temperature", "-1", "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert "--model has no effect" in err and "no task with id zz" in err
    assert "no task file" in err and "--threads applies to a local model" in err
    assert "--repeat-penalty applies to a local model" in err
    assert "temperature must be >= 0" in err


def test_ctrl_c_stops_the_run_and_still_writes_the_partial_report(
    write_tasks: Callable[..., Path], tmp_path: Path
) -> None:
    path = write_tasks(
        {**SOLVABLE, "id": "quick"},
        {**SOLVABLE, "id": "slow", "setup_commands": ["sleep 60"]},
        {**SOLVABLE, "id": "never"},
    )
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "shellagent",
            "eval",
            str(path),
            "--agent",
            "nothing",
            "--json",
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    deadline = time.monotonic() + 30
    while not list((out / "transcripts").glob("*.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # into the slow setup
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    summary = json.loads(stdout)
    assert summary["interrupted"] is True and summary["not_run"] == 1
    assert (summary["valid"], summary["cancelled"]) == (1, 1)
    assert json.loads((out / "summary.json").read_text())["interrupted"] is True
    assert "interrupted" in stderr


def test_the_eval_package_exports_a_sorted_complete_public_surface() -> None:
    assert eval_pkg.__all__ == sorted(eval_pkg.__all__)
    public = {
        n
        for n in vars(eval_pkg)
        if not n.startswith("_") and n[0].isupper() or n in eval_pkg.__all__
    }
    modules = {"agents", "progress", "report", "runner", "tasks", "annotations"}
    assert set(eval_pkg.__all__) == {n for n in public if n not in modules}


STUBBORN = """
import sys, threading, time
from pathlib import Path
from shellagent.eval import AgentRun, RunConfig, load_tasks, run_eval

class Stubborn:
    name = "stubborn"
    def run(self, task, *, shell, sink, cancel):
        time.sleep(60)  # like a generation that cannot be interrupted
        return AgentRun(reason="finished")

tasks = load_tasks(sys.argv[1]).tasks
print("started", flush=True)
run = run_eval(tasks, Stubborn(), RunConfig(transcripts_dir=Path(sys.argv[2])))
print(len(run.results), run.interrupted, run.not_run, flush=True)
"""


def test_a_second_ctrl_c_stops_waiting_for_a_task_that_does_not_stop(
    write_tasks: Callable[..., Path], tmp_path: Path
) -> None:
    path = write_tasks(SOLVABLE)
    proc = subprocess.Popen(
        [sys.executable, "-c", STUBBORN, str(path), str(tmp_path / "transcripts")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "started\n"
    deadline = time.monotonic() + 30
    while not list((tmp_path / "transcripts").glob("*.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    assert proc.poll() is None  # the first Ctrl-C waits for the running task
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=20)
    assert stdout == "0 True 1\n", stderr


def test_samples_number_each_tasks_rollouts_and_the_export_groups_them(
    write_tasks: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_tasks(SOLVABLE, {**SOLVABLE, "id": "other"})
    out = tmp_path / "run"
    args = ["eval", str(path), "--agent", "nothing", "--samples", "3", "--json", "--out", str(out)]
    assert main(args) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert (summary["samples"], summary["valid"], summary["tasks_solved_any"]) == (3, 6, 0)
    assert "[6/6]" in captured.err
    rows = [json.loads(r) for r in (out / "results.jsonl").read_text().splitlines()]
    assert [(r["id"], r["sample"]) for r in rows] == [
        ("ok", 0),
        ("ok", 1),
        ("ok", 2),
        ("other", 0),
        ("other", 1),
        ("other", 2),
    ]
    target = tmp_path / "rl.jsonl"
    export_args = ["export", "--format", "rl", "--group", "--from", str(out / "transcripts")]
    assert main([*export_args, "-o", str(target)]) == 0
    records = [json.loads(r) for r in target.read_text().splitlines()]
    groups = [r["group"] for r in records]  # each group's rollouts together, in some order
    assert sorted(groups) == ["ok"] * 3 + ["other"] * 3
    assert groups in (["ok"] * 3 + ["other"] * 3, ["other"] * 3 + ["ok"] * 3)
    assert {r["advantage"] for r in records} == {0.0}  # nothing solved: no spread
    assert main(["export", "--format", "sft", "--group"]) == 2
    assert "--group applies to --format rl" in capsys.readouterr().err


def test_recipes_mine_is_the_shipped_recipes_with_the_users_own_and_on_the_shipped_alone() -> None:
    import argparse

    from shellagent.cli.cmd_eval import add_parser, agent_spec

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    specs = {
        choice: agent_spec(parser.parse_args(["eval", "t.jsonl", "--recipes", choice]))
        for choice in ("on", "off", "mine")
    }
    assert {k: (s.recipes, s.own_recipes) for k, s in specs.items()} == {
        "on": (True, False),
        "off": (False, False),
        "mine": (True, True),
    }


@pytest.mark.slow
def test_an_eval_with_recipes_mine_has_what_the_user_taught(tmp_path: Path) -> None:
    from shellagent.eval import ModelAgent
    from shellagent.recipes import teach_commands
    from shellagent.testing import ScriptedBackend

    learned = teach_commands(
        "show ~/a.txt as aligned columns", ["column -t ~/a.txt"], redact=str, kind="question"
    )
    mine = ModelAgent(ScriptedBackend([]), recipes=True, own_recipes=True).recipe_book()
    shipped = ModelAgent(ScriptedBackend([]), recipes=True).recipe_book()
    assert mine is not None and shipped is not None
    assert learned.name in mine.recipes and learned.name not in shipped.recipes
    assert mine.ranker.rank("print ~/b.txt as aligned columns")[0].name == learned.name
