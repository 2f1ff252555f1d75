"""Twins of the question families: the same work, the answer saved to a file and judged there."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from shellagent.taskgen import DEFAULT_SEED, families, generate, read_library
from shellagent.taskgen.family import Draw, Instance
from shellagent.taskgen.saving import SUFFIX, ask_to_save, out_file, plain_output, to_file
from shellagent.taskgen.sh import path

QUESTION = Instance(
    task="How many lines does /srv/shop/items.txt have?",
    setup=("mkdir -p /srv/shop", "printf 'a\\nb\\n' > /srv/shop/items.txt"),
    gold=("cd /srv/shop", "wc -l < items.txt"),
    check='grep -qx 2 "$ANSWER"',
    answer="{out2} lines (in {out1|first}).",
    wrong_answers=("3",),
    kind="question",
)


def home_draw() -> Draw:
    """A draw whose file goes to the home folder (so a test can point HOME somewhere)."""
    seed = next(s for s in range(200) if out_file(Draw(random.Random(s)), "x").startswith("~/"))
    return Draw(random.Random(seed))


def passes(check: str, home: Path) -> bool:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LC_ALL": "C.UTF-8"}
    done = subprocess.run(["/bin/bash", "-c", check], env=env, capture_output=True, timeout=20)
    return done.returncode == 0


@pytest.mark.parametrize(
    ("command", "plain"),
    [
        ("ls -S /srv | head -3", True),
        ("grep -c ERROR /var/log/app.log", True),
        ("du -sh ~/Music 2>/dev/null | cut -f1", True),
        ("wc -l < /srv/a.txt", True),
        ("sort -u 2>/dev/null < a.txt", True),
        ("grep x a.txt 2>&1", False),
        ("grep x a.txt 1> /tmp/y", False),
        ("cd /srv && ls", False),
        ("ls; pwd", False),
        ("ls > /tmp/x", False),
        ("for f in *; do echo $f; done", False),
        ("ls 'unclosed", False),
    ],
)
def test_only_one_command_or_one_pipeline_is_redirected_to_the_file(
    command: str, plain: bool
) -> None:
    assert plain_output(command) is plain


def test_a_question_becomes_a_task_that_saves_the_answer_and_shows_it(tmp_path: Path) -> None:
    saved = to_file(QUESTION, home_draw(), "line_count")
    assert saved is not None and saved.kind == "action" and not saved.wrong_answers
    out = saved.slots["out"]
    assert out.startswith("~/") and out in saved.task and f"'{out}'" not in saved.task
    assert saved.task.startswith(QUESTION.task)
    shown = path(out)
    assert saved.gold == ("cd /srv/shop", f"wc -l < items.txt > {shown}", f"cat {shown}")
    # the answer reads the cat, which prints what the question's last command printed
    assert saved.answer == f"{{out3}} lines (in {{out1|first}}). Saved in {out}."

    file = tmp_path / out.removeprefix("~/")
    assert not passes(saved.check, tmp_path)  # nothing saved yet
    file.write_text("")
    assert not passes(saved.check, tmp_path)  # an empty file
    file.write_text("3\n")
    assert not passes(saved.check, tmp_path)  # the question's wrong answer
    file.write_text("2\n")
    assert passes(saved.check, tmp_path)


def test_a_statement_or_a_list_cannot_be_saved() -> None:
    d = Draw(random.Random(1))
    assert to_file(Instance(**{**QUESTION.__dict__, "kind": "action"}), d, "x") is None
    listed = Instance(**{**QUESTION.__dict__, "gold": ("cd /srv/shop && wc -l < items.txt",)})
    assert to_file(listed, d, "x") is None


@pytest.mark.parametrize(
    ("task", "joined"),
    [
        ("Which file in /srv is the biggest?", False),
        ("List the 3 biggest files in /srv, largest first.", True),
        ("Please list the 3 biggest files in /srv.", True),
        ("/var/log/x.log has grown. List its last lines.", False),
    ],
)
def test_the_request_joins_an_instruction_and_follows_a_question(task: str, joined: bool) -> None:
    for seed in range(20):
        text = ask_to_save(Draw(random.Random(seed)), task, "/tmp/out.txt")
        assert "/tmp/out.txt" in text and text.endswith(".")
        assert text.startswith(task[:-1] + " and ") is joined, text
        if not joined:
            assert text.startswith(task + " ")


def test_every_family_that_asks_questions_has_a_twin_that_saves_the_answer() -> None:
    names = {f.name for f in families()}
    twins = {n for n in names if n.endswith(SUFFIX)}
    assert len(twins) >= 40
    assert {n.removesuffix(SUFFIX) for n in twins} <= names
    for task in generate(DEFAULT_SEED, 2, sorted(twins)):
        assert task.gold is not None
        out = task.slots["out"]
        assert out in task.task and task.gold.commands[-1].startswith("cat ")
        assert task.gold.answer_template.endswith(f"Saved in {out}.")


def test_the_library_holds_the_twins_verified() -> None:
    saved = [t for t in read_library() if t.family and t.family.endswith(SUFFIX)]
    assert len(saved) >= 1000
    for task in saved:
        assert task.gold is not None and task.gold.answer.endswith(f"Saved in {task.slots['out']}.")
        assert task.gold.observations[-1].output.strip(), task.id  # the cat showed the answer
