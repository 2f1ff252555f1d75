"""Sampling settings and the filters they apply to one step's logits (numpy only).

The order is llama.cpp's default chain: repetition penalty on the raw logits, then top-k,
temperature, min-p and top-p, then a draw. ``temperature == 0`` means greedy (argmax after
the penalty). Filtering to the top-k first keeps every later step on a few dozen
candidates, so a sampled step costs about what a greedy one does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Sampling"]


@dataclass(frozen=True)
class Sampling:
    """How the next token is chosen. The defaults are greedy decoding without penalty."""

    temperature: float = 0.0
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    repeat_penalty: float = 1.0
    penalty_last_n: int = 64

    def __post_init__(self) -> None:
        if self.temperature < 0 or self.repeat_penalty <= 0:
            raise ValueError("temperature must be >= 0 and repeat_penalty > 0")
        if not (0 < self.top_p <= 1 and 0 <= self.min_p < 1 and self.top_k >= 0):
            raise ValueError("top_p must be in (0, 1], min_p in [0, 1), top_k >= 0")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def penalize(self, logits: Any, history: Sequence[int]) -> Any:
        """``logits`` with the tokens of the last ``penalty_last_n`` of ``history`` made less
        likely (divided when positive, multiplied when negative); a copy when changed."""
        if self.repeat_penalty == 1.0 or self.penalty_last_n <= 0 or not history:
            return logits
        import numpy as np

        recent = np.unique(np.asarray(history[-self.penalty_last_n :], dtype=np.int64))
        out = np.array(logits, dtype=np.float32, copy=True)
        values = out[recent]
        out[recent] = np.where(
            values > 0, values / self.repeat_penalty, values * self.repeat_penalty
        )
        return out

    def candidates(self, logits: Any, ids: Any = None) -> tuple[Any, Any]:
        """The tokens that may be drawn and their probabilities (summing to 1), most likely
        first. ``ids`` names the token of each logit when ``logits`` is a subset."""
        import numpy as np

        logits = np.asarray(logits, dtype=np.float64)
        ids = np.arange(len(logits)) if ids is None else np.asarray(ids)
        if 0 < self.top_k < len(logits):
            top = np.argpartition(logits, -self.top_k)[-self.top_k :]
            logits, ids = logits[top], ids[top]
        order = np.argsort(-logits, kind="stable")
        logits, ids = logits[order], ids[order]
        scaled = (logits - logits[0]) / max(self.temperature, 1e-6)
        probs = np.exp(scaled)
        probs /= probs.sum()
        keep = probs >= self.min_p * probs[0]
        # top-p: the shortest head whose mass reaches top_p (always at least one token).
        reach = int(np.searchsorted(np.cumsum(probs), self.top_p)) + 1
        keep[reach:] = False
        probs = probs[keep]
        return ids[keep], probs / probs.sum()

    def draw(self, probs: Any, rng: Any) -> int:
        """Index of one draw from ``probs`` (which need not be normalised)."""
        import numpy as np

        point = rng.random() * float(probs.sum())
        index = int(np.searchsorted(np.cumsum(probs), point, side="right"))
        return min(index, len(probs) - 1)
