"""Which recipes fit a task: an intent classifier trained on the recipes' own phrasings,
with BM25 over the same text beside it.

BM25 alone ranks words, not intents ("How many PDFs …" and "count the PNGs" share every
word but one), so the ranking is a linear model over TF-IDF word and character n-grams,
trained on every recipe's phrasings, name and summary. A phrasing's ``{slot}`` markers are
filled with typical values of the slot's type, and both the training text and the task are
normalised the same way (paths, numbers and quoted strings become one token each, a path
keeps its extension as a word), so what is learned is the request, not its paths.

The classifier gives a margin per recipe (``Candidate.score``); the agent decides on that
figure whether a recipe fits confidently, only maybe, or not at all (thresholds in
``shellagent.agent.recipe_step``, measured). BM25's share of the score is small: it breaks
ties among recipes the classifier cannot tell apart and lifts a recipe whose rare words
the task repeats exactly. Training takes about a second for a few hundred recipes; the fitted model
is cached under the cache directory by a hash of the recipe set, so a daemon that restarts
does not train again.

scikit-learn and bm25s are imported only here, when a ranker is built: never on ``ask``'s
start-up path.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Candidate", "RankedRecipe", "Ranker", "fill_phrasing", "normalise"]

# Bumped when training or normalisation changes, so a cached model is not reused.
MODEL_VERSION = "4"
BM25_WEIGHT = 0.1
SHARPNESS = 5.0
# Words that say nothing of an intent on their own ("Which ones?", "What is it called?").
_EMPTY = (
    "which what whats how where when who is are was were it its one ones them they this "
    "that these those the a an of in on to do does did i my me you can could please "
    "there any all and or for with be called named"
)
_EMPTY_WORDS = frozenset(_EMPTY.split())


class RankedSlot(Protocol):
    @property
    def type(self) -> str: ...


class RankedRecipe(Protocol):
    """What ranking needs of a recipe."""

    @property
    def name(self) -> str: ...

    @property
    def summary(self) -> str: ...

    @property
    def phrasings(self) -> Sequence[str]: ...

    @property
    def slots(self) -> Mapping[str, RankedSlot]: ...


@dataclass(frozen=True)
class Candidate:
    """A recipe for the task and how well it fits. ``score`` is the classifier's margin for
    the recipe (one-vs-rest: above 0 it says "this one", whatever the number of recipes)
    plus BM25's share (up to ``BM25_WEIGHT``); ``probability`` spreads the margins over all
    recipes (a softmax), ``bm25`` is the raw BM25 score."""

    name: str
    score: float
    probability: float
    bm25: float


FIELD = "qfield"
# Typical values per slot type, a few each so no single path or number is learned as part
# of an intent. Cycled through: the n-th filling of a phrasing takes the n-th value.
TYPICAL: dict[str, tuple[str, ...]] = {
    "dir": ("/var/log/app", "~/Documents", "the reports folder", "/srv/data"),
    # Without extensions: a filled-in "report.csv" would teach every recipe with a file
    # slot that "csv" is part of its intent. A phrasing that means CSV says so itself.
    "file": ("/var/log/syslog", "notes", "~/data/report", "config"),
    "path": ("/etc/nginx", "~/projects/site", "/opt/app/run"),
    "output": ("/tmp/result", "~/out", "summary"),
    "archive": ("backup.tar.gz", "/tmp/logs.zip", "site.tgz"),
    "glob": ("*.log", "report-*.csv", "*.tmp"),
    "ext": ("log", "pdf", "py", "csv"),
    "pattern": ("ERROR", "timeout", "user=admin", "TODO"),
    "text": ("hello world", "DEBUG=false", "maintenance window"),
    "name": ("nginx", "backup", "report.txt"),
    "word": ("alpha", "release", "main"),
    "user": ("alice", "www-data", "deploy"),
    "group": ("staff", "developers"),
    "count": ("5", "10", "3", "20"),
    "number": ("100", "42", "8"),
    "column": ("2", "3", "1"),
    "port": ("8080", "443", "5432"),
    "pid": ("1234", "4321"),
    "days": ("7", "30", "2", "90"),
    "minutes": ("60", "15", "5"),
    "size": ("100M", "1G", "500k"),
    "mode": ("644", "755", "600", "u+x"),
    "schedule": ("@daily", "0 3 * * *", "@weekly"),
    "time": ("03:00", "17:30"),
    "date": ("2024-05-01", "2023-12-31"),
    # a column or key the task says of a file it names is marked FIELD ("version qfield"),
    # so "names a field of the file" is learned as part of the intents that take one
    "key": (FIELD, "email", "name", "status"),
    "branch": ("main", "feature/login", "develop"),
    "signal": ("TERM", "HUP", "KILL"),
    "choice": ("",),
}
FILLINGS = 2  # each phrasing is learned with this many different fillings

_SLOT = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?:\|[a-z_]+)?\}")
_QUOTED = re.compile(r"'[^'\n]{1,80}'|\"[^\"\n]{1,80}\"")
_PATH = re.compile(r"(?<![\w])(?:~/?|\.{1,2}/|/)[^\s'\",;:()]*")
_EXT = re.compile(r"\.([A-Za-z][A-Za-z0-9]{0,5})$")
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# An age in days however it is said: "the last week", "2 weeks", "a month" read as the
# phrasings' "the last 7 days", "14 days", "30 days" (``read_task`` gives the number).
_AGE_WORD = re.compile(r"\b(last|past|previous|this|a|one)\s+(?:week|month|year|fortnight)\b", re.I)
_AGE_UNIT = re.compile(r"\bqnum\s+(?:weeks?|months?|years?)\b")


def fill_phrasing(phrasing: str, slots: Mapping[str, RankedSlot], variant: int = 0) -> str:
    """``phrasing`` with each ``{slot}`` replaced by a typical value of its type."""

    def value(match: re.Match[str]) -> str:
        slot = slots.get(match.group(1))
        if slot is None:
            return match.group(0)
        choices: Sequence[Any] = getattr(slot, "choices", None) or ()
        values = tuple(str(c) for c in choices) or TYPICAL.get(slot.type, ("x",))
        return values[variant % len(values)] or match.group(1)

    return _SLOT.sub(value, phrasing)


def normalise(text: str) -> str:
    """The text as the classifier reads it: lower case, a path as ``qpath`` plus its
    extension, a number as ``qnum``, a quoted string as ``qstr`` (with its words kept)."""

    def path(match: re.Match[str]) -> str:
        ext = _EXT.search(match.group(0).rstrip("/."))
        return f" qpath {ext.group(1).lower()} " if ext else " qpath "

    def quoted(match: re.Match[str]) -> str:
        inner = match.group(0)[1:-1]
        if _PATH.fullmatch(inner):
            return path(_PATH.match(inner))  # type: ignore[arg-type]
        return f" qstr {inner} "

    text = _QUOTED.sub(quoted, text)
    text = _PATH.sub(path, text)
    text = _NUMBER.sub(" qnum ", text)
    text = _AGE_WORD.sub(lambda m: f"{m.group(1)} qnum days", text)
    text = _AGE_UNIT.sub("qnum days", text)
    return " ".join(_WORD.findall(text.lower()))


def _focus(asked: str) -> float:
    """How much a request's own reading counts against the whole task's: none for one
    that says nothing alone ("which ones"), all for one of five words that do."""
    said = [w for w in asked.split() if w not in _EMPTY_WORDS]
    return min(1.0, max(0.0, (len(said) - 1) / 4))


def training_texts(recipe: RankedRecipe) -> list[str]:
    """What the classifier learns a recipe from: its phrasings (each filled ``FILLINGS``
    ways), its summary and its name in words."""
    texts = [recipe.summary, recipe.name.replace("_", " ")]
    for phrasing in recipe.phrasings:
        texts += [fill_phrasing(phrasing, recipe.slots, v) for v in range(FILLINGS)]
    return [normalise(t) for t in texts]


def recipe_set_hash(recipes: Sequence[RankedRecipe]) -> str:
    digest = hashlib.sha256(MODEL_VERSION.encode())
    for recipe in recipes:
        slots = {k: s.type for k, s in recipe.slots.items()}
        record = [recipe.name, recipe.summary, list(recipe.phrasings), slots]
        digest.update(json.dumps(record, sort_keys=True).encode())
    return digest.hexdigest()[:24]


class Ranker:
    """Ranks recipes for a task (``rank``). Build with ``Ranker.build`` (cached) or
    ``Ranker.train``."""

    def __init__(self, names: Sequence[str], model: Any, bm25: Any, docs: int) -> None:
        self.names = list(names)
        self._model = model
        self._bm25 = bm25
        self._docs = docs  # BM25 documents per recipe: one each, in ``names`` order

    @classmethod
    def train(cls, recipes: Sequence[RankedRecipe]) -> Ranker:
        import bm25s
        import numpy as np
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.pipeline import FeatureUnion, Pipeline
        from sklearn.svm import LinearSVC

        texts: list[str] = []
        labels: list[int] = []
        for i, recipe in enumerate(recipes):
            for text in training_texts(recipe):
                texts.append(text)
                labels.append(i)
        features = FeatureUnion(
            [
                ("words", TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1)),
                (
                    "chars",
                    TfidfVectorizer(
                        analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2
                    ),
                ),
            ]
        )
        # A linear SVM: as accurate as logistic regression here and ten times faster to
        # train (0.5 s for ~100 recipes on a loaded 2-core machine, against 13 s).
        model = Pipeline([("features", features), ("clf", LinearSVC(C=1.0))])
        model.fit(texts, labels)
        # Half the cache and load time, with the same ranking to well under a margin's 1e-6.
        clf = model.named_steps["clf"]
        clf.coef_ = clf.coef_.astype(np.float32)
        corpus = [" ".join(training_texts(r)) for r in recipes]
        bm25 = bm25s.BM25()
        bm25.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)
        return cls([r.name for r in recipes], model, bm25, len(recipes))

    @classmethod
    def build(cls, recipes: Sequence[RankedRecipe], cache_dir: Path | None = None) -> Ranker:
        """A ranker for ``recipes``, read from ``cache_dir`` when one was trained on the
        same recipe set, else trained (and stored there)."""
        if cache_dir is None:
            return cls.train(recipes)
        cached = cls.cached(recipes, cache_dir)
        if cached is not None:
            return cached
        path = cls.cache_path(recipes, cache_dir)
        ranker = cls.train(recipes)
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
            temp = path.with_suffix(".tmp")
            with temp.open("wb") as f:
                pickle.dump(ranker, f)
            temp.replace(path)
            for old in cache_dir.glob("recipe-ranker-*.pickle"):
                if old != path:  # rankers of earlier recipe sets: never read again
                    old.unlink(missing_ok=True)
        except OSError:
            pass  # a cache that cannot be written only costs the next start a training
        return ranker

    @staticmethod
    def cache_path(recipes: Sequence[RankedRecipe], cache_dir: Path) -> Path:
        return cache_dir / f"recipe-ranker-{recipe_set_hash(recipes)}.pickle"

    @classmethod
    def cached(cls, recipes: Sequence[RankedRecipe], cache_dir: Path) -> Ranker | None:
        """The ranker trained on exactly ``recipes``, if ``cache_dir`` has it."""
        try:
            with cls.cache_path(recipes, cache_dir).open("rb") as f:
                ranker = pickle.load(f)  # noqa: S301 - our own cache, in the user's dir
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            return None
        if isinstance(ranker, Ranker) and ranker.names == [r.name for r in recipes]:
            return ranker
        return None

    def rank(self, text: str, limit: int = 5, *, asked: str | None = None) -> list[Candidate]:
        """The ``limit`` best recipes for ``text``, best first. A task that starts with
        context ("The 'x' service logs to /var/log/x. Find …") is read twice, whole and
        from ``asked``, the sentence that asks on (its reading's ``request``), and the
        margins mixed by how much the request says on its own (``_focus``): the context's
        words no longer drown "Remove all files older than 30 days", and "Which one?"
        keeps its context."""
        import bm25s
        import numpy as np

        normal = normalise(text)
        texts = [normal] if asked is None or asked == text else [normal, normalise(asked)]
        margins = self._model.decision_function(texts)
        focus = _focus(texts[-1]) if len(texts) > 1 else 0.0
        decision = np.full(len(self.names), -10.0)
        decision[self._model.classes_] = (1 - focus) * margins[0] + focus * margins[-1]
        # The SVM's margins as a distribution over recipes (a softmax, sharpened): a
        # score to compare with thresholds, not a calibrated probability.
        z = np.exp(SHARPNESS * (decision - decision.max()))
        probs = z / z.sum()
        bm = np.zeros(len(self.names))
        tokens = bm25s.tokenize([normal], stopwords="en", show_progress=False)
        if tokens.vocab:
            docs, scores = self._bm25.retrieve(
                tokens, k=min(self._docs, 20), show_progress=False, n_threads=1
            )
            bm[docs[0]] = scores[0]
        top = bm.max()
        bm_norm = bm / top if top > 0 else bm
        combined = decision + BM25_WEIGHT * bm_norm
        order = np.argsort(-combined)[:limit]
        return [
            Candidate(self.names[i], float(combined[i]), float(probs[i]), float(bm[i]))
            for i in order
        ]
