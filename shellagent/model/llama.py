"""The local backend: a GGUF model run in-process by llama-cpp-python.

Each turn renders the whole conversation with the model's own chat template and hands the
token list to ``Llama.generate``, whose longest-common-prefix check keeps every KV-cache
entry the previous turn left behind; only the new tokens are evaluated. For that to hold
the tokens must match, not just the text, so when the new prompt's text extends the
previous prompt plus the reply we reuse the previous token ids verbatim (the ids the model
sampled, which need not be the tokenizer's canonical split) and tokenize only the suffix.
A template that rewrites earlier turns is detected (``prefix_stable``) and the count of
tokens actually evaluated, measured at ``Llama.eval``, is reported either way.
"""

from __future__ import annotations

import codecs
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from shellagent.errors import InputError, ModelUnavailable
from shellagent.model.backend import (
    Generation,
    Message,
    ReplyFormat,
    Stop,
    TokenCallback,
    is_looping,
)
from shellagent.model.chat_template import CHATML_TEMPLATE, ChatTemplate
from shellagent.model.gguf import check_model_file
from shellagent.model.grammar_gate import GrammarGate
from shellagent.model.sampling import Sampling

__all__ = ["LlamaBackend"]

# Leave at least this many tokens for the reply when the prompt nearly fills the context.
MIN_REPLY_TOKENS = 32


def _counting_llama(**kwargs: Any) -> Any:
    """A ``Llama`` that counts the tokens it evaluates, so reuse is measured, not assumed."""
    import llama_cpp

    class CountingLlama(llama_cpp.Llama):
        evaluated = 0

        def eval(self, tokens: Sequence[int]) -> None:
            self.evaluated += len(tokens)
            super().eval(tokens)

    return CountingLlama(**kwargs)


WRITES_COMMANDS = 1_000_000_000  # parameters


class LlamaBackend:
    """A GGUF model loaded with llama-cpp-python; see the module docstring for prefix reuse."""

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        name: str | None = None,
        temperature: float = 0.0,
        top_k: int = 40,
        top_p: float = 0.95,
        min_p: float = 0.05,
        repeat_penalty: float = 1.0,
        seed: int = 0,
        check_memory: bool = True,
        adapter: str | os.PathLike[str] | None = None,
        base_sha256: str = "",
    ) -> None:
        path = Path(model_path).expanduser()
        check_model_file(path, check_memory=check_memory)
        self.path = path
        self.adapter = Path(adapter).expanduser() if adapter is not None else None
        if self.adapter is not None:
            from shellagent.model.adapters import check_adapter

            check_adapter(self.adapter, path, base_sha256=base_sha256)
        self.name = name or path.stem
        try:
            self.sampling = Sampling(
                temperature=temperature,
                top_k=top_k,
                top_p=top_p,
                min_p=min_p,
                repeat_penalty=repeat_penalty,
            )
        except ValueError as exc:
            raise InputError(f"model options: {exc}") from None
        import numpy as np

        from shellagent.model.threads import choose_threads

        self._rng = np.random.default_rng(seed)
        # Threads follow the machine's load (``threads.py``) unless they are configured.
        self.threads_fixed = n_threads is not None
        self.threads = choose_threads(n_threads)
        try:
            self._llm = _counting_llama(
                model_path=str(path),
                lora_path=str(self.adapter) if self.adapter is not None else None,
                n_ctx=n_ctx,
                n_threads=self.threads,
                n_threads_batch=self.threads,
                seed=seed,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelUnavailable(
                f"llama.cpp could not load {path}: {exc}",
                hint="the file may be truncated or of an unsupported architecture; pull it again",
            ) from None
        self.context_size: int = int(self._llm.n_ctx())
        self.template = self._load_template()
        self.prefix_stable = self.template.extends_previous_turn()
        self._bos_text = self.template.bos_token
        import llama_cpp

        self._vocab = llama_cpp.llama_model_get_vocab(self._llm.model)
        # a model of a billion parameters or more writes commands well enough to be offered
        # recipes as tools beside its own (``agent/tools.py``); a smaller one only fills them
        self.writes_commands = llama_cpp.llama_model_n_params(self._llm.model) >= WRITES_COMMANDS
        self._n_vocab = int(self._llm.n_vocab())
        # What the KV cache holds after the last turn, as text and as the exact token ids.
        self._prev_text = ""
        self._prev_tokens: list[int] = []
        self._prev_messages: list[Message] = []
        self.prefix_breaks = 0  # turns where a history-preserving template still diverged

    def adapt_threads(self) -> int:
        """Choose the thread count again for the load now (a task starts); the count."""
        if self.threads_fixed:
            return self.threads
        from shellagent.model.threads import choose_threads

        threads = choose_threads()
        if threads != self.threads:
            self._llm._ctx.set_n_threads(threads, threads)
            self._llm.n_threads = self._llm.n_threads_batch = threads
            self.threads = threads
        return threads

    def _load_template(self) -> ChatTemplate:
        metadata: dict[str, str] = dict(self._llm.metadata)
        source = metadata.get("tokenizer.chat_template") or CHATML_TEMPLATE

        def text_of(token_id: int) -> str:
            if token_id < 0:
                return ""
            return bytes(self._llm.detokenize([token_id], special=True)).decode(
                "utf-8", errors="replace"
            )

        return ChatTemplate(
            source,
            bos_token=text_of(int(self._llm.token_bos())),
            eos_token=text_of(int(self._llm.token_eos())),
        )

    # -- tokens ------------------------------------------------------------------------

    def _tokenize(self, text: str, *, at_start: bool) -> list[int]:
        # A template that writes the BOS text itself gets it parsed as a special token;
        # otherwise llama.cpp adds BOS only if the model's metadata asks for one.
        add_bos = at_start and not (self._bos_text and text.startswith(self._bos_text))
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True))

    def tokenize(self, text: str, *, at_start: bool) -> list[int]:
        """Token ids of ``text`` exactly as a turn's prompt is tokenized (training data
        must see what the model sees at run time)."""
        return self._tokenize(text, at_start=at_start)

    def is_end_of_generation(self, token: int) -> bool:
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(self._vocab, token))

    def _prompt_tokens(self, text: str) -> list[int]:
        if self._prev_text and text.startswith(self._prev_text):
            return self._prev_tokens + self._tokenize(text[len(self._prev_text) :], at_start=False)
        return self._tokenize(text, at_start=True)

    def count_tokens(self, messages: Sequence[Message]) -> int:
        text = self.template.render(messages)
        return len(self._prompt_tokens(text))

    # -- generation --------------------------------------------------------------------

    def generate(
        self,
        messages: Sequence[Message],
        *,
        reply_format: ReplyFormat | None = None,
        max_tokens: int = 256,
        on_token: TokenCallback | None = None,
        capture_logprobs: bool = False,
    ) -> Generation:
        import llama_cpp

        text = self.template.render(messages)
        kept = self._kept_history(messages)
        if kept and not text.startswith(self._prev_text):
            self.prefix_breaks += 1
        tokens = self._prompt_tokens(text)
        room = self.context_size - len(tokens)
        if room < MIN_REPLY_TOKENS:
            raise InputError(
                f"the conversation is {len(tokens)} tokens; the model's context holds "
                f"{self.context_size} with {MIN_REPLY_TOKENS} left for the reply",
                hint="drop or shorten old observations, or load the model with a larger n_ctx",
            )
        max_tokens = min(max_tokens, room)

        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pieces: list[str] = []
        ids: list[int] = []
        logprobs: list[float] = []
        evaluated_before = self._llm.evaluated
        evaluated_prompt = len(tokens)
        first_token_s = 0.0
        start = time.perf_counter()
        llm = self._llm
        stop: Stop = "end"
        for token in self._decode(tokens, reply_format):
            if not ids and not first_token_s:
                first_token_s = time.perf_counter() - start
                evaluated_prompt = llm.evaluated - evaluated_before
            if llama_cpp.llama_vocab_is_eog(self._vocab, token):
                break
            ids.append(token)
            if capture_logprobs:
                logprobs.append(self._logprob(token))
            piece = decoder.decode(bytes(llm.detokenize([token])))
            if piece:
                pieces.append(piece)
                if on_token is not None:
                    on_token(piece)
            if len(ids) >= max_tokens:
                stop = "length"
                break
            if is_looping(ids):
                stop = "repeat"
                break
        tail = decoder.decode(b"", final=True)
        if tail:
            pieces.append(tail)
            if on_token is not None:
                on_token(tail)
        duration = time.perf_counter() - start
        reply = "".join(pieces)
        self._prev_text = text + reply
        self._prev_messages = [*messages, {"role": "assistant", "content": reply}]
        self._prev_tokens = tokens + ids
        return Generation(
            text=reply,
            prompt_tokens=len(tokens),
            evaluated_prompt_tokens=evaluated_prompt,
            generated_tokens=len(ids),
            token_ids=tuple(ids) if capture_logprobs else None,
            logprobs=tuple(logprobs) if capture_logprobs else None,
            duration_s=duration,
            first_token_s=first_token_s,
            stop=stop,
        )

    def _decode(self, tokens: list[int], reply_format: ReplyFormat | None) -> Iterator[int]:
        """Decoding driven directly: reuse the cached prefix, eval, choose, repeat.

        The cache bookkeeping is ``Llama.generate``'s (``n_tokens`` marks how much of the
        KV cache is valid; ``eval`` drops the rest). The choice is greedy or sampled as
        ``self.sampling`` says, checked against the grammar (``GrammarGate``).
        """
        import llama_cpp
        import numpy as np

        llm = self._llm
        sampling = self.sampling
        cached = llm.input_ids[: llm.n_tokens]
        keep = 0
        for a, b in zip(cached, tokens, strict=False):
            if a != b:
                break
            keep += 1
        # At least one token must be evaluated to have logits to sample from.
        llm.n_tokens = min(keep, len(tokens) - 1)
        gate = GrammarGate(self._vocab, self._n_vocab, reply_format.gbnf) if reply_format else None
        history = list(tokens)
        try:
            pending = tokens[llm.n_tokens :]
            while True:
                llm.eval(pending)
                logits = np.ctypeslib.as_array(
                    llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(self._n_vocab,)
                )
                logits = sampling.penalize(logits, history)
                if sampling.greedy:
                    token = gate.choose(logits) if gate else int(np.argmax(logits))
                elif gate is not None:
                    token = gate.sample(logits, sampling, self._rng)
                else:
                    ids, probs = sampling.candidates(logits)
                    token = int(ids[sampling.draw(probs, self._rng)])
                yield token
                history.append(token)
                pending = [token]
        finally:
            if gate is not None:
                gate.close()

    def _kept_history(self, messages: Sequence[Message]) -> bool:
        """Whether the caller kept the previous turn (so a text mismatch is the template's)."""
        n = len(self._prev_messages)
        return n > 0 and [dict(m) for m in messages[:n]] == self._prev_messages

    def _logprob(self, token: int) -> float:
        """Log-probability of ``token`` under the model's raw distribution at this step.

        Read from the last output row llama.cpp keeps for sampling, so no ``logits_all``
        (an n_ctx x n_vocab buffer) is needed.
        """
        import llama_cpp
        import numpy as np

        row = np.ctypeslib.as_array(
            llama_cpp.llama_get_logits_ith(self._llm.ctx, -1), shape=(self._n_vocab,)
        )
        top = float(row.max())
        log_z = top + float(np.log(np.exp(row - top, dtype=np.float64).sum()))
        return float(row[token]) - log_z

    def reset(self) -> None:
        """Forget the cached conversation (the next turn evaluates its whole prompt)."""
        self._prev_text = ""
        self._prev_tokens = []
        self._prev_messages = []
        self._llm.reset()

    def close(self) -> None:
        self._llm.close()
