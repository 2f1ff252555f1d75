"""The nearest-phrasing layer: what was taught is found at once, with no retraining.

Retraining the ranker's classifier for one taught request takes a minute on a small
machine (one linear SVM per recipe, hundreds of recipes). Instead a taught recipe or
phrasing is *remembered*: its text, read as the ranker reads a task (``rank.normalise``:
paths, numbers and quoted strings abstracted, so other values read the same), is placed
beside every text the ranker was trained on, and a task is lifted to the taught recipe when
the taught text is its nearest neighbour among all of them.

Where a text stands is two things the trained ranker already knows, each scaled to length
one and weighted equally: its TF-IDF word and character n-grams (the words it says) and the
ranker's margins over every recipe as a sharpened softmax (what the trained ranker makes of
it: "the biggest things in my Downloads" and "the largest files in Downloads" share few
words but lean on the same recipes). Measured on the held-out intent phrasings
(``bench/teach_bench.py`` reports it): the words alone never find a paraphrase in other
words; the margins alone lift tasks of other recipes; both together find most paraphrases
and leave the others alone.

A task is lifted only when the taught text is at least as near as every trained text (and
every taught text of another recipe), and at least ``FLOOR`` near: a task closer to a
shipped recipe's own phrasings stays that recipe's, whatever was taught. That holds for a
taught phrasing of recipe R against R's own phrasings too: a phrasing carries the values
its request meant ("the webshop repository": ``~/projects/webshop``), which another request
for R ("how many commits are in this repo") must not inherit.

The values a request names are abstracted for the two parts above, so "how much did I spend in
total, according to ~/Documents/expenses.csv" is as near to any request about any CSV file.
What was taught is the user's own: it names their files, projects, people and programs,
which no shipped phrasing does. A third part, the **own words**, counts them: the cosine of
the two requests' own words, the words said (a path's parts, a file's name, a number) that
at most ``RARE`` of the texts the ranker was trained on use (a path is never one of
them: the ranker reads it as ``qpath``), common English words and the standard places of a
file system and a home left out. A taught text's similarity is its two-part similarity plus ``OWN``
times its own words' cosine; the trained texts have none to add ("which day does
~/logs/app.log begin on" shares ``app.log`` and ``logs`` with the request taught for that
file, and nothing with a shipped phrasing).

Like scikit-learn's estimators: ``fit`` learns the trained texts (``pool_*_``),
``partial_fit`` adds taught texts (``taught_*_``) in milliseconds, ``forget`` drops some;
learned attributes end in ``_``. The layer is persisted beside the ranker's cache, keyed by
the ranker it was fitted on and the versions of the libraries that fitted it
(``shellagent.recipes.rank.Ranker.with_taught``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FLOOR",
    "LIFT",
    "OVERRULED",
    "OWN",
    "RARE",
    "Match",
    "TaughtLayer",
    "library_versions",
    "margins",
    "own_words",
]

# The least similarity (the mean of the two cosines, 0 to 1) at which a taught text lifts:
# a guard for a task unlike anything. Whether a taught text is the nearest decides; with
# the everyday set taught, 0 to 0.5 lift the same 3 of 576 held-out phrasings and 2 of the
# 300 dev tasks (bench/teach_bench.py disturb).
FLOOR = 0.3
# How far above the trained ranker's best (and above 0, where it is confident) a lifted
# taught recipe is scored: it leads whatever the recipes' shapes take off the others.
LIFT = 1.0
# A taught text overrules the recipe the trained ranker puts first for it (when that is not
# the recipe it was taught as): the user said that recipe is not what such a request
# means. Against that recipe's own texts the taught text wins when it is at most
# ``OVERRULED`` less near; against every other recipe's it must still be the nearest.
# With the everyday set taught (bench/teach_bench.py): 0.03 changes none of the held-out
# intent phrasings' first recipe beyond the plain rule (0.05 changes 2 more, 0.1 four)
# and lifts 7 of the 300 dev tasks (3 without; 10 at 0.05, 16 at 0.1).
OVERRULED = 0.03
# How much the own words (the paths, names and numbers a taught request and a task both
# say that the shipped phrasings do not) add to a taught text's similarity: see the
# module docstring. Chosen on the task families with the same values in other words
# (bench/teach_bench.py families --same-values), with the disturbance of
# bench/teach_bench.py disturb beside it.
OWN = 0.2
RARE = 3  # a word more trained texts than this use is no one's own
SHARPNESS = 5.0  # as the ranker's softmax (``rank.SHARPNESS``)
KEEP = 8  # softmax entries kept per trained text (the rest are ~0)


def library_versions() -> dict[str, str]:
    """The libraries whose fitted objects the layer holds."""
    import numpy
    import scipy
    import sklearn

    return {"numpy": numpy.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__}


def margins(classifier: Any, rows: Any) -> Any:
    """The linear classifier's margins for the sparse ``rows``, as its ``decision_function``
    gives them (to within 1e-14), in milliseconds: only the columns of the coefficients a
    row uses are read. ``decision_function`` multiplies by the transposed coefficients,
    which it first copies whole (a hundred megabytes for the shipped recipes: a second
    on a small machine, per task)."""
    import numpy as np

    rows = rows.tocsr()
    coef = classifier.coef_
    out = np.empty((rows.shape[0], coef.shape[0]))
    for i in range(rows.shape[0]):
        start, end = rows.indptr[i], rows.indptr[i + 1]
        out[i] = coef[:, rows.indices[start:end]] @ rows.data[start:end] + classifier.intercept_
    return out


_TOKEN = r"[a-z0-9][a-z0-9._~-]*[a-z0-9]|[a-z0-9]"


def own_words(text: str, common: frozenset[str]) -> dict[str, float]:
    """``text``'s own words (see the module docstring: not in ``common``), each weighing
    the same, scaled to length one. Left out besides: common English words, the standard
    places of a file system and a home (lexicon ``files.system_places``: ``/tmp``,
    ``Documents``) and the clause that says where to save the answer ("save it to
    /tmp/summary.txt" is not what is asked)."""
    import math
    import re

    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from shellagent.recipes.lexicon import lexicon
    from shellagent.recipes.reading import read_task

    saving = read_task(text).saving
    if saving:
        text = text.replace(saving, " ")
    places = set(lexicon()["files.system_places"].words)
    words = {
        w
        for w in re.findall(_TOKEN, text.lower().replace("/", " "))
        if len(w) > 1 and w not in ENGLISH_STOP_WORDS and w not in places and w not in common
    }
    return dict.fromkeys(words, 1 / math.sqrt(len(words))) if words else {}


def _cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    if len(b) < len(a):
        a, b = b, a
    return sum(v * b.get(w, 0.0) for w, v in a.items())


@dataclass(frozen=True)
class Match:
    """A taught recipe a task is lifted to: how near its taught text is, and how near the
    nearest text of any other recipe is (never nearer)."""

    name: str
    similarity: float
    rival: float


class TaughtLayer:
    """Nearest-neighbour lifts over taught texts (see the module docstring)."""

    def __init__(self, *, floor: float = FLOOR) -> None:
        self.floor = floor

    # -- fitting -------------------------------------------------------------------------

    def fit(
        self,
        features: Any,
        classifier: Any,
        texts: Sequence[str],
        names: Sequence[str],
        labels: Sequence[int],
    ) -> TaughtLayer:
        """Learn the trained texts: ``texts`` (normalised) as the ranker was trained on
        them, ``labels[i]`` the index in ``names`` (its recipes: what the layer was
        fitted for) of the recipe of ``texts[i]``. ``features`` and ``classifier`` are
        the ranker's fitted steps."""
        import numpy as np

        self.names_ = list(names)
        self.common_ = self._common(features)
        self.pool_words_, self.pool_margins_ = self._embed(features, classifier, texts)
        self.pool_labels_ = np.asarray(labels, dtype=int)
        self.taught_instead_: list[int] = []  # per taught text: the recipe it overrules, or -1
        self.taught_keys_: list[tuple[str, str, str | None]] = []  # (name, text, base)
        self.taught_names_: list[str] = []
        self.taught_targets_: list[str] = []
        self.taught_words_: Any = None
        self.taught_margins_: Any = None
        self.taught_own_: list[dict[str, float]] = []  # per taught text: its own words
        return self

    @staticmethod
    def _common(features: Any) -> frozenset[str]:
        """The single words of the ranker's word n-grams that more than ``RARE`` trained
        texts use (read back from their inverse document frequency)."""
        import math

        words = dict(features.transformer_list)["words"]
        idf = words.idf_
        texts = 2 * math.exp(float(idf.max()) - 1) - 1  # a word of one text has the largest
        least = math.log((1 + texts) / (1 + RARE)) + 1
        return frozenset(
            w for w, i in words.vocabulary_.items() if " " not in w and idf[i] < least - 1e-9
        )

    def partial_fit(
        self,
        features: Any,
        classifier: Any,
        texts: Sequence[str],
        names: Sequence[str],
        bases: Sequence[str | None],
        said: Sequence[str],
    ) -> TaughtLayer:
        """Add taught texts: ``texts[i]`` (normalised; ``said[i]`` as said, its values
        written in) is recipe ``names[i]``, a phrasing of recipe ``bases[i]`` (None: a
        recipe of its own). Phrasings of one recipe do not compete with each other."""
        from scipy import sparse

        if not texts:
            return self
        X = features.transform(list(texts))
        found = margins(classifier, X)
        words, soft = self.embed_rows(X, found)
        # the recipe the trained ranker puts first for each taught text: overruled by it,
        # unless it is the recipe the text was taught as
        tops = [int(classifier.classes_[j]) for j in found.argmax(axis=1)]
        instead = [
            top if self.names_[top] != (b or n) else -1
            for top, n, b in zip(tops, names, bases, strict=True)
        ]
        if self.taught_words_ is None:
            self.taught_words_, self.taught_margins_ = words, soft
        else:
            self.taught_words_ = sparse.vstack([self.taught_words_, words]).tocsr()
            self.taught_margins_ = sparse.vstack([self.taught_margins_, soft]).tocsr()
        # new lists, never appended to: a copy of the layer may share the old ones
        self.taught_keys_ = [*self.taught_keys_, *zip(names, texts, bases, strict=True)]
        self.taught_names_ = [*self.taught_names_, *names]
        self.taught_targets_ = [
            *self.taught_targets_,
            *(b or n for n, b in zip(names, bases, strict=True)),
        ]
        self.taught_instead_ = [*self.taught_instead_, *instead]
        self.taught_own_ = [
            *self.taught_own_,
            *(own_words(t, self.common_) for t in said),
        ]
        return self

    def forget(self, names: set[str]) -> TaughtLayer:
        """Drop the taught texts of the recipes ``names``."""
        import numpy as np

        keep = [i for i, n in enumerate(self.taught_names_) if n not in names]
        if len(keep) == len(self.taught_names_):
            return self
        rows = np.asarray(keep, dtype=int)
        if self.taught_words_ is not None:
            self.taught_words_ = self.taught_words_[rows] if keep else None
            self.taught_margins_ = self.taught_margins_[rows] if keep else None
        self.taught_keys_ = [self.taught_keys_[i] for i in keep]
        self.taught_names_ = [self.taught_names_[i] for i in keep]
        self.taught_targets_ = [self.taught_targets_[i] for i in keep]
        self.taught_instead_ = [self.taught_instead_[i] for i in keep]
        self.taught_own_ = [self.taught_own_[i] for i in keep]
        return self

    @staticmethod
    def _embed(features: Any, classifier: Any, texts: Sequence[str]) -> tuple[Any, Any]:
        """Each text's two unit-length parts: its n-grams, and the trained ranker's
        margins as a sharpened softmax (its ``KEEP`` largest entries)."""
        X = features.transform(list(texts))
        return TaughtLayer.embed_rows(X, margins(classifier, X))

    @staticmethod
    def embed_rows(X: Any, margins: Any) -> tuple[Any, Any]:
        """``embed`` from n-gram rows ``X`` and the classifier's ``margins`` for them."""
        import numpy as np
        from scipy import sparse
        from sklearn.preprocessing import normalize

        words = normalize(sparse.csr_matrix(X, dtype=np.float32))
        margins = np.atleast_2d(np.asarray(margins, dtype=np.float64))
        z = np.exp(SHARPNESS * (margins - margins.max(axis=1, keepdims=True)))
        soft = z / z.sum(axis=1, keepdims=True)
        keep = min(KEEP, soft.shape[1])
        top = np.argpartition(-soft, keep - 1, axis=1)[:, :keep]
        rows = np.repeat(np.arange(soft.shape[0]), keep)
        values = soft[rows, top.ravel()].astype(np.float32)
        kept = sparse.csr_matrix((values, (rows, top.ravel())), shape=soft.shape)
        return words, normalize(kept)

    # -- asking --------------------------------------------------------------------------

    @property
    def taught(self) -> int:
        return len(self.taught_names_)

    def match(
        self, words: Any, margins: Any, own: Mapping[str, float] | None = None
    ) -> list[Match]:
        """The taught recipes a task (its ``embed_rows``, one row; ``own`` its
        ``own_words``) is lifted to, nearest first."""
        if not self.taught:
            return []
        import numpy as np

        pool = self._similarity(words, margins, self.pool_words_, self.pool_margins_)
        best = float(pool.max()) if pool.size else -1.0
        # the nearest trained text of each recipe
        by_recipe = np.full(len(self.names_), -1.0)
        np.maximum.at(by_recipe, self.pool_labels_, pool)
        taught = self._similarity(words, margins, self.taught_words_, self.taught_margins_)
        if own and OWN:
            taught = taught + OWN * np.array([_cosine(own, theirs) for theirs in self.taught_own_])
        # the nearest taught text of each target (a recipe, with its taught phrasings)
        near: dict[str, float] = {}
        for target, similarity in zip(self.taught_targets_, taught, strict=True):
            near[target] = max(near.get(target, -1.0), float(similarity))
        ranked = sorted(near.items(), key=lambda kv: -kv[1])
        matches = []
        for i, similarity in enumerate(taught):
            if similarity < self.floor:
                continue
            other = next((s for t, s in ranked if t != self.taught_targets_[i]), -1.0)
            rival = max(best, other)
            instead = self.taught_instead_[i]
            if instead >= 0 and by_recipe[instead] >= best:
                # the overruled recipe is nearest: it is held back by ``OVERRULED``
                others = np.delete(by_recipe, instead)
                nearest_other = float(others.max()) if others.size else -1.0
                rival = max(nearest_other, float(by_recipe[instead]) - OVERRULED, other)
            if similarity >= rival:
                matches.append(Match(self.taught_names_[i], float(similarity), float(rival)))
        matches.sort(key=lambda m: -m.similarity)
        # one per recipe: a recipe taught twice is lifted once, by its nearest text
        nearest: dict[str, Match] = {}
        for m in matches:
            nearest.setdefault(m.name, m)
        return list(nearest.values())

    @staticmethod
    def _similarity(words: Any, margins: Any, rows_words: Any, rows_margins: Any) -> Any:
        """The mean of the two cosines of one task against each row."""
        import numpy as np

        both = (rows_words @ words.T).toarray().ravel() + (
            rows_margins @ margins.T
        ).toarray().ravel()
        return np.asarray(both, dtype=np.float64) / 2
