"""The episode reward used by RL export and the eval runner.

    R = s·(1 − 0.4·(1 − L(T))) − 0.1·e − (1 − s)·0.01·T,   clipped to [−1, 1]
    L(T) = 1 / (1 + exp((T − 15) / 2.5))

``s`` is success (0 or 1), ``T`` the number of assistant turns and ``e`` the share of
executed commands that exited non-zero. It is the formula of the seed project that
published the ``shell-tasks`` sets, so rewards are comparable with theirs: a success in a
few turns is worth about 1, long successes decay towards 0.6, failures cost a little per turn.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def length_factor(turns: int) -> float:
    """L(T): close to 1 for short episodes, 0.5 at 15 turns, close to 0 beyond ~25."""
    return 1.0 / (1.0 + math.exp((turns - 15) / 2.5))


def error_share(exit_codes: Sequence[int | None]) -> float:
    """e: share of commands that did not exit 0 (a timeout counts as an error); 0 if none ran."""
    if not exit_codes:
        return 0.0
    return sum(1 for code in exit_codes if code != 0) / len(exit_codes)


def episode_reward(success: bool, turns: int, exit_codes: Sequence[int | None]) -> float:
    """The scalar reward of one episode, in [−1, 1]."""
    s = 1.0 if success else 0.0
    reward = (
        s * (1 - 0.4 * (1 - length_factor(turns)))
        - 0.1 * error_share(exit_codes)
        - (1 - s) * 0.01 * turns
    )
    return max(-1.0, min(1.0, reward))
