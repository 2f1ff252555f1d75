"""Group-relative advantages (``export --format rl --group``) on fixed rewards."""

from __future__ import annotations

import math

import pytest

from shellagent.transcript.groups import EPS, with_advantages
from shellagent.transcript.records import Message, RlRecord


def rec(
    task_id: str | None, reward: float, task: str = "t", prompt: list[Message] | None = None
) -> RlRecord:
    """An RL record with the fields grouping reads; the rest empty."""
    return RlRecord(
        session="s", task=task, task_id=task_id, source="eval", model="m", outcome="finished",
        prompt=prompt or [], completion=[], turns=[], exit_codes=[], check=None, success=None,
        verdict="unverified", n_turns=0, reward=reward,
    )  # fmt: skip


def test_advantages_are_reward_minus_the_group_mean_over_the_sample_std() -> None:
    out = with_advantages([rec("a", 1.0), rec("a", 0.0), rec("a", 0.0), rec("a", 1.0)])
    std = math.sqrt(((0.5**2) * 4) / 3)  # n - 1, as TRL's GRPOTrainer
    assert [r["group_mean"] for r in out] == [0.5] * 4
    assert out[0]["group_std"] == pytest.approx(std)
    expected = [0.5 / (std + EPS), -0.5 / (std + EPS), -0.5 / (std + EPS), 0.5 / (std + EPS)]
    assert [r["advantage"] for r in out] == pytest.approx(expected)
    assert sum(r["advantage"] for r in out) == pytest.approx(0.0)
    assert {r["group"] for r in out} == {"a"} and {r["group_size"] for r in out} == {4}


def test_a_group_without_spread_or_of_one_teaches_nothing() -> None:
    out = with_advantages([rec("same", 0.7), rec("same", 0.7), rec("alone", -0.2)])
    assert [r["advantage"] for r in out] == [0.0, 0.0, 0.0]
    assert out[2]["group_size"] == 1 and out[2]["group_std"] == 0.0


def test_groups_are_by_task_id_else_task_text_in_order_of_first_appearance() -> None:
    out = with_advantages(
        [
            rec("b", 1.0),
            rec(None, 0.0, task="tidy up"),
            rec("a", 0.5),
            rec("b", -1.0),
            rec(None, 1.0, task="tidy up"),
        ]
    )
    assert [r["group"] for r in out] == ["b", "b", "tidy up", "tidy up", "a"]
    assert [r["reward"] for r in out] == [1.0, -1.0, 0.0, 1.0, 0.5]
    assert out[0]["advantage"] > 0 > out[1]["advantage"]
