"""``shellagent recipes test`` in the real throwaway sandbox."""

from __future__ import annotations

import json

import pytest

from shellagent.recipes import user_dir

from .test_cli import cli

pytestmark = pytest.mark.slow

BROKEN = """area = "mine"

[[recipe]]
name = "{name}"
summary = "a recipe whose test proves nothing"
kind = "question"
phrasings = ["a", "b", "c", "d", "e"]
templates = ["ls {{dir}}"]

[recipe.slots]
dir = {{ type = "dir", default = "." }}

[[recipe.tests]]
setup = ["mkdir -p /srv/t", "touch /srv/t/a.txt"]
args = {{ dir = "/srv/t" }}
check = "{check}"
"""


def test_a_handful_of_shipped_recipes_pass_in_the_sandbox() -> None:
    names = ["largest_files", "line_count", "log_count_level", "replace_in_file", "empty_files"]
    done = cli("test", "--json", "--jobs", "2", *names)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(r["name"] for r in rows) == sorted(names)
    assert all(r["ok"] and r["runs"] >= 1 for r in rows), rows
    assert f"{len(names)} of {len(names)} recipes pass" in done.stderr


@pytest.mark.parametrize(
    ("check", "step"),
    [
        ("test -d /srv", "before"),  # passes before anything is done
        ('grep -q nothing-like-this \\"$LAST_OUTPUT\\"', "after"),  # never passes
        ('grep -q a \\"$LAST_OUTPUT\\"', "wrong_answer"),  # passes on the phrasing "a"
    ],
)
def test_a_broken_recipe_is_reported_as_failing(check: str, step: str) -> None:
    user_dir().mkdir(parents=True)
    (user_dir() / "mine.toml").write_text(BROKEN.format(name="broken", check=check))
    done = cli("test", "broken", check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"FAIL  broken/1/1 [{step}]" in done.stdout
    assert "0 of 1 recipes pass" in done.stderr


WRONG_FAMILY = """area = "mine"

[[recipe]]
name = "oldest_not_newest"
summary = "claims the newest file but shows the oldest"
kind = "question"
family = "newest_file"
family_args = { dir = "{dir}" }
phrasings = ["which file in {dir} is the newest"]
templates = ["ls -tr {dir} | head -n 1"]

[recipe.slots]
dir = { type = "dir" }

[[recipe.tests]]
setup = ["mkdir -p /srv/t", "touch -d '2 days ago' /srv/t/old.txt", "touch /srv/t/new.txt"]
args = { dir = "/srv/t" }
check = "grep -qx old.txt \\"$LAST_OUTPUT\\""
"""


def test_a_recipe_is_also_judged_on_instances_of_its_family() -> None:
    user_dir().mkdir(parents=True)
    (user_dir() / "mine.toml").write_text(WRONG_FAMILY)
    alone = cli("test", "oldest_not_newest", "--instances", "0")
    assert "ok    oldest_not_newest (1 runs)" in alone.stdout
    done = cli("test", "oldest_not_newest", "--instances", "2", check=False)
    assert done.returncode == 1
    assert "FAIL  oldest_not_newest/newest_file#1/1 [after]" in done.stdout
