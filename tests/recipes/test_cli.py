"""``shellagent recipes`` through a real subprocess, and recipes made from sessions."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from shellagent.events import ChangeSetRecord, End, Execution, SessionStart
from shellagent.recipes import load, recipe_from_session, render, user_dir
from shellagent.transcript.store import TranscriptWriter

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "shellagent", "recipes", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def test_list_shows_every_recipe_and_json_has_slots_with_regexes() -> None:
    names = set(load().recipes)
    plain = cli("list").stdout.splitlines()
    assert {line.split()[0] for line in plain} == names
    rows = [
        json.loads(line) for line in cli("list", "--json", "--area", "files").stdout.splitlines()
    ]
    assert rows and all(r["area"] == "files" for r in rows)
    largest = next(r for r in rows if r["name"] == "largest_files")
    assert largest["slots"]["count"]["type"] == "count"
    assert largest["slots"]["count"]["regex"]


def test_show_prints_slots_templates_and_the_rendered_defaults() -> None:
    out = cli("show", "largest_files").stdout
    assert "count: count, default 5" in out
    assert "$ find . -maxdepth 1" in out


def test_unknown_names_and_areas_are_one_line_errors() -> None:
    done = cli("show", "no_such_recipe", check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: no recipe named 'no_such_recipe' (see `shellagent recipes list`)"
    ]
    assert cli("list", "--area", "nowhere", check=False).returncode == 2


def test_a_broken_user_file_is_a_warning_and_the_rest_still_lists() -> None:
    user_dir().mkdir(parents=True)
    (user_dir() / "broken.toml").write_text('area = "mine"\n[[recipe]]\nname = "x"\n')
    done = cli("list")
    assert "largest_files" in done.stdout
    assert "broken.toml:2: recipe 'x': summary: Field required" in done.stderr


def session(
    task: str,
    runs: list[tuple[str, int]],
    *,
    success: bool | None = True,
    changes: str | None = None,
) -> str:
    with TranscriptWriter(fsync=False) as writer:
        writer.write(SessionStart(session=writer.session_id, task=task))
        for turn, (command, code) in enumerate(runs, start=1):
            writer.write(Execution(turn=turn, command=command, output="", exit_code=code))
        if changes is not None:
            writer.write(ChangeSetRecord(outcome=changes, modified=1))  # type: ignore[arg-type]
        writer.write(End(reason="finished", success=success))
        return writer.session_id


def test_add_from_a_confirmed_session_writes_a_recipe_with_slots() -> None:
    ident = session(
        "compress the .log files older than 7 days in /srv/app/logs",
        [("ls /srv/app/logs", 0), ("bad-cmd", 127),
         ("find /srv/app/logs -name '*.log' -mtime +7 -exec gzip {} +", 0)],
        changes="applied",
    )  # fmt: skip
    done = cli("add", "--from", ident)
    assert "added recipe my_compress_log_files_older" in done.stdout
    recipe = load().get("my_compress_log_files_older")
    assert recipe.kind == "action" and recipe.area == "mine"
    assert recipe.phrasings == ("compress the .{ext} files older than {number} days in {path}",)
    assert recipe.templates == (
        "ls {path} && find {path} -name '*.{ext}' -mtime +{number} -exec gzip {} +",
    )
    again = render(recipe, {"path": "~/my logs", "ext": "txt", "number": 3})
    assert again == "ls ~/'my logs' && find ~/'my logs' -name '*.txt' -mtime +3 -exec gzip {} +"
    assert cli("show", recipe.name).returncode == 0


@pytest.mark.parametrize(
    ("success", "changes", "why"),
    [
        (False, None, "it did not do the job"),
        (None, None, "nobody confirmed that it did the job"),
        (True, "discarded", "its changes were discarded"),
    ],
)
def test_add_refuses_a_session_that_did_not_work(
    success: bool | None, changes: str | None, why: str
) -> None:
    ident = session(
        "count lines in /srv/f", [("wc -l /srv/f", 0)], success=success, changes=changes
    )
    done = cli("add", "--from", ident, check=False)
    assert done.returncode == 2
    assert why in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (user_dir() / "mine.toml").exists()


def test_add_task_teaches_the_command_at_once_and_rm_forgets_it() -> None:
    done = cli("add", "--task", "How big is my photos folder?", "--", "du -sh ~/photos")
    assert "now runs the recipe dir_size" in done.stdout
    name = re.search(r"`shellagent recipes rm (\w+)`", done.stdout)
    assert name is not None
    taught = load().get(name.group(1))
    assert taught.base == "dir_size" and taught.slots["dir"].default == "~/photos"
    other = cli("add", "--task", "Show ~/a.txt as aligned columns", "--", "column -t ~/a.txt")
    mine = re.search(r"`shellagent recipes rm (\w+)`", other.stdout)
    assert mine is not None and "a recipe of yours" in other.stdout
    listed = {line.split()[0]: line for line in cli("list", "--area", "taught").stdout.splitlines()}
    assert set(listed) == {name.group(1), mine.group(1)}
    assert all("yours:" in line for line in listed.values())
    assert cli("rm", name.group(1)).stdout.strip() == f"forgot {name.group(1)}"
    assert name.group(1) not in load().recipes and mine.group(1) in load().recipes


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "--task", "", "--", "ls"], "error: the task is empty"),
        (["add", "--task", "list them"], "error: no command to learn"),
        (["add", "--task", "say hi", "--", "echo 'hi"], "unbalanced quoting"),
        (["add", "--from", "x", "--", "ls"], "error: commands are given with --task"),
        (["rm", "largest_files"], "error: largest_files is a shipped recipe"),
        (["rm", "nothing_here"], "error: no recipe named 'nothing_here'"),
    ],
)
def test_bad_input_to_add_task_and_rm_is_one_clear_line(args: list[str], message: str) -> None:
    done = cli(*args, check=False)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert not (user_dir() / "taught.toml").exists()


def test_a_session_recipe_is_redacted_and_keeps_unsafe_spots_literal() -> None:
    recipe = recipe_from_session(
        "show lines with 'db down' in /srv/app.log",
        ["grep -c 'db down' /srv/app.log", 'echo "db down now" token=ghp_abc'],
        redact=lambda text: text.replace("ghp_abc", "[REDACTED:github_token]"),
    )
    assert recipe.templates == (
        'grep -c {text} {path} && echo "db down now" token=[REDACTED:github_token]',
    )
    assert recipe.slots["text"].default == "db down"
    assert render(recipe, {"text": "$(id)"}).startswith("grep -c '$(id)' /srv/app.log")


@pytest.mark.slow
def test_index_trains_the_ranker_once_where_the_daemon_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shellagent.recipes.rank import Ranker

    monkeypatch.setenv("SHELLAGENT_CACHE_DIR", str(tmp_path))
    first = cli("index").stdout
    assert "recipes indexed in" in first, first
    recipes = list(load().recipes.values())
    assert Ranker.cached(recipes, tmp_path) is not None  # what book_for loads
    assert "already indexed" in cli("index").stdout
