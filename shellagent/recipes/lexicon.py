"""One lexicon: every English word and phrase the recipe step reads a task by.

The reader (``shellagent.recipes.reading``) knows how words combine (an act said in the
imperative, a negation up to two words before it, a size after "larger than"); which words
those are lives here, once, as data: ``data/lexicon/<family>.toml``, one small file per
family (acts, requests, ages and sizes, superlatives, destinations …). An entry is

- ``words``: phrases matched as whole words, case aside ("clean up" also across line
  breaks and double spaces);
- or a ``pattern``: a regular expression, where ``{words}`` stands for the entry's words;
- or ``values``: a mapping of words to what they mean (``pdfs = "pdf"``, ``week = "7"``).

and carries the phrasings it must match and must not match (``match``, ``not_match``; a
mapping's match may say what the first word found means: ``"all the PDFs => pdf"``; a
mapping's pattern may use ``{words}`` for its words, in a group ``(?P<word>…)``), as
codex's execpolicy rules carry theirs. ``Lexicon.problems`` checks every example; the test
suite runs it, so a word added or taken away that breaks a phrasing is seen at once.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from shellagent.errors import ConfigError
from shellagent.tomlfile import line_of, parse

__all__ = ["LEXICON_DIR", "Entry", "Lexicon", "lexicon", "load_lexicon"]

LEXICON_DIR = Path(__file__).parent / "data" / "lexicon"
_MEANS = " => "


@dataclass(frozen=True)
class Entry:
    """One predicate of the reader: its words, pattern or values, and its examples."""

    name: str  # "<family>.<name>", the family being the file's stem
    about: str
    words: tuple[str, ...] = ()
    pattern: str = ""
    values: Mapping[str, str] = field(default_factory=dict)
    match: tuple[str, ...] = ()
    not_match: tuple[str, ...] = ()
    case: bool = False  # the pattern is case-sensitive
    source: str = ""  # file:line, for problems

    @functools.cached_property
    def alternation(self) -> str:
        """The entry's words (or value words) as one regex group, longest first so "clean
        up" is tried before "clean"; a space between words matches any run of spaces."""
        said = self.words or tuple(self.values)
        ordered = sorted(dict.fromkeys(said), key=lambda w: (-len(w), w))
        return "(?:" + "|".join(r"\s+".join(map(re.escape, w.split())) for w in ordered) + ")"

    @functools.cached_property
    def source_pattern(self) -> str:
        """The regex the entry is: its pattern, or its words as whole words."""
        if self.pattern:
            return self.pattern.replace("{words}", self.alternation)
        return rf"(?<![\w'-]){self.alternation}(?![\w'-])"

    @functools.cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.source_pattern, 0 if self.case else re.I)

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.regex.search(text, pos)

    def finditer(self, text: str) -> Iterable[re.Match[str]]:
        return self.regex.finditer(text)

    def says(self, text: str) -> bool:
        return self.regex.search(text) is not None

    def word(self, hit: re.Match[str]) -> str:
        """The word a match found: its ``word`` group when the pattern has one ("100 KB":
        ``KB``), else all of it."""
        return hit.group("word") if "word" in self.regex.groupindex else hit.group(0)

    def value(self, word: str) -> str | None:
        """What ``word`` means (a mapping entry), spaces and case aside; None if nothing."""
        return self._values.get(" ".join(word.lower().split()))

    @functools.cached_property
    def _values(self) -> dict[str, str]:
        return {" ".join(k.lower().split()): v for k, v in self.values.items()}

    def problems(self) -> list[str]:
        """The examples the entry gets wrong, one line each."""
        found = []
        for example in self.match:
            text, _, means = example.partition(_MEANS)
            hit = self.search(text)
            if hit is None:
                found.append(f"{self.source}: {self.name}: does not match {text!r}")
            elif means and self.value(self.word(hit)) != means:
                got = self.value(self.word(hit))
                found.append(f"{self.source}: {self.name}: {text!r} means {got!r}, not {means!r}")
        for text in self.not_match:
            hit = self.search(text)
            if hit is not None:
                found.append(f"{self.source}: {self.name}: matches {text!r} (at {hit.group(0)!r})")
        return found


@dataclass(frozen=True)
class Lexicon:
    """Every entry, by name."""

    entries: Mapping[str, Entry]

    def __getitem__(self, name: str) -> Entry:
        try:
            return self.entries[name]
        except KeyError:
            raise KeyError(f"the lexicon has no entry {name!r}") from None

    def problems(self) -> list[str]:
        """Every example any entry gets wrong (empty: the lexicon says what it means)."""
        return [p for entry in self.entries.values() for p in entry.problems()]


# -- the file format ------------------------------------------------------------------------


class _EntrySpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    about: str = Field(min_length=1)
    words: list[str] = []
    pattern: str = ""
    values: dict[str, str] = {}
    match: list[str] = Field(min_length=1)
    not_match: list[str] = []
    case: bool = False


class _FileSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    entry: list[_EntrySpec] = Field(min_length=1)


_REFERENCE = re.compile(r"\{([a-z][a-z0-9_]*\.[a-z][a-z0-9_]*)\}")


def load_lexicon(files: Iterable[Path]) -> Lexicon:
    """The entries of ``files``; a ``ConfigError`` naming file and line for a malformed one
    (an unknown key, not exactly one of words, pattern or values, a pattern that does not
    compile, a name used twice). A pattern may name another entry's words as
    ``{family.name}`` ("a number": ``{quantities.numbers}``), so a vocabulary is said once."""
    from pydantic import ValidationError

    entries: dict[str, Entry] = {}
    lines: dict[str, tuple[Path, int]] = {}
    for path in files:
        text = path.read_text(encoding="utf-8")
        try:
            spec = _FileSpec.model_validate(parse(text, path, "lexicon file"))
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = tuple(err["loc"])
            where = ".".join(map(str, loc))
            line = line_of(text, loc)
            raise ConfigError(f"{where}: {err['msg']}", path=str(path), line=line) from None
        for i, raw in enumerate(spec.entry):
            line = line_of(text, ("entry", i)) or 0
            name = f"{path.stem}.{raw.name}"
            own_pattern = bool(raw.pattern) and "{words}" not in raw.pattern
            if sum(map(bool, (raw.words, own_pattern, raw.values))) != 1:
                raise ConfigError(
                    f"entry {name}: give words, a pattern or values (a pattern may use "
                    "{words} with words)",
                    path=str(path),
                    line=line,
                )
            if name in entries:
                raise ConfigError(f"entry {name} is defined twice", path=str(path), line=line)
            lines[name] = (path, line)
            entries[name] = Entry(
                name=name,
                about=raw.about,
                words=tuple(raw.words),
                pattern=raw.pattern,
                values=dict(raw.values),
                match=tuple(raw.match),
                not_match=tuple(raw.not_match),
                case=raw.case,
                source=f"{path}:{line}",
            )
    for name, entry in list(entries.items()):
        path, line = lines[name]

        def refer(
            match: re.Match[str], name: str = name, path: Path = path, line: int = line
        ) -> str:
            other = entries.get(match.group(1))
            if other is None or not (other.words or other.values):
                raise ConfigError(
                    f"entry {name}: {match.group(0)} names no entry of words or values",
                    path=str(path),
                    line=line,
                )
            return other.alternation

        resolved = replace(entry, pattern=_REFERENCE.sub(refer, entry.pattern))
        try:
            resolved.regex  # noqa: B018 - compiled now, so a bad pattern is a load error
        except re.error as exc:
            raise ConfigError(
                f"entry {name}: the pattern does not compile: {exc}", path=str(path), line=line
            ) from None
        entries[name] = resolved
    return Lexicon(entries)


@functools.cache
def lexicon() -> Lexicon:
    """The shipped lexicon, read once per process."""
    return load_lexicon(sorted(LEXICON_DIR.glob("*.toml")))
