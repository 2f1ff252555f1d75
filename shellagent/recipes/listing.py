"""Reading the working directory for a task: its listing, and the columns and keys of the
tables it names.

Both are read-only commands run confined (``read_only``): the listing of the working
directory (three levels) and of the folders the task names resolves the names it gives
without a folder; the first lines of each CSV file and the keys of each JSON file it
names fill the key slots (a column "the task says", one holding a value it says, one
holding numbers for a sum). ``read_values`` runs both and builds the ``TaskValues``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from shellagent.errors import ShellagentError
from shellagent.recipes.reading import TaskReading
from shellagent.recipes.values import TaskValues, task_values

__all__ = [
    "ConfinedShell",
    "Fields",
    "Printed",
    "fields_command",
    "listing_command",
    "read_fields",
    "read_only",
    "read_values",
]

_FILENAME = re.compile(r"[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,5}")


def listing_command(reading: TaskReading, limit: int = 3000) -> str:
    """A read-only command that lists the working directory (three levels) and the folders
    the task names, one path a line (folders end in ``/``); a path the task writes from
    the home folder (``~/Documents/notes``) is listed as written, itself only: whether it
    is a folder, a file, or not there."""
    named: list[str] = []
    parents: list[str] = []
    for path in reading.paths:
        if path.startswith("/") and "*" not in path and "?" not in path:
            named.append(path)
            if _FILENAME.search(path.rsplit("/", 1)[-1]):  # a file, or "/etc/cron.daily"
                parents.append(path.rsplit("/", 1)[0] or "/")
    # the named paths first: a large parent (/etc) must not push them past the limit
    roots = list(dict.fromkeys(r for r in [*named, *parents, "."] if r not in ("/", "")))[:7]
    quoted = " ".join(shlex.quote(r) for r in roots)
    kinds = "".join(
        f"{_kind_of(path)}; "
        for path in dict.fromkeys(reading.paths)
        if path.startswith("~/") and path.rstrip("/") != "~" and not set("*?[") & set(path)
    )
    return (
        f"{{ {kinds}find {quoted} -maxdepth 3 \\( -name '.*' ! -name . -prune \\) -o "
        f"\\( -type d -printf '%p/\\n' \\) -o -printf '%p\\n' 2>/dev/null; }} | head -n {limit}"
    )


def _kind_of(path: str) -> str:
    """A command printing ``path`` (``~/…``) as a listing line: with a ``/`` when it is a
    folder, as it is when it is a file, nothing when it is not there."""
    bare = path.rstrip("/")
    where = f'"$HOME"/{shlex.quote(bare[2:])}'
    said = shlex.quote(bare)
    return (
        f"if [ -d {where} ]; then printf '%s/\\n' {said}; "
        f"elif [ -e {where} ]; then printf '%s\\n' {said}; fi"
    )


_TABLES = (".csv", ".tsv", ".json", ".jsonl", ".ndjson")
_FIELDS_MARK = "==> shellagent fields of "  # starts each file's part of the output
# each key of a JSON document as a dotted path (of its items when it is a list of
# records), the type of its value and the value if a short string:
# "meta.year<TAB>number<TAB>", "city<TAB>string<TAB>Berlin"
_JSON_KEYS = (
    '(if type == "array" then .[:50][] else . end) | select(type == "object") | . as $o '
    '| paths(type | . != "object" and . != "array") as $p | ($o | getpath($p)) as $v '
    '| [($p | map(tostring) | join(".")), ($v | type), '
    '(if ($v | type) == "string" then $v[:60] else "" end)] | @tsv'
)
_A_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_ROWS = 50  # the rows of a CSV file read for which columns hold numbers and names


def fields_command(values: TaskValues, limit: int = 3) -> str:
    """A read-only command that prints the first lines of each CSV file and the keys of
    each JSON file ``values`` names (at most ``limit``), for key slots to be chosen from
    what the files have; "" when it names none. Its output is ``read_fields``' input."""
    tables = [f for f in values.files if f.lower().endswith(_TABLES)][:limit]
    keys = shlex.quote(_JSON_KEYS)
    parts = []
    for name in tables:
        path = shlex.quote(name[2:] if name.startswith("~/") else name)
        if name.startswith("~/"):
            path = f'"$HOME"/{path}'
        if name.lower().endswith((".csv", ".tsv")):
            read = f"head -n {_ROWS + 1} -- {path}"
        elif name.lower().endswith(".json"):
            read = f"jq -r {keys} -- {path} | sort -u | head -n 500"
        else:  # one record a line
            read = f"head -n {_ROWS} -- {path} | jq -r {keys} | sort -u | head -n 500"
        parts.append(f"printf '%s%s\\n' {shlex.quote(_FIELDS_MARK)} {shlex.quote(name)}; {read}")
    return "; ".join(f"{{ {p}; }} 2>/dev/null" for p in parts)


@dataclass(frozen=True)
class Fields:
    """What ``read_fields`` found: the columns and key paths of the files, in file order;
    those holding numbers (a CSV column: in every row read); those holding a value the
    task says ("live in Berlin": the column whose cells say Berlin)."""

    names: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    holding: tuple[str, ...] = ()
    held: tuple[str, ...] = ()  # the values said that they hold ("admin"), as the file has them


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


def read_fields(output: str, reading: TaskReading | None = None) -> Fields:
    """The columns and keys in ``fields_command``'s output (see ``Fields``)."""
    found: list[str] = []
    numbers: list[str] = []
    holding: list[str] = []
    held: list[str] = []

    def says(value: str) -> bool:
        return reading is not None and reading.says(value)

    name, header, rows = "", list[str](), list[list[str]]()
    for line in [*output.split("\n"), _FIELDS_MARK]:
        if line.startswith(_FIELDS_MARK):
            found += header
            for i, column in enumerate(header):
                cells = [r[i] for r in rows if i < len(r)]
                if cells and len(cells) == len(rows) and all(map(_A_NUMBER.fullmatch, cells)):
                    numbers.append(column)
                said = [c for c in cells if says(c)]
                if said:
                    holding.append(column)
                    held.extend(said)
            name, header, rows = line[len(_FIELDS_MARK) :], [], []
        elif name.lower().endswith((".csv", ".tsv")) and line.strip():
            cells = [c.strip().strip('"') for c in re.split(r"[,\t;]", line)]
            if header:
                rows.append(cells)
            else:
                header = cells
        elif name and line.strip():
            key, _, rest = line.strip("\r").partition("\t")
            kind, _, value = rest.partition("\t")
            found.append(key)
            if kind == "number":
                numbers.append(key)
            if value and says(value):
                holding.append(key)
                held.append(value)
    kept = _unique([f.strip() for f in found if len(f.strip()) <= 80])
    return Fields(
        kept,
        tuple(n for n in _unique(numbers) if n in kept),
        tuple(h for h in _unique(holding) if h in kept),
        _unique(held),
    )


class Printed(Protocol):
    """What ``read_only`` reads of a command's result."""

    @property
    def output(self) -> str: ...

    @property
    def timed_out(self) -> bool: ...


class ConfinedShell(Protocol):
    """A shell that can run a command confined (``shellagent.sandbox.Shell`` is one)."""

    def run(self, command: str, *, timeout: float | None = ..., confined: bool = ...) -> Printed:
        """Run ``command``; ``confined`` runs it where the kernel refuses every write."""
        ...


def read_only(shell: ConfinedShell, command: str) -> list[str]:
    """The lines ``command`` prints, run confined (it may read, never write); [] when it
    cannot run. Whatever it printed counts: a long listing cut by `head` ends 141
    (SIGPIPE, the shell has pipefail on), one with an unreadable folder ends 1."""
    try:
        result = shell.run(command, timeout=10, confined=True)
    except ShellagentError:
        return []  # no listing: names the task gives without a folder stay as they are
    return [] if result.timed_out else [line for line in result.output.splitlines() if line]


def read_values(reading: TaskReading, read: Callable[[str], list[str]]) -> TaskValues:
    """What the task names, with names resolved against a listing of the working
    directory and the folders it names, and the columns and keys of the CSV and JSON
    files it names; ``read`` runs a read-only command and gives the lines it printed
    (``read_only``)."""
    values = task_values(reading, read(listing_command(reading)))
    command = fields_command(values)
    if not command:
        return values
    found = read_fields("\n".join(read(command)), reading)
    return replace(
        values,
        fields=found.names,
        number_fields=found.numbers,
        holding_fields=found.holding,
        held_values=found.held,
    )
