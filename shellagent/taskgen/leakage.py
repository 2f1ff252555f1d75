"""Overlap between task sets: is a generated task a copy or a paraphrase of a dev task?

Each task text is normalised: lower case, quotes dropped, every path (a token with ``/``)
becomes ``<path>``, every file name (``name.ext``, ``*.ext``) ``<file>``, every number
``<num>``; common function words are dropped and a plural ``s`` is cut. Two tasks are
compared by the Jaccard index of their token sets (shared tokens / all tokens), so a task
that says the same thing about other paths scores as high as a copy. The report gives the
highest similarity of every candidate to any reference task, the nearest pairs, and how
the maxima are spread.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from shellagent.jsontypes import JsonObject, JsonValue


def _words(text: str) -> list[str]:
    return text.split()


STOPWORDS = frozenset(
    _words(
        """
    a an the in of to and or for on with is are be it its that this these those from by as
    at into onto than then there their them they which what who whom whose where when how
    me my i you your we our us please can could would should will shall do does did so but
    not no only just all any each every some one ones also about after before over under
    up down out off here if via per i'm it's don't need want like
    """
    )
)
_TOKEN = re.compile(r"[a-z0-9_.~/*+-]+")
_FILE = re.compile(r"^(\*|[\w-]*)\.[a-z0-9]{1,6}$")


def tokens(text: str) -> frozenset[str]:
    """The normalised token set of a task text (see the module docstring)."""
    out = set()
    for raw in _TOKEN.findall(text.lower().replace("'", " ").replace('"', " ").replace("`", " ")):
        tok = raw.rstrip(".-").lstrip("-")
        if not tok:
            continue
        if "/" in tok:
            out.add("<path>")
        elif _FILE.match(tok):
            out.add("<file>")
        elif tok.replace(".", "").isdigit():
            out.add("<num>")
        elif tok not in STOPWORDS:
            out.add(
                tok[:-1] if len(tok) > 3 and tok.endswith("s") and not tok.endswith("ss") else tok
            )
    return frozenset(out)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True)
class Pair:
    similarity: float
    candidate_id: str
    candidate: str
    reference_id: str
    reference: str

    def to_json(self) -> JsonObject:
        return {
            "similarity": round(self.similarity, 4),
            "candidate_id": self.candidate_id,
            "candidate": self.candidate,
            "reference_id": self.reference_id,
            "reference": self.reference,
        }


@dataclass
class LeakageReport:
    candidates: int
    references: int
    nearest: list[Pair]
    """The candidates' best matches, most similar first (at most ``top``)."""
    maxima: list[float] = field(default_factory=list)
    """Every candidate's highest similarity, in candidate order."""
    exact: int = 0
    """Candidates whose normalised text equals a reference's."""

    @property
    def max_similarity(self) -> float:
        return max(self.maxima, default=0.0)

    def quantile(self, q: float) -> float:
        if not self.maxima:
            return 0.0
        ordered = sorted(self.maxima)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def above(self, threshold: float) -> int:
        return sum(1 for m in self.maxima if m >= threshold)

    def to_json(self) -> JsonObject:
        nearest: list[JsonValue] = [p.to_json() for p in self.nearest]
        return {
            "candidates": self.candidates,
            "references": self.references,
            "max_similarity": round(self.max_similarity, 4),
            "median": round(self.quantile(0.5), 4),
            "p99": round(self.quantile(0.99), 4),
            "exact": self.exact,
            "at_least_0.5": self.above(0.5),
            "nearest": nearest,
        }


def compare(
    candidates: Sequence[tuple[str, str]],
    references: Sequence[tuple[str, str]],
    *,
    top: int = 10,
) -> LeakageReport:
    """Compare every candidate ``(id, text)`` with every reference ``(id, text)``."""
    ref_tokens = [tokens(text) for _, text in references]
    index: dict[str, list[int]] = defaultdict(list)
    for i, toks in enumerate(ref_tokens):
        for tok in toks:
            index[tok].append(i)
    best: list[Pair] = []
    maxima: list[float] = []
    exact = 0
    for cid, text in candidates:
        toks = tokens(text)
        shared: dict[int, int] = defaultdict(int)
        for tok in toks:
            for i in index.get(tok, ()):
                shared[i] += 1
        score, nearest = 0.0, -1
        for i, n in shared.items():
            s = n / (len(toks) + len(ref_tokens[i]) - n)
            if s > score:
                score, nearest = s, i
        maxima.append(score)
        if nearest >= 0:
            exact += toks == ref_tokens[nearest]
            rid, rtext = references[nearest]
            best.append(Pair(score, cid, text, rid, rtext))
    best.sort(key=lambda p: (-p.similarity, p.candidate_id))
    return LeakageReport(len(candidates), len(references), best[:top], maxima, exact)
