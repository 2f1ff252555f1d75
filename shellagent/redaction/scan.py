"""What every redaction rule shares: the ``Hit`` it reports and the ``Scan`` of one text.

A ``Hit`` is the span of a secret, the name of its placeholder, a rank (where hits overlap,
the lowest rank names the merged placeholder) and the span of the whole match, context
included (``mysql … -pX`` from ``mysql`` on), which output cuts keep whole (``cuts.py``).
``Scan`` computes, once and only when a rule asks, the views of a text that rules share.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

# Ranks: values the user named beat token shapes, which beat what context suggests.
KNOWN, SHAPE, CONTEXT = 0, 1, 2
# Every token shape is at least this long and holds no whitespace.
MIN_SHAPE = 16
# Separators of the words that name programs (``/usr/bin/mysql``, ``$(mysql``, ``'mysql``).
_SEPARATORS = bytes.maketrans(b"\"'`()$;|&<>=/:,{}[]", b" " * 19)


@dataclass(frozen=True)
class Hit:
    start: int
    end: int
    kind: str
    rank: int
    outer_start: int  # the whole match, context included
    outer_end: int


@functools.cache
def rx(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled on first use. Most texts need few of the patterns, and compiling
    them all up front would cost every process that writes a transcript some 60 ms."""
    return re.compile(pattern)


class Scan:
    """One text as the finders see it, with what they share computed once, when first asked."""

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def lowered(self) -> str:
        lowered = self.text.lower()
        if len(lowered) != len(self.text):  # a few characters lower-case to two; keep positions
            lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in self.text)
        return lowered

    @cached_property
    def keywords(self) -> tuple[str, ...]:
        """The words a secret's name is made of that the text holds (``values.KEYWORDS``)."""
        from shellagent.redaction.values import keywords_in

        return keywords_in(self.lowered)

    @cached_property
    def words(self) -> frozenset[bytes]:
        """The lower-cased words, split at whitespace and shell punctuation (as bytes: the
        fastest way to split a long text in Python)."""
        return frozenset(
            self.lowered.encode("utf-8", "surrogatepass").translate(_SEPARATORS).split()
        )

    @cached_property
    def long_words(self) -> tuple[str, list[int]]:
        """The whitespace-separated words of ``MIN_SHAPE``+ characters joined by spaces (where
        token shapes can be), and where each starts in ``text``; most output has few."""
        found, starts = self.long_word_list
        return " ".join(found), starts

    @cached_property
    def long_word_list(self) -> tuple[list[str], list[int]]:
        words = self.text.split()
        if not words or max(map(len, words)) < MIN_SHAPE:
            return [], []
        found = [w for w in words if len(w) >= MIN_SHAPE]
        starts, at = [], 0
        for word in found:
            at = self.text.find(word, at)
            starts.append(at)
            at += len(word)
        return found, starts

    def from_long_words(self, position: int) -> int:
        """A position in ``long_words`` as a position in ``text``."""
        starts = self.long_word_list[1]
        word_starts = self._word_starts
        i = bisect.bisect_right(word_starts, position) - 1
        return starts[i] + position - word_starts[i]

    @cached_property
    def _word_starts(self) -> list[int]:
        out, at = [], 0
        for word in self.long_word_list[0]:
            out.append(at)
            at += len(word) + 1
        return out


Finder = Callable[[Scan], Iterator[Hit]]
