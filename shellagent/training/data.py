"""Training data: SFT conversations as the model sees them at run time.

Each line of an SFT export is ``{"messages": [{"role", "content"}, ...]}``. A conversation
becomes one token sequence built the way the agent builds its prompts turn by turn: the
rendered prompt up to each reply (the model's own chat template, tokenized by llama.cpp
with the same rules as ``LlamaBackend``), then the reply's tokens and the end-of-turn
token the model must learn to produce. Only reply tokens carry a loss (labels ``-100``
elsewhere). A conversation longer than ``max_tokens`` keeps its first replies.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from shellagent.errors import InputError

IGNORE = -100


class Tokenizer(Protocol):
    template: Any

    def tokenize(self, text: str, *, at_start: bool) -> list[int]: ...

    def is_end_of_generation(self, token: int) -> bool: ...


@dataclass(frozen=True)
class Sample:
    tokens: tuple[int, ...]
    labels: tuple[int, ...]

    @property
    def trained_tokens(self) -> int:
        return sum(1 for label in self.labels if label != IGNORE)


def load_conversations(files: Iterable[Path]) -> list[list[dict[str, str]]]:
    """Every conversation of the SFT files; a malformed line is an error naming file:line."""
    found: list[list[dict[str, str]]] = []
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise InputError(f"cannot read {path}: {exc.strerror}") from None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                messages = [
                    {"role": str(m["role"]), "content": str(m["content"])}
                    for m in record["messages"]
                ]
            except (ValueError, KeyError, TypeError):
                raise InputError(
                    f'{path}:{number}: not an SFT record ({{"messages": [...]}})',
                    hint="make one with `shellagent export --format sft`",
                ) from None
            if any(m["role"] == "assistant" for m in messages):
                found.append(messages)
    if not found:
        raise InputError(
            "no conversations with a model reply in the training data",
            hint="export confirmed sessions with `shellagent export --format sft`, or "
            "generate tasks with `shellagent tasks generate`",
        )
    return found


def encode(
    messages: Sequence[dict[str, str]], tok: Tokenizer, *, max_tokens: int = 1024
) -> Sample | None:
    """One conversation as tokens and labels (None if not even one reply fits)."""
    tokens: list[int] = []
    labels: list[int] = []
    shown = ""  # the text the tokens stand for so far
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        prompt = tok.template.render(list(messages[:i]), add_generation_prompt=True)
        if shown and prompt.startswith(shown):
            suffix = prompt[len(shown) :]
            ids = tok.tokenize(suffix, at_start=False)
            # The model ended its previous reply with an end-of-turn token: that one is
            # its own to learn; the template's text after it is not.
            first_is_end = bool(ids) and tok.is_end_of_generation(ids[0])
            new_labels = [ids[0] if first_is_end else IGNORE] + [IGNORE] * (len(ids) - 1)
            if first_is_end and labels and labels[-1] != IGNORE and tokens[-1] == ids[0]:
                ids, new_labels = ids[1:], new_labels[1:]  # already there
        else:
            tokens, labels = [], []
            ids = tok.tokenize(prompt, at_start=True)
            new_labels = [IGNORE] * len(ids)
        reply = tok.tokenize(message["content"], at_start=False)
        end = _end_token(tok, messages, i)
        if len(tokens) + len(ids) + len(reply) + 1 > max_tokens:
            break
        tokens += ids + reply + [end]
        labels += new_labels + reply + [end]
        shown = prompt + message["content"]
    if not any(label != IGNORE for label in labels):
        return None
    return Sample(tuple(tokens), tuple(labels))


def _end_token(tok: Tokenizer, messages: Sequence[dict[str, str]], i: int) -> int:
    """The end-of-turn token the template writes after a reply (``<|im_end|>`` …)."""
    closed = tok.template.render(list(messages[: i + 1]), add_generation_prompt=False)
    after = closed.split(messages[i]["content"], 1)[-1] if messages[i]["content"] else closed
    for token in tok.tokenize(after, at_start=False):
        if tok.is_end_of_generation(token):
            return token
    raise InputError("the chat template writes no end-of-turn token after a reply")


def split(samples: list[Sample], held_out: float, seed: int) -> tuple[list[Sample], list[Sample]]:
    """Train and held-out parts, the same for the same seed."""
    order = list(range(len(samples)))
    random.Random(seed).shuffle(order)
    n = int(round(len(samples) * held_out)) if len(samples) > 1 else 0
    n = min(max(n, 1 if held_out > 0 and len(samples) > 1 else 0), len(samples) - 1)
    keep = sorted(order[n:])
    held = sorted(order[:n])
    return [samples[i] for i in keep], [samples[i] for i in held]
