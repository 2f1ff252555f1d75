"""Finding secrets in one text: every rule's hits, merged, invisible characters seen through.

``find`` runs the known values (``Known``: literal secrets the user or the environment
named) and every rule of this package over a text. Overlapping hits merge into one, named
by the lowest rank (known values, then shapes, then context), so a secret is replaced once
and never a placeholder inside a placeholder. Invisible characters (zero-width spaces, soft
hyphens, bidi controls …) slipped into a secret do not hide it: the rules run on the text
without them and the spans are mapped back, so the invisible characters go with the secret.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from shellagent.redaction.context import (
    assignment_hits,
    config_hits,
    cookie_jar_hits,
    header_hits,
    pgpass_hits,
    url_hits,
)
from shellagent.redaction.markup import markup_hits
from shellagent.redaction.nearby import nearby_hits
from shellagent.redaction.programs import (
    htpasswd_hits,
    login_hits,
    oracle_hits,
    pipe_hits,
    program_hits,
)
from shellagent.redaction.scan import KNOWN, Finder, Hit, Scan
from shellagent.redaction.shapes import shape_hits
from shellagent.redaction.values import is_example
from shellagent.redaction.wrapped import wrapped_hits

FINDERS: tuple[Finder, ...] = (
    shape_hits,
    assignment_hits,
    header_hits,
    cookie_jar_hits,
    url_hits,
    pgpass_hits,
    program_hits,
    pipe_hits,
    htpasswd_hits,
    config_hits,
    login_hits,
    oracle_hits,
    markup_hits,
    nearby_hits,
)
# Base64 is decoded and searched again, this many times over (a secret wrapped twice).
MAX_DEPTH = 2
# A documented example or placeholder (``AKIAIOSFODNN7EXAMPLE``, ``ghp_xxxx…``) is not a
# secret; a hit this long or holding spaces (a key block, a header's parameters) still is.
_EXAMPLE_MAX = 256
# A known value cut short to this many characters or more is still that value.
CUT_PREFIX = 6
# No rule matches fewer characters than this, so shorter strings skip the rules.
MIN_RULE_MATCH = 8
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


@dataclass(frozen=True)
class Known:
    """Literal secrets and the labels of their placeholders: value -> label."""

    labels: Mapping[str, str] = field(default_factory=dict)
    values: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Searched one by one with ``str.find`` (C speed): cheaper than one alternation of
        # every value, which ``re`` tries at each position, and nothing to compile when a
        # redactor learns a value.
        values = sorted((v for v in self.labels if v), key=len, reverse=True)
        object.__setattr__(self, "values", tuple(values))

    def hits(self, text: str) -> list[Hit]:
        found = []
        for value in self.values:
            at = text.find(value)
            while at >= 0:
                end = at + len(value)
                found.append(Hit(at, end, self.labels[value], KNOWN, at, end))
                at = text.find(value, end)
        return found + self._cut_short(text)

    def _cut_short(self, text: str) -> list[Hit]:
        """Known values shown cut short: ``CUT_PREFIX``+ characters of one, then ``…`` or
        ``...`` (a long command shortened in a message)."""
        if "…" not in text and "..." not in text:
            return []
        found = []
        for value in self.values:
            if len(value) <= CUT_PREFIX:
                continue
            at = text.find(value[:CUT_PREFIX])
            while at >= 0:
                n = CUT_PREFIX
                while n < len(value) and at + n < len(text) and text[at + n] == value[n]:
                    n += 1
                if n < len(value) and text.startswith(("…", "..."), at + n):
                    found.append(Hit(at, at + n, self.labels[value], KNOWN, at, at + n))
                at = text.find(value[:CUT_PREFIX], at + 1)
        return found


NOTHING_KNOWN = Known()


def find(text: str, known: Known = NOTHING_KNOWN, *, depth: int = 0) -> list[Hit]:
    """The secrets in ``text``, in order, overlapping ones merged into one."""
    if not text:
        return []
    view, where = text, None
    if not text.isascii() and _INVISIBLE.search(text):
        where = [i for i, c in enumerate(text) if not _INVISIBLE.match(c)]
        view = "".join(text[i] for i in where)
    hits = known.hits(view)
    if len(view) >= MIN_RULE_MATCH and not (len(view) < 20 and view.isalpha()):
        # (shorter, or letters only: no rule matches)
        scan = Scan(view)
        found = [hit for finder in FINDERS for hit in finder(scan)]
        if depth < MAX_DEPTH:
            found.extend(wrapped_hits(scan, lambda decoded: find(decoded, depth=depth + 1)))
        hits.extend(h for h in found if not _is_example(view, h))
    if where is not None:
        hits = [_map_back(h, where, len(text)) for h in hits]
    return merge(hits)


def _is_example(text: str, hit: Hit) -> bool:
    if hit.kind == "private_key" or hit.end - hit.start > _EXAMPLE_MAX:
        return False
    value = text[hit.start : hit.end]
    return is_example(value) and not any(c.isspace() for c in value)


def merge(hits: Iterable[Hit]) -> list[Hit]:
    """Hits sorted by position, overlapping ones united and named by the lowest rank."""
    merged: list[Hit] = []
    for hit in sorted(hits, key=lambda h: (h.start, h.rank)):
        last = merged[-1] if merged else None
        if last is None or hit.start >= last.end:
            merged.append(hit)
            continue
        best = last if last.rank <= hit.rank else hit
        merged[-1] = Hit(
            last.start,
            max(last.end, hit.end),
            best.kind,
            best.rank,
            min(last.outer_start, hit.outer_start),
            max(last.outer_end, hit.outer_end),
        )
    return merged


def _map_back(hit: Hit, where: list[int], size: int) -> Hit:
    """A hit in the text without invisible characters, as a span of the original text."""

    def at(i: int) -> int:
        return where[i] if i < len(where) else size

    def end(i: int) -> int:
        return where[i - 1] + 1 if i > 0 else 0

    return Hit(
        at(hit.start), end(hit.end), hit.kind, hit.rank, at(hit.outer_start), end(hit.outer_end)
    )


def redact_words(
    words: list[str], finder: Callable[[str], list[Hit]], placeholder: Callable[[str], str]
) -> list[str]:
    """A list of strings (an argv) redacted as the line it makes and word by word: a secret
    whose context is in another word (``-u`` before ``alice:pw``) or that spans several
    words (a key block) is replaced by ``placeholder(kind)`` in each word it touches."""
    line = " ".join(words)
    starts, at = [], 0
    for word in words:
        starts.append(at)
        at += len(word) + 1
    hits = finder(line)
    # each word alone too: a rule may need the word's own start and end (``.pgpass``)
    for word, first in zip(words, starts, strict=True):
        hits += [
            Hit(h.start + first, h.end + first, h.kind, h.rank, h.outer_start + first,
                h.outer_end + first)
            for h in finder(word)
        ]  # fmt: skip
    if not hits:
        return list(words)
    hits = merge(hits)
    out = []
    for word, start in zip(words, starts, strict=True):
        end = start + len(word)
        touching = [h for h in hits if h.start < end and h.end > start]
        parts: list[str] = []
        at = start
        for h in touching:
            parts += (line[at : max(h.start, start)], placeholder(h.kind))
            at = min(h.end, end)
        parts.append(line[at:end])
        out.append("".join(parts))
    return out
