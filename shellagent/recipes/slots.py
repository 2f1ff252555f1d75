"""Slot types: what a value of each type may be, and how it becomes shell text.

Every type has a ``regex`` (the values it admits, in a small dialect another module can
turn into a GBNF grammar fragment: literal characters (a special one after ``\\``),
``[...]`` and ``[^...]`` classes with ranges and ``\\xNN`` escapes, ``(a|b)`` groups,
``?``, ``*``, ``+`` and ``{m,n}``), a ``check`` for
what a regex cannot say (port ranges, real dates, git's ref rules), and a ``normalize`` that
puts an accepted value in its canonical form (``.log`` -> ``log``, ``SIGTERM`` -> ``TERM``).
A value is validated, normalized, then quoted by the renderer (``render.py``) for where its
placeholder stands in the template; only the types in ``SINGLE_QUOTE_SAFE`` may stand
inside single quotes, where their characters cannot break the inner language (awk, find).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from shellagent.errors import InputError

__all__ = [
    "SINGLE_QUOTE_SAFE",
    "TYPES",
    "SlotError",
    "SlotType",
    "slot_type",
]


class SlotError(InputError):
    """A slot value its type refuses."""


def _no_check(value: str) -> str | None:
    return None


def _same(value: str) -> str:
    return value


@dataclass(frozen=True)
class SlotType:
    """One type of slot. ``check`` returns why a value that matches ``regex`` is still
    refused (None: accepted); ``expect`` says in a few words what a value should be."""

    name: str
    regex: str
    expect: str
    check: Callable[[str], str | None] = _no_check
    normalize: Callable[[str], str] = _same
    integer: bool = False

    def validate(self, value: object) -> str:
        """``value`` in its canonical form, or ``SlotError`` saying what is expected."""
        wrong = isinstance(value, int) and self.name in _TEXT_ONLY
        if wrong or isinstance(value, bool) or not isinstance(value, str | int):
            raise SlotError(f"{value!r} is not a {self.name} (expected {self.expect})")
        text = self.normalize(str(value).strip() if self.integer else str(value))
        if not re.fullmatch(self.regex, text):
            raise SlotError(f"{_show(value)} is not a {self.name} (expected {self.expect})")
        why = self.check(text)
        if why is not None:
            raise SlotError(f"{_show(value)} is not a {self.name}: {why}")
        return text


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# Types a TOML integer is not a value of (a quoted "3" is a file named 3).
_TEXT_ONLY = frozenset(
    {"dir", "file", "path", "output", "archive", "glob", "pattern", "text", "schedule"}
    | {"time", "date", "day", "zone", "jq_filter"}
)
# Printable characters of any script: no C0 controls, no DEL (a newline would end the
# command, a carriage return would hide what comes before it).
_PRINTABLE = r"[^\x00-\x1f\x7f]"
_ARCHIVE_ENDS = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip", ".gz")


def _path_check(value: str) -> str | None:
    if len(value) > 4096:
        return "longer than 4096 characters"
    return None


def _archive_check(value: str) -> str | None:
    if not value.lower().endswith(_ARCHIVE_ENDS):
        return "an archive name ends in " + ", ".join(_ARCHIVE_ENDS)
    return _path_check(value)


def _glob_check(value: str) -> str | None:
    return "a pattern of names must not start with '-'" if value.startswith("-") else None


def _int_range(low: int, high: int) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        number = int(value)
        return None if low <= number <= high else f"must be {low} to {high}"

    return check


def _int_normalize(value: str) -> str:
    return str(int(value)) if re.fullmatch(r"[0-9]{1,12}", value) else value


def _size_normalize(value: str) -> str:
    match = re.fullmatch(r"([0-9]+)\s*([kKmMgG]?)[bB]?", value.strip())
    if not match:
        return value
    unit = match.group(2)
    return match.group(1) + (unit.lower() if unit in "kK" and unit else unit.upper())


def _mode_check(value: str) -> str | None:
    if len(value) == 4 and value[0] != "0":
        return "set-user-id, set-group-id and sticky bits are not set by recipes"
    return None


def _time_check(value: str) -> str | None:
    hours, minutes = value.split(":")
    return None if int(hours) < 24 and int(minutes) < 60 else "not a time of day"


def _date_check(value: str) -> str | None:
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return "not a date of the calendar"
    return None


def _day_check(value: str) -> str | None:
    return _date_check(f"2000-{value}")  # a leap year: 02-29 is a day


def _branch_check(value: str) -> str | None:
    # git check-ref-format, for the characters admitted by the regex
    bad = (
        value.startswith(("-", "/", "."))
        or value.endswith(("/", ".", ".lock"))
        or ".." in value
        or "//" in value
        or "@{" in value
        or "/." in value
        or value == "@"
    )
    return "not a valid git branch name" if bad else None


# A jq filter from free text is a program: jq can read the environment ($ENV, env), more
# input (input, inputs), build unbounded values ([range(1e9)]) or loop (recurse, until).
# The jq_filter type admits a fixed, small grammar instead: paths (.a.b, .items[],
# .[0], .["a key"], each optionally with ?), these functions of no argument, select() of a
# path compared with a literal, map() of a path or function, and pipes of up to 8 of them.
_JQ_FUNCTIONS = (
    "keys_unsorted", "keys", "length", "type", "sort", "unique", "reverse", "add", "min",
    "max", "first", "last", "to_entries", "from_entries", "tostring", "tonumber", "tojson",
    "ascii_downcase", "ascii_upcase", "not", "floor",
)  # fmt: skip
_JQ_NAME = "[A-Za-z_][A-Za-z0-9_]{0,63}"
_JQ_STRING = r'"[^"\\\x00-\x1f]{0,64}"'
_JQ_INDEX = r"\[(-?[0-9]{1,9})?\]"
_JQ_KEY = rf"\[{_JQ_STRING}\]"
_JQ_PATH = (
    rf"\.({_JQ_NAME}|{_JQ_INDEX}|{_JQ_KEY})?\??"
    rf"(\.{_JQ_NAME}\??|\.?{_JQ_INDEX}\??|\.?{_JQ_KEY}\??){{0,15}}"
)
_JQ_FUNCTION = "(" + "|".join(_JQ_FUNCTIONS) + ")"
_JQ_LITERAL = rf"(-?[0-9]{{1,15}}(\.[0-9]{{1,15}})?|{_JQ_STRING}|true|false|null)"
_JQ_CONDITION = rf"{_JQ_PATH}( {{0,2}}(==|!=|<=|>=|<|>) {{0,2}}{_JQ_LITERAL})?"
_JQ_TERM = (
    rf"({_JQ_PATH}|{_JQ_FUNCTION}|select\( {{0,2}}{_JQ_CONDITION} {{0,2}}\)"
    rf"|map\( {{0,2}}({_JQ_PATH}|{_JQ_FUNCTION}) {{0,2}}\))"
)
JQ_FILTER = rf"{_JQ_TERM}( {{0,2}}\| {{0,2}}{_JQ_TERM}){{0,7}}"

# bc's language has loops, functions and reads (read()); arithmetic is digits, a point,
# + - * / % ^, parentheses and blanks. A power's exponent is a whole number of at most 3
# digits, raised from a number (not from a parenthesis or another power): 9^9^9 would run
# until the timeout, 2^10 is what a person asks.
ARITHMETIC = r"[0-9.+*/%\x5e() -]{1,200}"  # \x5e: the caret, as the grammar dialect writes it


def _arithmetic_check(value: str) -> str | None:
    if not any(c.isdigit() for c in value):
        return "no number in it"
    for match in re.finditer(r"\^", value):
        before = value[: match.start()].rstrip()
        after = value[match.end() :].lstrip()
        exponent = re.match(r"-?[0-9]{1,3}(?![0-9.])", after)
        if not before or not (before[-1].isdigit() or before[-1] == ".") or exponent is None:
            return "a power is a number raised to a whole number of at most 3 digits"
        rest = after[exponent.end() :].lstrip()
        if rest.startswith("^"):
            return "a power of a power is not computed"
    return None


_SCHEDULE_FIELD = r"[A-Za-z0-9*/,-]+"
_SIGNALS = ("TERM", "KILL", "HUP", "INT", "USR1", "USR2", "STOP", "CONT")


def _signal_normalize(value: str) -> str:
    upper = value.strip().upper()
    return upper.removeprefix("SIG") if upper.removeprefix("SIG") in _SIGNALS else value


def _ext_normalize(value: str) -> str:
    return value.strip().removeprefix("*").removeprefix(".")


def _path_type(name: str, expect: str, check: Callable[[str], str | None]) -> SlotType:
    return SlotType(name, f"{_PRINTABLE}{{1,4096}}", expect, check)


def _integer(name: str, low: int, high: int, expect: str) -> SlotType:
    return SlotType(
        name,
        "[0-9]{1,9}",
        expect,
        _int_range(low, high),
        _int_normalize,
        integer=True,
    )


_ALL = [
    _path_type("dir", "a folder: ~, ~/x, /abs or relative", _path_check),
    _path_type("file", "a file: ~/x, /abs/x or relative", _path_check),
    _path_type("path", "a path: ~/x, /abs/x or relative", _path_check),
    _path_type("output", "a file to write: ~/x, /abs/x or relative", _path_check),
    _path_type(
        "archive",
        "an archive name ending in .tar, .tar.gz, .tgz, .tar.bz2, .tar.xz, .zip or .gz",
        _archive_check,
    ),
    SlotType("glob", "[^\\x00-\\x1f\\x7f/]{1,255}", "a name pattern without '/'", _glob_check),
    SlotType(
        "ext", "[A-Za-z0-9]{1,10}", "an extension such as log or tar", normalize=_ext_normalize
    ),
    SlotType("pattern", f"{_PRINTABLE}{{1,1000}}", "text to search for, one line"),
    SlotType("text", f"{_PRINTABLE}{{0,1000}}", "text, one line"),
    SlotType(
        "name", "[A-Za-z0-9._@+][A-Za-z0-9._@+-]{0,254}", "a name of letters, digits, . _ @ + -"
    ),
    SlotType(
        "word", "[A-Za-z0-9._@+][A-Za-z0-9._@+-]{0,254}", "a word of letters, digits, . _ @ + -"
    ),
    SlotType("user", "[a-z_][a-z0-9_-]{0,31}", "a user name such as alice"),
    SlotType("group", "[a-z_][a-z0-9_-]{0,31}", "a group name such as staff"),
    _integer("count", 1, 999_999_999, "a whole number, 1 or more"),
    _integer("number", 0, 999_999_999, "a whole number, 0 or more"),
    _integer("column", 1, 9999, "a column number, 1 or more"),
    _integer("port", 1, 65535, "a port, 1 to 65535"),
    _integer("pid", 1, 999_999_999, "a process id"),
    _integer("days", 0, 999_999, "a number of days, 0 or more"),
    _integer("minutes", 0, 999_999_999, "a number of minutes, 0 or more"),
    SlotType(
        "size",
        "[0-9]{1,12}[kMG]?",
        "a size such as 500k, 10M or 2G",
        normalize=_size_normalize,
    ),
    SlotType(
        "mode",
        "([0-7]{3,4}|[ugoa]{0,4}[-+=][rwxX]{1,4})",
        "an octal mode such as 644 or a symbolic one such as u+x",
        _mode_check,
    ),
    SlotType(
        "schedule",
        f"(@(hourly|daily|weekly|monthly)|{_SCHEDULE_FIELD}( {_SCHEDULE_FIELD}){{4}})",
        "5 cron fields such as '30 2 * * *' or @daily",
    ),
    SlotType("time", "[0-9]{2}:[0-9]{2}", "a time of day as HH:MM", _time_check),
    SlotType("date", "[0-9]{4}-[0-9]{2}-[0-9]{2}", "a date as YYYY-MM-DD", _date_check),
    SlotType("day", "[0-9]{2}-[0-9]{2}", "a day of any year as MM-DD", _day_check),
    SlotType(
        "zone",
        "[A-Za-z][A-Za-z0-9_+-]{0,29}(/[A-Za-z0-9_+-]{1,30}){0,2}",
        "a time zone such as Europe/Paris or UTC",
    ),
    SlotType("key", "[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}", "a field name of letters, digits, _ . -"),
    SlotType(
        "branch",
        "[A-Za-z0-9_][A-Za-z0-9._/+@-]{0,254}",
        "a git branch name such as main or feature/x",
        _branch_check,
    ),
    SlotType(
        "signal",
        "(" + "|".join(_SIGNALS) + ")",
        "a signal: " + ", ".join(_SIGNALS),
        normalize=_signal_normalize,
    ),  # fmt: skip
    SlotType("choice", f"{_PRINTABLE}{{1,255}}", "one of the slot's choices"),
    SlotType(
        "jq_filter",
        JQ_FILTER,
        "a jq filter of paths, pipes, keys, length, select(.x > 1) or map(.x)",
    ),
    SlotType(
        "arithmetic",
        ARITHMETIC,
        "arithmetic such as (7+5)/4 or 2^10",
        _arithmetic_check,
    ),
]

TYPES: Mapping[str, SlotType] = {t.name: t for t in _ALL}
"""Every slot type by name."""

PATH_TYPES = frozenset({"dir", "file", "path", "output", "archive"})
SINGLE_QUOTE_SAFE = frozenset(
    {"count", "number", "column", "port", "pid", "days", "minutes", "ext", "name", "word"}
    | {"user", "group", "key", "mode", "size", "time", "date", "day", "choice", "glob"}
    | {"signal", "zone"}
)
"""Types whose values may stand inside single quotes in a template."""


def slot_type(name: str) -> SlotType:
    try:
        return TYPES[name]
    except KeyError:
        raise SlotError(
            f"unknown slot type {name!r}", hint="use one of " + ", ".join(sorted(TYPES))
        ) from None
