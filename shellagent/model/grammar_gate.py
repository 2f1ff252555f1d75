"""Grammar-constrained greedy decoding that checks one token, not the whole vocabulary.

llama.cpp's grammar sampler, run on every step over all n_vocab candidates, costs more
than the model itself for a small model. Greedy decoding needs less: take the argmax, ask
the grammar about that single token, and only when it is refused mask the full vocabulary
and take the best allowed token. The result is identical to masking first (the argmax of
the allowed set is the argmax whenever it is allowed); llama.cpp's own server samples the
same way.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

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

    def best_allowed(self, logits: Any) -> int:
        view = self._view
        view["id"] = self._ids
        view["logit"] = logits
        array = self._lib.llama_token_data_array(
            data=self._all, size=self._n_vocab, selected=-1, sorted=False
        )
        self._lib.llama_sampler_apply(self._sampler, ctypes.byref(array))
        # The grammar may compact the array; only the first `size` entries are candidates.
        candidates = view[: array.size]
        best = int(self._np.argmax(candidates["logit"]))
        return int(candidates["id"][best])

    def choose(self, logits: Any) -> int:
        token = int(self._np.argmax(logits))
        if not self.allows(token):
            token = self.best_allowed(logits)
        self._lib.llama_sampler_accept(self._sampler, token)
        return token

    def close(self) -> None:
        if self._sampler:
            self._lib.llama_sampler_free(self._sampler)
            self._sampler = None

    def __del__(self) -> None:
        self.close()
