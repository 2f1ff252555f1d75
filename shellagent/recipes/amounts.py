"""Amounts a task says: numbers, sizes, ages and times, and which way a limit goes.

"older than 30 days" and "modified in the last 30 days" say the same number and mean
opposite files; "haven't been modified in the last 30 days" means the first. So an age or
a size is read as a ``Quantity`` with its direction: ``>`` a limit from below (older,
larger, at least), ``<`` from above (newer, within, smaller, at most). What the words
mean is the lexicon's (``data/lexicon/quantities.toml``); how they combine is here:

- the cue nearest before the amount, in its clause, says the direction ("over 1G",
  "at most 2 days old", "in the last week", "since Monday");
- a negation before a cue turns it ("not older than 3 days": newer; "no bigger than
  4k": smaller);
- a negated change said of the files ("haven't been modified in 30 days", "not touched
  for 10 days") makes an age a limit from below whatever the cue: it is how long they
  have been left alone;
- "between 1MB and 5MB" is both limits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from shellagent.recipes.lexicon import Lexicon

__all__ = [
    "Quantity",
    "ages",
    "days_said",
    "durations",
    "number_words",
    "size_limits",
    "sizes",
]

_DAY = 1440  # minutes


@dataclass(frozen=True)
class Quantity:
    """An age or a size the task says: ``amount`` in ``unit`` (ages: ``d`` or, below a
    day, ``min``; sizes: find's ``k``, ``M``, ``G``), the ``direction`` of the limit
    (``>``, ``<``, or ``""`` when the task does not say) and where it is said."""

    measure: str  # "age" or "size"
    amount: int
    unit: str
    direction: str
    at: int = 0

    def __str__(self) -> str:
        return f"{self.direction}{self.amount}{self.unit}"

    @property
    def days(self) -> int:
        """An age in whole days (at least one)."""
        return max(1, round(self.minutes / _DAY))

    @property
    def minutes(self) -> int:
        return self.amount * (_DAY if self.unit == "d" else 1)


def number_words(text: str, lexicon: Lexicon) -> list[int]:
    """The numbers ``text`` says in words, in the lexicon's order ("five" → 5)."""
    entry = lexicon["quantities.numbers"]
    found = []
    for word, value in entry.values.items():
        pattern = r"\s+".join(map(re.escape, word.split()))
        if re.search(rf"\b{pattern}\b", text, re.I):
            found.append(int(value))
    return found


def sizes(text: str, lexicon: Lexicon) -> list[tuple[int, str, int, int]]:
    """Each size said: (amount, find's unit, start, end)."""
    entry = lexicon["quantities.size_units"]
    found = []
    for m in entry.finditer(text):
        unit = entry.value(m.group("word"))
        if unit is not None:
            found.append((int(m.group("amount")), unit, m.start(), m.end()))
    return found


def _amount(said: str, lexicon: Lexicon) -> int:
    if said.isdigit():
        return int(said)
    value = lexicon["quantities.numbers"].value(said)
    return int(value) if value else 1  # "a week", "the last month", "this week"


def durations(text: str, lexicon: Lexicon, today: date | None = None) -> list[tuple[int, int]]:
    """Each span of time said, in minutes, with where it is said: "30 days", "the last
    week", "a few hours", "yesterday", "since Monday" (the days since, counting today)."""
    units = lexicon["quantities.time_units"]
    found: list[tuple[int, int]] = []
    for m in units.finditer(text):
        per = units.value(m.group("word"))
        if per is not None:  # where the unit is: the cue before it may be "the last"
            found.append((_amount(m.group("amount").lower(), lexicon) * int(per), m.start("word")))
    spans = lexicon["quantities.spans"]
    for m in spans.finditer(text):
        value = spans.value(m.group(0))
        if value is not None and not text.startswith("'s", m.end()):  # "today's usage"
            found.append((int(value), m.start()))
    weekdays = lexicon["quantities.weekdays"]
    for m in re.finditer(rf"\bsince\s+(?:last\s+)?({weekdays.alternation})\b", text, re.I):
        day = weekdays.value(m.group(1))
        if day is not None:
            now = today or date.today()
            found.append((((now.weekday() - int(day)) % 7 + 1) * _DAY, m.start(1)))
    return sorted(found, key=lambda f: f[1])


# What ends the clause an amount's cue is looked for in.
_CLAUSE = re.compile(r"[.;,?!:]\s|\b(?:and|but|then|that|which|who)\b", re.I)


def _clause_before(text: str, at: int) -> tuple[int, str]:
    start = 0
    for m in _CLAUSE.finditer(text, 0, at):
        start = m.end()
    return start, text[start:at]


class _Cues:
    """The direction cues of the lexicon as one regex, the longest phrase first ("over
    the last" before "over")."""

    def __init__(self, lexicon: Lexicon) -> None:
        said: dict[str, str] = {}
        for name, way in (("more", ">"), ("less", "<"), ("recent", "<")):
            entry = lexicon[f"quantities.{name}"]
            for word in entry.words:
                said.setdefault(" ".join(word.lower().split()), way)
        self.way = said
        ordered = sorted(said, key=lambda w: (-len(w), w))
        alternation = "|".join(r"\s+".join(map(re.escape, w.split())) for w in ordered)
        self.regex = re.compile(rf"(?<!\w)(?:{alternation})(?!\w)", re.I)
        self.negation = lexicon["requests.negation"]
        self.changed = lexicon["quantities.changed"]
        self.between = lexicon["quantities.between"]

    def last(self, clause: str) -> tuple[str, int] | None:
        """The direction of the cue said last in ``clause``, and where it starts."""
        found = None
        for m in self.regex.finditer(clause):
            found = (self.way[" ".join(m.group(0).lower().split())], m.start())
        return found


def _direction(text: str, at: int, end: int, cues: _Cues, *, age: bool) -> str:
    start, clause = _clause_before(text, at)
    cue = cues.last(clause)
    negated = cues.negation.search(clause)
    if age and negated is not None:
        changed = cues.changed.search(clause, negated.end())
        if changed is not None:
            return ">"  # "not modified in the last 30 days": left alone that long
    if cue is None:
        after = text[end : end + 12].lower()
        if age and re.match(r"\s+(?:old|ago)\b", after):
            return ""  # "3 days old": that age, no limit said
        return ""
    way, cue_at = cue
    if negated is not None and negated.start() < cue_at:
        way = "<" if way == ">" else ">"  # "not older than", "no bigger than"
    return way


def ages(text: str, lexicon: Lexicon, today: date | None = None) -> list[Quantity]:
    """Each age said, with its direction ("older than 30 days": ``>30d``; "in the last 2
    hours": ``<120min``; "haven't been touched in 60 days": ``>60d``)."""
    cues = _Cues(lexicon)
    found = []
    spans = durations(text, lexicon, today)
    for i, (minutes, at) in enumerate(spans):
        end = spans[i + 1][1] if i + 1 < len(spans) else len(text)
        end = min(end, at + 40)
        way = _direction(text, at, at, cues, age=True)
        if not way:
            way = _said_for_today(text, at)
        amount, unit = (minutes // _DAY, "d") if minutes % _DAY == 0 else (minutes, "min")
        found.append(Quantity("age", amount, unit, way, at))
    return _either(text, _between(text, found, cues))


def _either(text: str, found: list[Quantity]) -> list[Quantity]:
    """ "modified yesterday or today": one span, the wider."""
    result: list[Quantity] = []
    for quantity in found:
        last = result[-1] if result else None
        if (
            last is not None
            and last.direction == quantity.direction == "<"
            and re.fullmatch(r"\s*\w*\s+or\s+", text[last.at : quantity.at], re.I)
        ):
            if quantity.minutes > last.minutes:
                result[-1] = quantity
            continue
        result.append(quantity)
    return result


def _said_for_today(text: str, at: int) -> str:
    """ "changed today", "yesterday": a span up to now."""
    word = re.match(r"(?:today|yesterday)\b", text[at:], re.I)
    return "<" if word else ""


def size_limits(text: str, lexicon: Lexicon) -> list[Quantity]:
    """Each size said, with its direction ("over 1G": ``>1G``; "not larger than 1
    kilobyte": ``<1k``)."""
    cues = _Cues(lexicon)
    found = [
        Quantity("size", amount, unit, _direction(text, at, end, cues, age=False), at)
        for amount, unit, at, end in sizes(text, lexicon)
    ]
    return _between(text, found, cues)


def _between(text: str, found: list[Quantity], cues: _Cues) -> list[Quantity]:
    """ "between 1MB and 5MB": the first from below, the second from above."""
    result = list(found)
    for i in range(len(result) - 1):
        first, second = result[i], result[i + 1]
        said = text[max(0, first.at - 12) : second.at]
        if cues.between.search(said) and re.search(r"\band\b", said[12:], re.I):
            result[i] = Quantity(first.measure, first.amount, first.unit, ">", first.at)
            result[i + 1] = Quantity(second.measure, second.amount, second.unit, "<", second.at)
    return result


def days_said(text: str, lexicon: Lexicon) -> list[str]:
    """The days ``text`` says with a month's name: "9 October 2024" as ``2024-10-09``,
    "October 9th" (no year) as ``--10-09``, a day of any year. A day its month does not have (31
    June) is not a day."""
    found = []
    for hit in lexicon["quantities.day_said"].finditer(text):
        month = lexicon["quantities.months"].value(hit["m1"] or hit["m2"])
        day = int(hit["d1"] or hit["d2"])
        year = hit["year"]
        try:  # 2000 has every day a month may have, 29 February too
            date(int(year or 2000), int(month or 0), day)
        except ValueError:
            continue
        found.append(f"{year}-{month}-{day:02d}" if year else f"--{month}-{day:02d}")
    return found
