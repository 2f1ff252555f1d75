"""The sampling filters: repetition penalty, top-k, temperature, min-p, top-p, draws."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from shellagent.model.sampling import Sampling

LOGITS = np.array([4.0, 3.0, 2.0, 1.0, 0.0, -1.0, -2.0, -3.0], dtype=np.float32)


def test_defaults_are_greedy_and_leave_logits_untouched() -> None:
    sampling = Sampling()
    assert sampling.greedy
    assert sampling.penalize(LOGITS, [0, 1, 2]) is LOGITS


def test_the_penalty_lowers_recent_tokens_only_whatever_their_sign() -> None:
    sampling = Sampling(repeat_penalty=2.0, penalty_last_n=2)
    out = sampling.penalize(LOGITS, [0, 7, 0, 6])  # the last two: 0 and 6
    assert out[0] == 2.0 and out[6] == -4.0
    assert out[7] == LOGITS[7] and out[1] == LOGITS[1]
    assert LOGITS[0] == 4.0  # the caller's array is not modified


def test_top_k_keeps_the_k_most_likely_most_likely_first() -> None:
    ids, probs = Sampling(temperature=1.0, top_k=3, top_p=1.0, min_p=0.0).candidates(LOGITS)
    assert ids.tolist() == [0, 1, 2]
    assert probs.sum() == pytest.approx(1.0)
    assert probs.tolist() == sorted(probs.tolist(), reverse=True)


def test_min_p_drops_tokens_far_below_the_best() -> None:
    sampling = Sampling(temperature=1.0, top_k=0, top_p=1.0, min_p=0.1)
    ids, _ = sampling.candidates(LOGITS)
    # e^-2 = 0.135 of the best survives, e^-3 = 0.05 does not.
    assert ids.tolist() == [0, 1, 2]


def test_top_p_keeps_the_shortest_head_reaching_the_mass() -> None:
    sampling = Sampling(temperature=1.0, top_k=0, top_p=0.7, min_p=0.0)
    ids, _ = sampling.candidates(LOGITS)
    assert ids.tolist() == [0, 1]  # 0.64 after one token, 0.87 after two


def test_a_low_temperature_concentrates_on_the_best_token() -> None:
    ids, probs = Sampling(temperature=0.05).candidates(LOGITS)
    assert ids.tolist() == [0] and probs.tolist() == [1.0]


def test_candidates_of_a_subset_keep_their_own_ids() -> None:
    sampling = Sampling(temperature=1.0, top_k=2, top_p=1.0, min_p=0.0)
    ids, _ = sampling.candidates(np.array([0.5, 3.0, 1.0]), ids=np.array([40, 41, 42]))
    assert ids.tolist() == [41, 42]


def test_draws_follow_the_probabilities_and_skip_zeroed_ones() -> None:
    sampling = Sampling(temperature=1.0)
    rng = np.random.default_rng(7)
    probs = np.array([0.5, 0.0, 0.3, 0.2])
    counts = np.bincount([sampling.draw(probs, rng) for _ in range(20_000)], minlength=4)
    assert counts[1] == 0
    assert np.allclose(counts / counts.sum(), probs, atol=0.02)


@pytest.mark.parametrize(
    "options",
    [{"temperature": -0.1}, {"top_p": 0.0}, {"min_p": 1.0}, {"repeat_penalty": 0.0}],
)
def test_settings_out_of_range_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Sampling(**options)
