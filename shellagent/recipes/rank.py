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

What was taught (``Recipe.taught``: a correction confirmed in ``ask``, ``recipes add
--task``) is not trained on: it would cost a retraining per correction. The trained ranker
gets a nearest-phrasing layer instead (``with_taught``, ``shellagent.recipes.nearest``),
fitted in milliseconds and cached beside it, which lifts a taught recipe above every other
when its taught text is the task's nearest; with nothing taught, ranking is unchanged.

scikit-learn and bm25s are imported only here, when a ranker is built: never on ``ask``'s
start-up path.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import pickle
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from shellagent.recipes.nearest import TaughtLayer

__all__ = ["Candidate", "RankedRecipe", "Ranker", "fill_phrasing", "normalise", "taught_texts"]

# Bumped when training or normalisation changes, so a cached model is not reused.
MODEL_VERSION = "5"
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


def _taught(recipe: RankedRecipe) -> bool:
    return bool(getattr(recipe, "taught", False))


def _split(recipes: Sequence[RankedRecipe]) -> tuple[list[RankedRecipe], list[RankedRecipe]]:
    """The recipes to train on, and the taught ones (the nearest-phrasing layer's)."""
    return [r for r in recipes if not _taught(r)], [r for r in recipes if _taught(r)]


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
    "day": ("9 October", "March 3rd", "the 12th of June"),  # as people say them
    "zone": ("Europe/Paris", "Asia/Tokyo", "America/New_York"),
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
    extension, a number as ``qnum``, a quoted string as ``qstr`` (with its words kept), a
    day said with its month's name as ``qday`` ("2 June" and "9 October" read alike)."""
    from shellagent.recipes.lexicon import lexicon

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
    text = lexicon()["quantities.day_said"].regex.sub(" qday ", text)
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


def taught_texts(recipe: RankedRecipe) -> list[str]:
    """What the nearest-phrasing layer remembers of a taught recipe: each phrasing with
    its slots' own values written in (a taught phrasing's defaults are the values it was
    taught with), as the classifier reads text; a phrasing that starts with context
    ("My app has been flaky. Count the ERROR entries …") also from the sentence that asks
    on, as ``rank`` reads a task."""
    return list(taught_said(recipe))


def taught_said(recipe: RankedRecipe) -> dict[str, str]:
    """``taught_texts``, each with the text as said it was read from (its values kept:
    the layer's own words)."""
    from shellagent.recipes.asking import request_span
    from shellagent.recipes.lexicon import lexicon

    def value(match: re.Match[str]) -> str:
        slot = recipe.slots.get(match.group(1))
        default = getattr(slot, "default", None)
        if default is not None:
            return str(default)
        return fill_phrasing(match.group(0), recipe.slots)

    texts: dict[str, str] = {}
    for phrasing in recipe.phrasings:
        said = _SLOT.sub(value, phrasing)
        asked = request_span(said, lexicon())
        texts.setdefault(normalise(said), said)
        texts.setdefault(normalise(asked), asked)
    return texts


def _training_set(recipes: Sequence[RankedRecipe]) -> tuple[list[str], list[int]]:
    texts: list[str] = []
    labels: list[int] = []
    for i, recipe in enumerate(recipes):
        for text in training_texts(recipe):
            texts.append(text)
            labels.append(i)
    return texts, labels


def recipe_set_hash(recipes: Sequence[RankedRecipe]) -> str:
    digest = hashlib.sha256(MODEL_VERSION.encode())
    for recipe in recipes:
        slots = {k: s.type for k, s in recipe.slots.items()}
        record = [recipe.name, recipe.summary, list(recipe.phrasings), slots]
        digest.update(json.dumps(record, sort_keys=True).encode())
    return digest.hexdigest()[:24]


class Ranker:
    """Ranks recipes for a task (``rank``). Build with ``Ranker.build`` (cached) or
    ``Ranker.train``; ``with_taught`` adds what was taught (``taught_``)."""

    taught_: TaughtLayer | None = None  # the nearest-phrasing layer, when anything is taught

    def __init__(self, names: Sequence[str], model: Any, bm25: Any, docs: int) -> None:
        self.names = list(names)
        self._model = model
        self._bm25 = bm25
        self._docs = docs  # BM25 documents per recipe: one each, in ``names`` order

    def __getstate__(self) -> dict[str, Any]:
        # The cache holds the trained ranker alone; the taught layer has its own file.
        state = dict(self.__dict__)
        state.pop("taught_", None)
        return state

    @classmethod
    def train(cls, recipes: Sequence[RankedRecipe]) -> Ranker:
        """A ranker trained on ``recipes`` (the taught ones only remembered, not trained
        on: ``with_taught``)."""
        base, taught = _split(recipes)
        ranker = cls._train(base)
        return ranker.with_taught(recipes, None) if taught else ranker

    @classmethod
    def _train(cls, recipes: Sequence[RankedRecipe]) -> Ranker:
        import bm25s
        import numpy as np
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.pipeline import FeatureUnion, Pipeline
        from sklearn.svm import LinearSVC

        texts, labels = _training_set(recipes)
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
        same recipe set (the taught recipes aside), else trained (and stored there, with
        its nearest-phrasing layer)."""
        if cache_dir is None:
            return cls.train(recipes)
        cached = cls.cached(recipes, cache_dir)
        if cached is not None:
            return cached
        base, _ = _split(recipes)
        path = cls.cache_path(recipes, cache_dir)
        ranker = cls._train(base)
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
            _store(path, ranker)
            for old in cache_dir.glob("recipe-ranker-*.pickle"):
                if old != path:  # rankers of earlier recipe sets: never read again
                    old.unlink(missing_ok=True)
            ranker._layer(base, cache_dir)  # ready before anything is taught
        except OSError:
            pass  # a cache that cannot be written only costs the next start a training
        return ranker.with_taught(recipes, cache_dir)

    @staticmethod
    def cache_path(recipes: Sequence[RankedRecipe], cache_dir: Path) -> Path:
        """Where the ranker trained on ``recipes`` (the taught ones aside) is cached."""
        base, _ = _split(recipes)
        return cache_dir / f"recipe-ranker-{recipe_set_hash(base)}.pickle"

    @classmethod
    def cached(cls, recipes: Sequence[RankedRecipe], cache_dir: Path) -> Ranker | None:
        """The ranker trained on exactly ``recipes`` (the taught ones aside), if
        ``cache_dir`` has it, with what was taught."""
        base, _ = _split(recipes)
        try:
            with cls.cache_path(recipes, cache_dir).open("rb") as f:
                ranker = pickle.load(f)  # noqa: S301 - our own cache, in the user's dir
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            return None
        if isinstance(ranker, Ranker) and ranker.names == [r.name for r in base]:
            return ranker.with_taught(recipes, cache_dir)
        return None

    def with_taught(self, recipes: Sequence[RankedRecipe], cache_dir: Path | None) -> Ranker:
        """This ranker with the taught recipes among ``recipes`` remembered (none: as it
        was trained). The layer's trained texts are the ones already held, else those
        cached beside the ranker in ``cache_dir``, else fitted on the trained recipes
        among ``recipes`` (seconds, once, then cached); the taught texts are added in
        milliseconds each (those no longer taught are dropped). ``self`` is left as it
        was."""
        import copy

        base, taught = _split(recipes)
        if not taught:
            if self.taught_ is None:
                return self
            plain = copy.copy(self)
            plain.taught_ = None
            return plain
        held = self.taught_ if self.taught_ is not None else self._layer(base, cache_dir)
        layer = copy.copy(held)
        said = {
            (r.name, text, getattr(r, "base", None)): words
            for r in taught
            for text, words in taught_said(r).items()
        }
        wanted = set(said)
        stale = {name for name, _, _ in set(layer.taught_keys_) - wanted}
        if stale:
            layer.forget(stale)
        missing = sorted(wanted - set(layer.taught_keys_), key=lambda k: (k[0], k[1]))
        if missing:
            features, clf = self._model.named_steps["features"], self._model.named_steps["clf"]
            layer.partial_fit(
                features,
                clf,
                [text for _, text, _ in missing],
                [name for name, _, _ in missing],
                [b for _, _, b in missing],
                [said[key] for key in missing],
            )
        ranker = copy.copy(self)
        ranker.taught_ = layer
        return ranker

    def _layer_path(self, base: Sequence[RankedRecipe], cache_dir: Path) -> Path:
        return cache_dir / f"recipe-taught-{recipe_set_hash(base)}.pickle"

    def _layer(self, base: Sequence[RankedRecipe], cache_dir: Path | None) -> TaughtLayer:
        """The nearest-phrasing layer of this ranker, fitted on its training texts and
        nothing taught yet: cached beside it (keyed by the ranker and the versions of the
        libraries that fitted it), or fitted now (seconds) and cached. What was taught is
        not cached: ``taught.toml`` holds it, and it is added again in milliseconds."""
        from shellagent.recipes.nearest import TaughtLayer

        path = self._layer_path(base, cache_dir) if cache_dir is not None else None
        if path is not None:
            try:
                with path.open("rb") as f:
                    stored = pickle.load(f)  # noqa: S301 - our own cache, in the user's dir
            except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
                stored = None
            if (
                isinstance(stored, _LayerFile)
                and stored.versions == _versions()
                and stored.layer.names_ == self.names
                and hasattr(stored.layer, "common_")  # a layer of an older version
            ):
                return stored.layer
        texts, labels = _training_set(base)
        features, clf = self._model.named_steps["features"], self._model.named_steps["clf"]
        layer = TaughtLayer().fit(features, clf, texts, self.names, labels)
        if path is not None:
            with contextlib.suppress(OSError):
                path.parent.mkdir(parents=True, exist_ok=True)
                _store(path, _LayerFile(_versions(), layer))
                for old in path.parent.glob("recipe-taught-*.pickle"):
                    if old != path:
                        old.unlink(missing_ok=True)
        return layer

    def _margins(self, texts: list[str]) -> Any:
        """The classifier's margins for ``texts`` (``nearest.margins``: the pipeline's
        ``decision_function`` without its copy of every coefficient)."""
        from shellagent.recipes.nearest import margins

        rows = self._model.named_steps["features"].transform(texts)
        return margins(self._model.named_steps["clf"], rows)

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
        margins = self._margins(texts)
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
        ranked = [
            Candidate(self.names[i], float(combined[i]), float(probs[i]), float(bm[i]))
            for i in order
        ]
        if self.taught_ is None or not self.taught_.taught:
            return ranked
        return self._lift(ranked, float(combined.max()), text)[:limit]

    def _lift(self, ranked: list[Candidate], top: float, task: str) -> list[Candidate]:
        """``ranked`` with the taught recipes the task is nearest to put first, above the
        trained ranker's best and above the confident threshold (``nearest.LIFT``). The
        task is read as said, whole and from the sentence that asks on: the markers the
        recipe step adds for the trained ranker (a field the task names) are not the
        user's words."""
        from shellagent.recipes.asking import request_span
        from shellagent.recipes.lexicon import lexicon
        from shellagent.recipes.nearest import LIFT, TaughtLayer, margins, own_words

        assert self.taught_ is not None
        said = task.replace(f" {FIELD}", "")
        texts = list(dict.fromkeys([normalise(said), normalise(request_span(said, lexicon()))]))
        rows = self._model.named_steps["features"].transform(texts)
        found = margins(self._model.named_steps["clf"], rows)
        own = own_words(said, self.taught_.common_)
        best: dict[str, float] = {}
        for i in range(len(texts)):
            words, soft = TaughtLayer.embed_rows(rows[i : i + 1], found[i : i + 1])
            for m in self.taught_.match(words, soft, own):
                best[m.name] = max(best.get(m.name, -1.0), m.similarity)
        lifted = [
            Candidate(name, max(top, 0.0) + LIFT + similarity, similarity, 0.0)
            for name, similarity in sorted(best.items(), key=lambda kv: -kv[1])
        ]
        return [*lifted, *ranked]


@dataclass(frozen=True)
class _LayerFile:
    versions: dict[str, str]
    layer: TaughtLayer


def _versions() -> dict[str, str]:
    from shellagent.recipes.nearest import library_versions

    return {"model": MODEL_VERSION, **library_versions()}


def _store(path: Path, value: object) -> None:
    """Pickle ``value`` to ``path`` in one step (a reader never sees half a file)."""
    import os
    import tempfile

    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            pickle.dump(value, f)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
