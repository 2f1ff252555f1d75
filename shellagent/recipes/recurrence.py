"""A recurring request read apart: what to do, and when (``split_recurrence``).

"back up Documents weekly", "every day at 18:00 copy todo.txt to ~/Backups", "at 6pm every
Friday, empty ~/Downloads/tmp": the *when* becomes a ``shellagent.schedule.Schedule``, the
*what* is the request with the when taken out, which goes through the recipes like any
task. Only a request counts: "what did I change last week", "the weekly report file",
"files older than a month", "the service generates daily reports" say no recurrence, and
neither does a request that names a cron file ("add a line to /etc/cron.d/backup that runs
… every night": that is a file to edit, ``names_cron_file``).

The vocabulary is the lexicon's (``data/lexicon/recurrence.toml``): each term with
phrasings it must match and must not match, run by the lexicon's test with every other
entry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shellagent.errors import InputError
from shellagent.recipes.lexicon import Entry
from shellagent.recipes.lexicon import lexicon as words
from shellagent.schedule import Schedule

if TYPE_CHECKING:
    from shellagent.recipes.model import Recipe

__all__ = [
    "TERMS",
    "Recurrence",
    "Term",
    "lexicon",
    "names_cron_file",
    "split_recurrence",
    "writes_cron_lines",
]


@dataclass(frozen=True)
class Term:
    """One way of saying something about when: the lexicon's entry (its regex, its
    examples) under its short name, which says the unit (``daily``, ``weekly`` …)."""

    name: str
    entry: Entry

    @property
    def regex(self) -> re.Pattern[str]:
        return self.entry.regex

    def finds(self, text: str) -> bool:
        return self.entry.says(text)


# How often, most specific first: the first term that finds something in the request
# decides the unit; the others found there are taken out of the what too. The terms are
# the lexicon's (data/lexicon/recurrence.toml), with their examples.
HOW_OFTEN = (
    "unsupported",
    "every_n_hours",
    "hourly",
    "weekdays",
    "weekly_on_day",
    "weekly",
    "part_of_day",
    "daily",
    "monthly",
)


def _term(name: str) -> Term:
    return Term(name, words()[f"recurrence.{name}"])


TERMS: tuple[Term, ...] = tuple(_term(name) for name in HOW_OFTEN)
# Said beside how often: the time of day, the day of the month, the weekday of a weekly one.
TIME = _term("time")
MONTH_DAY = _term("month_day")
ON_DAY = _term("on_day")
# How a sentence that asks for something starts ("Every day at 18:00 copy …" too); a
# question ("which script runs every day at midnight?") asks for no job.
REQUEST = _term("request")
# A cron file named: the cron_add recipes write lines into such a file, and a request
# naming one is about the file, not a job of ours.
CRON_FILE = _term("cron_file")
_RELATIVE = re.compile(r"\b(?:that|which|who|whose)\b((?:\s+[\w'/.~-]+){0,3})\s*$", re.I)
_PASSIVE = re.compile(r"\b(?:is|are|was|were|gets?|been|being)\s+(?:[\w-]+\s+){0,2}$", re.I)
_ASKED_AS_QUESTION = re.compile(
    r"^\W*(?:(?:so|and|then|also|hey|ok|okay)[,\s]+)*(?:please[,\s]+)?"
    r"(?:(?:can|could|would|will)\s+(?:you|we)|(?:is|would)\s+it\s+possible\s+to)\b",
    re.I,
)
# "count the entries for every day", "one folder for each month": each of them, not when
_FOR_EACH = re.compile(r"\b(?:for|per|on|in|by|from)\s*$", re.I)
_WANTS = re.compile(r"^\W*(?:make\s+sure|ensure|i\s+want|i\s+need|i'd\s+like|i\s+would)", re.I)
# What may follow a frequency said as one word ("back up x weekly at 9", "… weekly, and"):
# a noun after it makes it an adjective ("the weekly report file", "daily archives").
_AFTER_ADVERB = re.compile(
    r"^(?:$|[\s]*[,.;:!?)]|\s+(?:at|on|in|from|to|into|and|then|please|for|starting|until|"
    r"till|so|but|with|by|keeping|keep|using|via|if|when|as|\d)\b)",
    re.I,
)
# "set up a weekly backup of ~/Documents", "make a nightly copy of notes.txt": an adjective
# of an act, said in a request, is a recurrence too
_OF_AN_ACT = re.compile(
    r"^\s+(?:backups?|back-ups?|copy|copies|snapshots?|archives?|sync|cleanup|clean-up|"
    r"job|run|export|dump)\b",
    re.I,
)
_NUMBERS = {"two": 2, "three": 3, "four": 4, "six": 6, "eight": 8, "twelve": 12}
# the default hour of a part of the day
_PART_HOURS = {"morning": 8, "afternoon": 14, "evening": 18, "night": 23}
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`")
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<=[.!?])\s+(?=[A-Z'\"(])")


@dataclass(frozen=True)
class Recurrence:
    """When a recurring request asks for it to run: ``schedule``, and the words that said
    so. ``problem`` (and no schedule) when the request says a recurrence no job can keep
    ("every other day", "every 15 minutes")."""

    schedule: Schedule | None
    said: str
    problem: str = ""


def names_cron_file(text: str) -> bool:
    """Whether ``text`` names a cron file (``/etc/cron.d/x``, ``/etc/crontab``, "the cron
    file", a file named like ``crontab.txt``): the only tasks a recipe that writes cron
    lines into a file is for."""
    return CRON_FILE.finds(text)


def writes_cron_lines(recipe: Recipe) -> bool:
    """Whether ``recipe`` appends cron lines to a file (the ``cron_add_*`` recipes: an
    output slot whose default is a cron file): for a task that names a cron file only,
    and only into a cron file (``names_cron_file``), never into a data file."""
    return any(
        slot.type == "output" and str(slot.default or "").startswith("/etc/cron")
        for slot in recipe.slots.values()
    )


def split_recurrence(text: str) -> tuple[str, Recurrence] | None:
    """``(what, when)`` of a request that asks for something done again and again; None
    when ``text`` asks for nothing recurring (or for a line in a cron file)."""
    if names_cron_file(text):
        return None
    sentences = _sentences(text)
    for i, sentence in enumerate(sentences):
        if not _asks(sentence.strip()):
            continue
        found = _when(sentence)
        if found is None:
            continue
        recurrence, spans = found
        what = _tidy(_without(sentence, spans))
        rest = [s for s in (*sentences[:i], what, *sentences[i + 1 :]) if s.strip()]
        return " ".join(s.strip() for s in rest), recurrence
    return None


def _asks(sentence: str) -> bool:
    """Whether ``sentence`` asks for something to be done: a request, or a question that
    is one ("can you …?"); "on which days did we commit …?" asks about the past."""
    if sentence.rstrip().endswith("?"):
        return _ASKED_AS_QUESTION.match(sentence) is not None
    return REQUEST.finds(sentence)


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def _when(sentence: str) -> tuple[Recurrence, list[tuple[int, int]]] | None:
    """How often ``sentence`` says (a request's sentence) and the spans that say it."""
    quoted = [m.span() for m in _QUOTED.finditer(sentence)]
    chosen: tuple[Term, re.Match[str]] | None = None
    spans: list[tuple[int, int]] = []
    for term in TERMS:
        for match in term.regex.finditer(sentence):
            if _inside(match.span(), quoted) or not _said_of_the_request(sentence, match):
                continue
            if any(a < match.end() and match.start() < b for a, b in spans):
                continue  # "every day" inside "every Sunday"'s span, say
            spans.append(match.span())
            if chosen is None:
                chosen = (term, match)
    if chosen is None:
        return None
    term, match = chosen
    said = [match.group(0)]
    fields: dict[str, object] = {}
    if term.name == "unsupported":
        return Recurrence(None, match.group(0), _unsupported(match.group(0))), spans
    time = _first(TIME, sentence, quoted, spans)
    if time is not None:
        fields["at"] = _clock(time, _part(match))
        spans.append(time.span())
        said.append(time.group(0))
    unit = _unit(term, match, fields)
    if unit in ("week", "month"):
        extra = _first(ON_DAY if unit == "week" else MONTH_DAY, sentence, quoted, spans)
        if extra is not None:
            spans.append(extra.span())
            if extra.start() <= match.start() and match.end() <= extra.end():
                said[0] = extra.group(0)  # "on the 1st of every month" holds "every month"
            else:
                said.append(extra.group(0))
            if unit == "week":
                fields["on"] = extra.group("day")
            else:
                fields["day"] = _month_day(extra)
    elif unit == "day" and (month := _first(MONTH_DAY, sentence, quoted, spans)) is not None:
        unit = "month"  # "on the 1st" beside "every day" is not a thing; "of each month" is
        fields["day"] = _month_day(month)
        spans.append(month.span())
    try:
        schedule = Schedule.parse(
            unit,
            str(fields["at"]) if "at" in fields else None,
            str(fields["on"]) if "on" in fields else None,
            int(str(fields["day"])) if "day" in fields else None,
            int(str(fields["step"])) if "step" in fields else None,
        )
    except InputError as exc:
        return Recurrence(None, " ".join(said), exc.message), spans
    return Recurrence(schedule, " ".join(said)), spans


def _unit(term: Term, match: re.Match[str], fields: dict[str, object]) -> str:
    groups = match.groupdict()
    if term.name == "every_n_hours":
        number = groups["n"].lower()
        fields["step"] = _NUMBERS.get(number) or int(number)
        fields.setdefault("at", "00")
        return "hour"
    if term.name == "weekly_on_day":
        day = next(v for k, v in groups.items() if k in ("day", "days", "lead") and v)
        fields["on"] = day
        return "week"
    if term.name == "part_of_day":
        fields.setdefault("at", f"{_PART_HOURS[groups['part'] or 'night']:02d}:00")
        return "day"
    if term.name == "hourly" and "at" in fields:
        fields["at"] = str(fields["at"]).split(":")[1]  # "hourly at :15" is minute 15
    return {"hourly": "hour", "weekdays": "weekday", "weekly": "week", "monthly": "month"}.get(
        term.name, "day"
    )


def _said_of_the_request(sentence: str, match: re.Match[str]) -> bool:
    """Whether the words found say when the request is to be done: not an adjective of a
    thing ("the weekly report file", "daily archives"), not of something else that
    happens ("the logs that rotate daily", "… is made every day")."""
    before, after = sentence[: match.start()], sentence[match.end() :]
    word = match.group(0).lower()
    if re.fullmatch(r"daily|weekly|nightly|hourly|monthly", word) and not _AFTER_ADVERB.match(
        after
    ):
        # an adjective: a recurrence only as "a weekly backup" in a request
        return bool(re.search(r"\b(?:a|an)\s*$", before, re.I) and _OF_AN_ACT.match(after))
    if _RELATIVE.search(before) or _FOR_EACH.search(before):
        return False
    return not (_PASSIVE.search(before) and not _WANTS.match(sentence))


def _first(
    term: Term, sentence: str, quoted: list[tuple[int, int]], taken: list[tuple[int, int]]
) -> re.Match[str] | None:
    for match in term.regex.finditer(sentence):
        span = match.span()
        if not _inside(span, quoted) and not any(a <= span[0] < b for a, b in taken):
            return match
    return None


def _inside(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    return any(a <= span[0] and span[1] <= b for a, b in spans)


def _part(match: re.Match[str]) -> str:
    part = match.groupdict().get("part")
    if part:
        return part.lower()
    return "night" if match.group(0).lower() == "nightly" else ""


def _clock(match: re.Match[str], part: str) -> str:
    """HH:MM of a time said ("6pm", "at 9", "noon"), read for the part of the day said
    beside it ("every evening at 7" is 19:00)."""
    groups = match.groupdict()
    if groups["named"]:
        return "12:00" if groups["named"].lower() == "noon" else "00:00"
    minutes = groups["mm"] or groups["mm2"] or groups["mm3"]
    if minutes:  # of an hourly one
        return f"00:{int(minutes):02d}"
    hour = int(groups["h"] or groups["h2"] or groups["h3"])
    minute = int(groups["m"] or groups["m2"] or 0)
    ampm = (groups["ampm"] or "").lower().replace(".", "")
    if ampm == "pm" and hour < 12:
        hour += 12
    elif ampm == "am" and hour == 12:
        hour = 0
    elif not ampm and not groups["h2"]:
        afternoon = {"evening": 1, "afternoon": 1, "night": 6}.get(part)
        if afternoon is not None and afternoon <= hour < 12:
            hour += 12
    return f"{hour:02d}:{minute:02d}"


def _month_day(match: re.Match[str]) -> int:
    groups = match.groupdict()
    if groups.get("first"):
        # the last day of every month is not a day every month has: the 28th is
        return 1 if groups["first"].lower() == "first" else 28
    return int(groups.get("d") or groups.get("d2") or 1)


def _unsupported(said: str) -> str:
    return (
        f"'{said}' cannot be kept by a job: jobs run every hour (or every 2, 3, 4, 6, 8 or "
        "12 hours), every day, every weekday, every week or every month"
    )


def _without(sentence: str, spans: list[tuple[int, int]]) -> str:
    out, last = [], 0
    for start, end in sorted(spans):
        out.append(sentence[last:start])
        last = max(last, end)
    out.append(sentence[last:])
    return "".join(out)


# A scheduling verb's object, reduced to the act: "set up a job that copies x" -> "copies
# x" reads as "copy x"; "schedule a backup of ~/Documents" -> "back up ~/Documents".
_JOB_TO = re.compile(
    r"^(?:please\s+)?(?:set\s+up|setup|schedule|create|add|make|start|install)\s+"
    r"(?:a|an)\s+(?:(?:cron|recurring|regular|scheduled|automatic|repeating)\s+)?"
    r"(?:job|task)\s+(?:that|to|which)\s+",
    re.I,
)
_BACKUP_OF = re.compile(
    r"^(?:please\s+)?(?:(?:set\s+up|setup|schedule|create|make|do|take|run)\s+)?"
    r"(?:a|an)\s+(?:(?:full|regular|recurring|automatic|compressed)\s+)?"
    r"(?:backup|back-up)\s+of\s+",
    re.I,
)
_SCHEDULE = re.compile(r"^(?:please\s+)?schedule\s+", re.I)


def _tidy(text: str) -> str:
    """The request with its when taken out, read as a request of its own."""
    text = re.sub(r"\(\s*\)", "", text)
    text = re.sub(r"\s+([,.;:!?])", r"\1", re.sub(r"\s{2,}", " ", text)).strip()
    text = re.sub(r"^[,;:\s-]+|[,;:\s-]+$", "", text)
    text = re.sub(r"([,;:])(?=\s*[,;:.!?]|$)", "", text)
    text = re.sub(r"\s+(?:and|then)\s*$", "", text, flags=re.I).strip()
    text = _JOB_TO.sub("", text)
    text = _BACKUP_OF.sub("back up ", text)
    return _SCHEDULE.sub("", text)


def lexicon() -> Mapping[str, Term]:
    """Every term of this module by name."""
    return {t.name: t for t in (*TERMS, TIME, MONTH_DAY, ON_DAY, REQUEST, CRON_FILE)}
