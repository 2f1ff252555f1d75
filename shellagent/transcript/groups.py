"""Group-relative advantages for GRPO-style trainers.

``shellagent eval TASKS --samples N`` runs every task N times; ``export --format rl --group``
puts the N episodes of a task into one group and gives each the advantage GRPO uses:

    advantage_i = (reward_i − mean(group)) / (std(group) + EPS)

with the sample standard deviation (n − 1 in the denominator) and ``EPS`` = 1e-4, as TRL's
``GRPOTrainer`` computes it. A group whose rewards are all equal (every rollout solved, or
none) teaches nothing: its advantages are 0. So does a group of one (no spread to measure).

Episodes are grouped by ``task_id`` (eval episodes carry it); an episode without one (an
``ask`` session) is grouped by its task text. Groups are written in order of first
appearance, the episodes of a group together, and every record gains ``group``,
``group_size``, ``group_mean``, ``group_std`` and ``advantage`` beside its ``reward``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable

from shellagent.transcript.records import GroupedRlRecord, RlRecord

__all__ = ["EPS", "group_key", "with_advantages"]

EPS = 1e-4


def group_key(record: RlRecord) -> str:
    """The group an RL record belongs to: its task id, else its task text."""
    task_id = record.get("task_id")
    if task_id:
        return f"id:{task_id}"
    return f"task:{record.get('task') or ''}"


def with_advantages(records: Iterable[RlRecord]) -> list[GroupedRlRecord]:
    """``records`` grouped (see the module docstring), each with its group's figures."""
    groups: dict[str, list[RlRecord]] = {}
    for record in records:
        groups.setdefault(group_key(record), []).append(record)
    out: list[GroupedRlRecord] = []
    for key, members in groups.items():
        rewards = [float(r["reward"]) for r in members]
        mean = statistics.fmean(rewards)
        std = statistics.stdev(rewards) if len(rewards) > 1 else 0.0
        for record, reward in zip(members, rewards, strict=True):
            spread = std > 0 and math.isfinite(std)
            advantage = (reward - mean) / (std + EPS) if spread else 0.0
            out.append(
                {
                    **record,
                    "group": key.split(":", 1)[1],
                    "group_size": len(members),
                    "group_mean": mean,
                    "group_std": std,
                    "advantage": advantage,
                }
            )
    return out
