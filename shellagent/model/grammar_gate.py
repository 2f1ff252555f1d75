"""Grammar-constrained decoding that checks the chosen token, not the whole vocabulary.

llama.cpp's grammar sampler, run on every step over all n_vocab candidates, costs more
than the model itself for a small model. Choosing first and checking after needs less:
greedy takes the argmax, asks the grammar about that single token, and only when it is
refused masks the full vocabulary and takes the best allowed token; the result is
identical to masking first. Sampling draws from the filtered candidates (see
``sampling``), asks the grammar about the draw, and draws again without it when refused:
that is a draw from the candidates restricted to what the grammar allows, the same
distribution masking first gives. Only when no candidate is allowed is the vocabulary
masked. llama.cpp's own server samples the same way.
"""

from __future__ import annotations

import ctypes
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shellagent.model.sampling import Sampling

__all__ = ["GrammarGate"]


class GrammarGate:
    """One grammar's parse state over a generation; ``choose`` picks the next token."""

    def __init__(self, vocab: Any, n_vocab: int, gbnf: str) -> None:
        import llama_cpp
        import numpy as np

        self._lib = llama_cpp
        self._np = np
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode(), b"root")
        if not sampler:
            raise ValueError("llama.cpp rejected the grammar")
        self._sampler = sampler
        self._n_vocab = n_vocab
        self._one = (llama_cpp.llama_token_data * 1)()
        self._one_array = llama_cpp.llama_token_data_array(
            data=self._one, size=1, selected=-1, sorted=False
        )
        self._all = (llama_cpp.llama_token_data * n_vocab)()
        # A numpy view over the ctypes array, to fill ids and logits without a Python loop.
        dtype = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])
        self._view = np.frombuffer(memoryview(self._all), dtype=dtype)
        self._ids = np.arange(n_vocab, dtype=np.int32)

    def allows(self, token: int) -> bool:
        self._one[0] = self._lib.llama_token_data(token, 0.0, 0.0)
        self._one_array.size = 1
        self._lib.llama_sampler_apply(self._sampler, ctypes.byref(self._one_array))
        return not math.isinf(self._one[0].logit)

    def allowed_ids(self, logits: Any) -> Any:
        """The ids the grammar allows now (the full vocabulary masked: the slow path)."""
        view = self._view
        view["id"] = self._ids
        view["logit"] = logits
        array = self._lib.llama_token_data_array(
            data=self._all, size=self._n_vocab, selected=-1, sorted=False
        )
        self._lib.llama_sampler_apply(self._sampler, ctypes.byref(array))
        # The grammar may compact the array; only the first `size` entries are candidates.
        candidates = view[: array.size]
        return candidates["id"][~self._np.isinf(candidates["logit"])].copy()

    def best_allowed(self, logits: Any) -> int:
        allowed = self.allowed_ids(logits)
        return int(allowed[int(self._np.argmax(logits[allowed]))])

    def choose(self, logits: Any) -> int:
        """The greedy choice among the tokens the grammar allows."""
        token = int(self._np.argmax(logits))
        if not self.allows(token):
            token = self.best_allowed(logits)
        return self.accept(token)

    def sample(self, logits: Any, sampling: Sampling, rng: Any) -> int:
        """A draw, as ``sampling`` filters ``logits``, among the tokens the grammar allows."""
        ids, probs = sampling.candidates(logits)
        probs = probs.copy()
        for _ in range(len(ids)):
            if probs.sum() <= 0:
                break
            index = sampling.draw(probs, rng)
            if self.allows(int(ids[index])):
                return self.accept(int(ids[index]))
            probs[index] = 0.0
        allowed = self.allowed_ids(logits)
        ids, probs = sampling.candidates(logits[allowed], allowed)
        return self.accept(int(ids[sampling.draw(probs, rng)]))

    def accept(self, token: int) -> int:
        """Advance the grammar past ``token``; returns it."""
        self._lib.llama_sampler_accept(self._sampler, token)
        return token

    def close(self) -> None:
        if self._sampler:
            self._lib.llama_sampler_free(self._sampler)
            self._sampler = None

    def __del__(self) -> None:
        self.close()
