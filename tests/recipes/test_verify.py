"""``shellagent recipes test`` in the real throwaway sandbox."""

from __future__ import annotations

import contextlib
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


CANARIES = [
    "$(touch /tmp/pwned-a)",
    "`touch /tmp/pwned-b`",
    "; touch /tmp/pwned-c",
    "x' ; touch /tmp/pwned-d ; '",
]


def test_hostile_values_run_for_real_touch_no_canary() -> None:
    """Every shipped recipe with a free-text or path slot, rendered with each canary value
    wherever the type accepts it, is run in one throwaway sandbox; no canary file appears."""
    from shellagent.recipes import DATA_DIR, SlotError, load, render
    from shellagent.sandbox import Sandbox

    from .test_shipped import base_args

    catalog = load([DATA_DIR])
    commands = []
    for recipe in catalog.recipes.values():
        base = base_args(recipe)
        for name, slot in recipe.slots.items():
            if slot.type not in ("pattern", "text", "file", "dir", "path", "output", "glob"):
                continue
            for value in CANARIES:
                for i in range(len(recipe.templates)):
                    with contextlib.suppress(SlotError):
                        commands.append(render(recipe, {**base, name: value}, i))
    assert len(commands) > 100
    shell = Sandbox("ephemeral", timeout=600)
    try:
        shell.run("mkdir -p /srv/x /etc/app /var/log/app /var/log/nginx && cd /srv/x", timeout=30)
        for command in commands:
            shell.run(f"( {command} ) </dev/null >/dev/null 2>&1", timeout=30)
        found = shell.run("ls /tmp/pwned-* 2>/dev/null | wc -l", timeout=30)
    finally:
        shell.close()
    assert found.output.strip() == "0"


def test_a_recipe_without_tests_is_listed_not_failed() -> None:
    user_dir().mkdir(parents=True)
    text = BROKEN.format(name="untested", check="true").split("[[recipe.tests]]")[0]
    (user_dir() / "mine.toml").write_text(text)
    done = cli("test", "untested", "largest_files")
    assert "--    untested: no tests" in done.stdout
    assert "1 of 2 recipes pass, 1 without tests" in done.stderr
