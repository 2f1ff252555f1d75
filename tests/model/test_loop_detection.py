"""Cutting a reply that loops: one short cycle repeated over the last LOOP_SPAN tokens."""

from __future__ import annotations

import pytest

from shellagent.model.backend import LOOP_MAX_PERIOD, LOOP_SPAN, is_looping


def cycle(period: int, length: int) -> list[int]:
    return [i % period for i in range(length)]


@pytest.mark.parametrize("period", [1, 2, 5, LOOP_MAX_PERIOD])
def test_a_short_cycle_over_the_whole_span_is_a_loop(period: int) -> None:
    prefix = [900, 901, 902]
    assert is_looping(prefix + cycle(period, LOOP_SPAN))
    assert not is_looping(prefix + cycle(period, LOOP_SPAN - 1))


def test_a_longer_cycle_or_a_single_break_is_not_a_loop() -> None:
    assert not is_looping(cycle(LOOP_MAX_PERIOD + 1, 4 * LOOP_SPAN))
    broken = cycle(3, LOOP_SPAN)
    broken[LOOP_SPAN // 2] = 99
    assert not is_looping(broken)


def test_distinct_tokens_of_a_long_command_are_not_a_loop() -> None:
    assert not is_looping(list(range(4 * LOOP_SPAN)))
