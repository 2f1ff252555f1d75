"""Verification in the ephemeral sandbox: every family verifies, a broken task fails where
it breaks."""

from __future__ import annotations

import collections

import pytest

from shellagent.eval import Gold, Task
from shellagent.taskgen import DEFAULT_SEED, families, generate, verify_all, verify_task

SETUP = ("mkdir -p /srv/shop", "printf 'a\\nb\\nc\\n' > /srv/shop/items.txt")
CHECK = '[ "$(wc -l < /srv/shop/items.txt)" -eq 2 ] && grep -qx 2 "$ANSWER"'


def make(
    *,
    setup: tuple[str, ...] = SETUP,
    check: str = CHECK,
    commands: tuple[str, ...] = ("sed -i '$d' /srv/shop/items.txt", "wc -l < /srv/shop/items.txt"),
    template: str = "{out}",
    wrong: tuple[str, ...] = ("3",),
    text: str = "Drop the last line of /srv/shop/items.txt and tell me how many are left.",
) -> Task:
    return Task(
        id="t",
        task=text,
        setup_commands=setup,
        success_condition=check,
        gold=Gold(commands=commands, answer_template=template, wrong_answers=wrong),
    )


def test_one_instance_of_every_family_verifies() -> None:
    tasks = generate(DEFAULT_SEED + 1000, 1)
    run = verify_all(tasks, jobs=2)
    failed = {
        t.id: v.detail if v else "not verified"
        for t, v in zip(tasks, run.verdicts, strict=True)
        if not v or not v.ok
    }
    assert failed == {}
    assert collections.Counter(t.family for t in run.ok) == {f.name: 1 for f in families()}


def test_a_good_task_verifies_with_its_observations_and_an_answer_built_from_them() -> None:
    verdict = verify_task(make())
    assert verdict.ok, verdict.detail
    assert [(o.output, o.exit_code) for o in verdict.observations] == [("", 0), ("2\n", 0)]
    assert verdict.answer == "2"


STATE = '[ "$(wc -l < /srv/shop/items.txt)" -eq 2 ]'


@pytest.mark.parametrize(
    ("task", "step", "detail"),
    [
        (make(setup=(*SETUP, "false")), "setup", "$ false\n[exit 1]"),
        (make(check="true"), "before", "passes before anything is done"),
        (make(check='grep -q . "$ANSWER"'), "before", "accepts 'did nothing' before"),
        (make(commands=("sed -i '$d' /srv/shop/nope.txt",)), "gold", "[exit 2]"),
        (make(template="{out}" + "x" * 400), "answer", "401 characters"),
        (make(commands=("wc -l < /srv/shop/items.txt",)), "after", "answer '3'"),
        (
            make(check=f'{STATE} && grep -q 2 "$ANSWER"', wrong=("12 lines left",)),
            "wrong_answer",
            "accepts '12 lines left'",
        ),
        (
            make(check=f"{STATE} && grep -Eq '2|items' \"$ANSWER\""),
            "wrong_answer",
            "accepts 'Drop the last line",
        ),
        (make(check=STATE), "wrong_answer", "ignores the answer but wrong answers are listed"),
    ],
)
def test_a_broken_task_fails_at_the_step_that_is_broken(task: Task, step: str, detail: str) -> None:
    verdict = verify_task(task)
    assert (verdict.ok, verdict.step) == (False, step)
    assert detail in verdict.detail


def test_a_task_without_gold_commands_is_refused_without_a_sandbox() -> None:
    task = Task(id="x", task="t", setup_commands=(), success_condition="false")
    verdict = verify_task(task)
    assert (verdict.ok, verdict.step, verdict.seconds < 1) == (False, "gold", True)


def test_the_same_task_verifies_to_the_same_observations_twice() -> None:
    (task,) = generate(DEFAULT_SEED, 1, ["log_error_day"])
    first, second = verify_task(task), verify_task(task)
    assert first.ok and second.ok
    assert (first.observations, first.answer) == (second.observations, second.answer)
