"""One reading of a task, made once (``read_task``): what it asks and what it names.

Ranking (the request and its marked fields), composing (the act, the pick, the files the
act is on), shape scoring and slot filling all take the ``TaskReading``; none of them reads
the task's text again. What exists in the working directory is a second value built from
the reading and a listing (``shellagent.recipes.values.task_values``).

The reading holds, for the request (the sentence that asks, after any context):

- what is asked: ``kind`` (an action, a question, or cannot tell), the ``act`` on files
  and whether it is only said ``negated`` ("I don't want to unpack it"), the ``ending``
  a selection may be composed with, the ``pick`` (the one largest, newest … file, or a
  count of files), a ``superlative``, a ``count`` asked, ``one`` thing or several;
- quantities with their direction (``ages``, ``size_limits``: ``>30d``, ``<1k``);
- quoted text and what it is (``look_for``, ``quoted_names``);
- the paths, files and folders named, kinds of file and every extension a file of them
  may have (``kind_exts``), columns and keys said of the tables named (``fields``,
  ``tables``);
- where an answer is saved (``saving``, ``output``) and where things go (``dest``, and
  whether that is a folder);
- and the values a slot may take from the words alone (numbers, sizes, days, times …).

The words are the lexicon's (``shellagent.recipes.lexicon``); the request's clauses are
read by ``shellagent.recipes.asking``, amounts by ``shellagent.recipes.amounts``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import PurePosixPath

from shellagent.jsontypes import JsonValue
from shellagent.recipes import amounts, asking
from shellagent.recipes.amounts import Quantity
from shellagent.recipes.lexicon import Lexicon, lexicon

__all__ = [
    "SIGNALS",
    "Quoted",
    "TaskReading",
    "looks_like_file_name",
    "looks_like_path",
    "quoted_spans",
    "read_task",
]

SIGNALS = ("TERM", "KILL", "HUP", "INT", "USR1", "USR2", "STOP", "CONT")

# The shapes of things in a task's text (syntax, not English: the lexicon holds words).
_QUOTED = re.compile(r"(?<![\w])'([^'\n]{1,120})'(?![\w])|\"([^\"\n]{1,120})\"|`([^`\n]{1,120})`")
_PATH = re.compile(r"(?<![\w.])(?:~/|~(?![\w])|\.{1,2}/|/)[\w.@%+~*?/-]*")
_RELPATH = re.compile(r"(?<![\w/~.-])[\w.-]+/[\w.@+*/-]*[\w*]")
_FOLDER = re.compile(r"(?<![\w/~.-])[A-Za-z_][\w.-]*/(?![\w/])")  # "a new folder old/"
_FILENAME = re.compile(r"(?<![\w/~.-])[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,5}(?![\w])")
_DOT_EXT = re.compile(r"(?<![\w/])\.([A-Za-z][A-Za-z0-9]{0,9})\b")
_PROSE_DOT_EXT = re.compile(r"(?<![\w/.-])\*?\.([A-Za-z][A-Za-z0-9]{0,9})\b")
# "how many 404s": a plural number is a number too
_NUMBER = re.compile(r"(?<![\w.:/-])(\d{1,7})(?!(?!s\b)[\w:/]|\.\d|-\d)")
_TIME = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)\b")
_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MODE = re.compile(r"(?<![\w.])([0-7]{3,4})(?![\w.])")
_CAPS = re.compile(r"\b[A-Z][A-Z0-9_]{1,30}\b")
_CAPITAL = re.compile(r"(?<=[a-z,] )[A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})?")
_VERSION = re.compile(r"\d+(\.\d+)+")  # 2.3.1 is no file name
# a file name with spaces, as people quote one: 'report final.docx'
_SPACED_NAME = re.compile(r"[\w@+(-][\w .@+()-]*\.[A-Za-z][A-Za-z0-9]{0,5}")


@dataclass(frozen=True)
class Quoted:
    """A quoted string of the task: where it is, what it says (as quoted), and what it is:
    ``look_for`` (text the request looks for or uses), ``name`` (a thing's name: "the 'x'
    service", "a folder named 'old'"), ``path`` (a path or file name), ``pattern`` (how
    names end or start, an extension), or ``context`` (quoted before the request)."""

    start: int
    end: int
    text: str
    role: str


@dataclass(frozen=True)
class TaskReading:
    """A task as the recipe step reads it, once (see the module's docstring)."""

    text: str
    request: str
    context: str = ""
    kind: str = ""
    act: str = ""
    negated: bool = False
    # the properties of a selection the files must not have ("which scripts can't be
    # executed": "permissions"; lexicon selections.*: "empty", "permissions", "hidden")
    unwanted: tuple[str, ...] = ()
    ending: str = ""
    pick: str = ""
    one_asked: bool = False  # the one most or least of something ("which file is largest")
    one: bool | None = None  # about one thing (a named file, the largest) or several
    superlative: str = ""
    count: bool = False
    # "size": the space one thing takes, in all ("how much space does ~/Music take");
    # "sum": numbers added up ("what do the amounts add up to"), not a count of lines
    total: str = ""
    ranking_end: str = ""  # "head" or "tail": a ranking's end the task asks for
    ranked: int = 0  # how many of a ranking are asked for ("the top 3", "the 5 largest")
    quoted: tuple[Quoted, ...] = ()
    paths: tuple[str, ...] = ()  # every path and file name said, in order
    files: tuple[str, ...] = ()  # those that are files
    dirs: tuple[str, ...] = ()  # the folders named (a path, "the reports folder", Desktop)
    joined: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    plain: tuple[str, ...] = ()  # words that may name a file or folder ("Downloads")
    numbers: tuple[int, ...] = ()
    kinds: tuple[str, ...] = ()  # kinds of file asked about in prose ("PDFs": pdf)
    unmistakable_kinds: tuple[str, ...] = ()  # of them, those whose word names nothing else
    # kinds said as what a packing act makes ("as a zip", "into .gz files"): an archive's
    # kind, not files to select
    made_kinds: tuple[str, ...] = ()
    # every extension a file of the kinds said may have ("the newest photo": jpg, png …),
    # a folder named by a kind's word aside ("my Documents folder")
    kind_exts: tuple[str, ...] = ()
    # sorts of file of many extensions ("photos": pictures), when no extension is said
    categories: tuple[str, ...] = ()
    quoted_globs: tuple[str, ...] = ()  # "ending in '_copy.txt'": *_copy.txt
    sizes: tuple[str, ...] = ()  # as a size slot takes them: 100M
    days: tuple[int, ...] = ()
    minutes: tuple[int, ...] = ()
    ages: tuple[Quantity, ...] = ()
    size_limits: tuple[Quantity, ...] = ()
    times: tuple[str, ...] = ()
    dates: tuple[str, ...] = ()
    days_of_year: tuple[str, ...] = ()  # "9 October" said without a year: ("10-09",)
    modes: tuple[str, ...] = ()
    words: tuple[str, ...] = ()  # upper-case and capitalised words
    names: tuple[str, ...] = ()  # after "named", "user", "branch", "column" …
    signals: tuple[str, ...] = ()
    look_for: tuple[str, ...] = ()
    mentioned: tuple[str, ...] = ()  # unquoted words to look for ("lines that mention timeout")
    # what a text speaks of, said after "mention", "about", "refer to" ("notes that mention
    # the dentist"): a subject, not a file's name
    spoken_of: tuple[str, ...] = ()
    events: tuple[str, ...] = ()  # "when did the backup last fail": ("fail",)
    excluded: tuple[str, ...] = ()  # "apart from main": ("main",)
    one_of_kind: tuple[str, ...] = ()  # "the .deb installer": ("deb",)
    quoted_names: tuple[str, ...] = ()
    saving: str = ""  # the saving clause ("save the list to /tmp/x")
    output: str = ""  # the file a result is saved in
    append: bool = False
    dest: str = ""
    dest_folder: bool | None = None
    dest_folder_said: bool = False  # the words say so: a slash, "folder", a home's folder
    fields: tuple[str, ...] = ()  # columns and keys said as such ("the email column")
    tables: tuple[str, ...] = ()  # the CSV, TSV and JSON files named
    # What the files an ending or a pick acts on are, asked as a selection is ("find all
    # files older than 30 days"), and the part of it that asks; the same with the pick's
    # words taken out ("find .log file"). "" when the task asks for neither.
    selection: str = ""
    selection_request: str = ""
    pick_selection: str = ""
    pick_selection_request: str = ""
    named_words: frozenset[str] = frozenset()  # words an answer may mention
    names_only: bool = False  # the files' names asked, not their paths ("list their names")
    # each file's size asked beside it ("its name and size", "with their sizes")
    sizes_asked: bool = False
    # only the folder itself is meant, not its subfolders ("directly in", "top level")
    top_level: bool = False
    # several files measured one by one ("the lines of every .log file"), no sum said
    each_file: bool = False
    # files called old with no age said ("clean up old files"): an age limit, defaulted
    old_unsaid: bool = False
    # what the task speaks of when it says only one of the two: "files" or "folders"
    objects: str = ""

    def summary(self) -> dict[str, JsonValue]:
        """The reading in plain values, by the names the reading test set uses
        (``tests/data/task-readings.md``; ``bench/recipes_bench.py reading`` prints it)."""
        return {
            "request": self.request,
            "kind": self.kind,
            "act": self.act,
            "negated": self.negated,
            "count": self.count,
            "superlative": self.superlative,
            "one": self.one,
            "ages": [str(q) for q in self.ages],
            "sizes": [str(q) for q in self.size_limits],
            "look_for": list(self.look_for),
            "quoted_names": list(self.quoted_names),
            "output": self.output,
            "dest": self.dest,
            "dest_folder": self.dest_folder,
            "files": list(self.files),
            "dirs": list(self.dirs),
            "kinds": list(self.kinds),
            "fields": list(self.fields),
            "tables": list(self.tables),
        }

    def says(self, value: str) -> bool:
        """Whether the task says ``value`` as words of its own (not a number, more than
        two characters): "live in Berlin" says ``Berlin``."""
        value = value.strip().lower()
        return (
            len(value) > 2
            and not re.fullmatch(r"-?\d+(?:\.\d+)?", value)
            and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", self.text.lower()) is not None
        )

    def goes_to(self, value: str) -> bool:
        """Whether the task names ``value`` (or its last part) as where something goes
        ("move them to /srv/old")."""
        goes = lexicon()["destinations.goes_to"].regex
        for name in (value, value.rsplit("/", 1)[-1]):
            at = self.text.find(name)
            if name and at >= 0:
                return bool(goes.search(self.text[max(0, at - 40) : at]))
        return False

    def said_fields(self, fields: Sequence[str]) -> tuple[str, ...]:
        """The columns and keys among ``fields`` whose name (or its last part:
        "server.port") the task says as a word of its own ("What version is …":
        ``version``)."""
        words = {w.lower() for w in re.findall(r"[A-Za-z][\w-]*", self.text)}
        return tuple(
            f
            for f in fields
            if len(last := f.rsplit(".", 1)[-1]) > 2 and _said_as(last.lower(), words)
        )

    def fields_first(self, fields: Sequence[str], holding: Sequence[str] = ()) -> list[str]:
        """``fields`` with those whose name (or its last part) the task says first, in the
        order it says them; then those ``holding`` a value it says; the rest in order."""
        words = [w.lower() for w in re.findall(r"[\w-]+", self.text)]

        def said(field: str) -> tuple[int, bool]:
            last = field.rsplit(".", 1)[-1].lower()
            at = [i for i, w in enumerate(words) if _said_as(last, {w})]
            return (at[0] if at else len(words), field not in holding)

        return sorted(fields, key=said)

    def marked(self, fields: Sequence[str], mark: str) -> tuple[str, str]:
        """The task and its request with each of ``fields`` it says followed by ``mark``
        ("What version qfield is …"), as the ranker's phrasings mark a field; as they are
        when it says none."""
        said = {f.rsplit(".", 1)[-1].lower() for f in self.said_fields(fields)}

        def mark_in(text: str) -> str:
            return re.sub(
                r"[A-Za-z][\w-]*",
                lambda m: (
                    f"{m[0]} {mark}" if any(_said_as(s, {m[0].lower()}) for s in said) else m[0]
                ),
                text,
            )

        if not said:
            return self.text, self.request
        return mark_in(self.text), mark_in(self.request)


def _said_as(name: str, words: set[str]) -> bool:
    """Whether ``words`` say ``name`` (lower case), or its plural ("the prices": price)."""
    return name in words or f"{name}s" in words or f"{name}es" in words


def quoted_spans(text: str) -> list[tuple[int, int, str]]:
    """Each quoted string of ``text`` ('x', "x" or `x`): its start, end and inside."""
    return [
        (m.start(), m.end(), next(g for g in m.groups() if g is not None))
        for m in _QUOTED.finditer(text)
    ]


def looks_like_file_name(text: str) -> bool:
    """Whether ``text`` is a file name with an extension ("report.csv", "report
    final.docx")."""
    return bool(_FILENAME.fullmatch(text) or _spaced_name(text))


def _spaced_name(text: str) -> bool:
    """Whether ``text`` is a file name with spaces ('report final.docx'), not a phrase
    that ends in one ('error in main.py': a little word says it is a phrase)."""
    if " " not in text or not _SPACED_NAME.fullmatch(text):
        return False
    little = lexicon()["files.stop"]
    return not any(little.says(word) for word in text.rsplit(".", 1)[0].split())


def looks_like_path(text: str) -> bool:
    """Whether ``text`` is a path or a file name."""
    return bool(text) and (
        text.startswith(("/", "~", "./", "../")) or "/" in text or looks_like_file_name(text)
    )


def _unique(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


def explicit_paths(task: str) -> list[str]:
    """Every path and file name ``task`` says, quoted or not, in the order said."""
    found: list[tuple[int, str]] = []
    for m in _QUOTED.finditer(task):
        inner = next(g for g in m.groups() if g is not None).strip()
        # spaces are part of a quoted name ('report final.docx', '/srv/My Files'), not
        # of a quoted phrase that holds a path ('disk full on /var')
        spaced = inner.startswith(("/", "~/", "./")) or _spaced_name(inner)
        if looks_like_path(inner) and (" " not in inner or spaced):
            found.append((m.start(), inner))
    stripped = _QUOTED.sub(lambda m: " " * len(m.group(0)), task)
    for at, spaced in _spaced_paths(stripped):
        found.append((at, spaced))
        stripped = stripped[:at] + " " * len(spaced) + stripped[at + len(spaced) :]
    for m in _PATH.finditer(stripped):
        text = m.group(0).rstrip(".,:;!?)")
        if len(text) > 1 or text == "~":
            found.append((m.start(), text))
    for m in _RELPATH.finditer(stripped):
        found.append((m.start(), m.group(0).rstrip(".,:;")))
    for m in _FOLDER.finditer(stripped):
        found.append((m.start(), m.group(0)))
    for m in _FILENAME.finditer(stripped):
        if not _VERSION.fullmatch(m.group(0)):
            found.append((m.start(), m.group(0)))
    found.sort()
    return [p for _, p in found]


# the words right after a path that may end its file's name: "~/Documents/report
# final.docx" (a name with spaces, unquoted), at most three words
_NAME_GOES_ON = re.compile(r"(?: [\w@+()-]+){0,2} [\w@+()-]+\.[A-Za-z][A-Za-z0-9]{0,5}(?![\w/])")


def _spaced_paths(text: str) -> list[tuple[int, str]]:
    """Unquoted paths whose file name has spaces, with where each starts: a folder path
    (its last part has no extension) followed right away by words ending in a file name,
    none of them a little word ("~/Documents/report final.docx", not "~/notes and todo.txt")."""
    found = []
    clause = lexicon()["files.clause"]
    for m in _PATH.finditer(text):
        path = m.group(0)
        head, _, last = path.rpartition("/")
        if not head or not last or "." in last or path.endswith("/"):
            continue
        rest = _NAME_GOES_ON.match(text, m.end())
        if (
            rest
            and _spaced_name(last + rest.group(0))
            and not any(clause.says(w) for w in rest.group(0).split()[:-1])
        ):
            found.append((m.start(), path + rest.group(0)))
    return found


def _is_file_shaped(path: str) -> bool:
    return looks_like_file_name(path.rstrip("/").rsplit("/", 1)[-1]) and not path.endswith("/")


def _joined(task: str, name: str, lx: Lexicon) -> tuple[str, ...]:
    """``name`` put in the folder the task names right after it ("x.txt in /tmp", "… and
    place it in /tmp"; "in the same directory": the last folder named before it)."""
    at = task.find(name)
    match = lx["destinations.in_dir"].regex.match(task[at + len(name) :]) if at >= 0 else None
    if match is None:
        return ()
    if match.group("same"):
        before = [p for p in explicit_paths(task[:at]) if p.startswith(("/", "~"))]
        folders = [p for p in before if not _FILENAME.fullmatch(p.rstrip("/").rsplit("/", 1)[-1])]
        if not folders:
            return ()
        folder = folders[-1].rstrip("/") or "/"
    else:
        folder = match.group("folder").rstrip("/.,") or "/"
    if _FILENAME.fullmatch(folder.rsplit("/", 1)[-1]):
        return ()  # "config.php inside site.tar.gz": a file in a file, not a path
    return (f"{folder}/{name}" if folder != "/" else f"/{name}",)


def _quoted(task: str, request: str, lx: Lexicon, taken: set[str]) -> tuple[Quoted, ...]:
    """Each quoted string and what it is (see ``Quoted``); what the request quotes to look
    for is not a path, a file name, a pattern of names in ``taken``, nor a thing's name."""
    offset = len(task) - len(request) if request != task else 0
    things = re.compile(rf"^['\"`]?\s+{lx['quoted.things'].alternation}\b", re.I)
    named = re.compile(
        rf"\b(?:{lx['quoted.named'].alternation}|{lx['quoted.things'].alternation})\s+['\"`]?$",
        re.I,
    )
    found = []
    for start, end, inside in quoted_spans(task):
        text = inside.strip()
        if not text:
            continue
        if "/" in text or looks_like_file_name(text):
            role = "path"
        elif {text, f"*{text}", f"{text}*"} & taken:
            role = "pattern"
        elif things.match(task[end:]) or named.search(
            task[max(0, offset * (start >= offset)) : start]
        ):
            role = "name"
        else:
            role = "look_for" if start >= offset else "context"
        found.append(Quoted(start, end, inside, role))
    return tuple(found)


def _quoted_globs(task: str, lx: Lexicon) -> list[str]:
    """Name patterns the task quotes: 'x*', or a word after "ending in" / "starting with"."""
    quoted = [inside for _, _, inside in quoted_spans(task)]
    globs = [q for q in quoted if any(c in q for c in "*?") and "/" not in q]
    suffix, prefix = lx["quoted.suffix"].regex, lx["quoted.prefix"].regex
    for q in quoted:
        if "/" in q or " " in q or any(c in q for c in "*?"):
            continue
        before = task[: task.find(q)].lower()[-30:]
        if suffix.search(before):
            globs.append(f"*{q}")
        elif prefix.search(before):
            globs.append(f"{q}*")
    return globs


def _unmade(task: str, act: str, lx: Lexicon) -> str:
    """``task`` without what a packing or compressing act makes ("compress the logs over
    100MB into individual '.gz' files": the logs are selected, the .gz files made), so
    that the kinds said there are not read as the files to act on."""
    if act not in ("gzip", "archive"):
        return task
    return lx["kinds.made"].regex.sub(" ", task)


def _made(task: str, act: str, lx: Lexicon) -> list[str]:
    """What the task quotes of what a packing or compressing act makes ("into '.tar.gz'
    format"): no text to look for."""
    if act not in ("gzip", "archive"):
        return []
    spans = [(m.start(), m.end()) for m in lx["kinds.made"].finditer(task)]
    return [q for start, end, q in quoted_spans(task) if any(a <= start < b for a, b in spans)]


def _kinds(task: str, lx: Lexicon) -> tuple[list[str], list[str]]:
    """The kinds of file the task's prose says ("PDFs", ".log files"), and those of them
    that are unmistakable (a recipe that cannot be told the kind does not answer)."""
    said = [m.group(1).lower() for m in _DOT_EXT.finditer(task)]
    words = lx["kinds.words"]
    prose = [w.lower() for w in re.findall(r"[\w-]+", _PATH.sub(" ", task))]
    said += [v for w in prose if (v := words.value(w))]
    strict_prose = re.sub(r"\S*[/~]\S*", " ", task)
    sure = lx["kinds.unmistakable"]
    strict = [m.group(1).lower() for m in _PROSE_DOT_EXT.finditer(strict_prose)]
    strict += [
        v
        for w in re.findall(r"[a-z0-9]+", strict_prose.lower())
        if (v := words.value(w)) and sure.says(v)
    ]
    return said, list(dict.fromkeys(strict))


def _kind_exts(task: str, dirs: Sequence[str], categories: Sequence[str], lx: Lexicon) -> list[str]:
    """Every extension a file of the kinds the prose says may have: a sort's extensions
    ("photos": the lexicon's ``kinds.pictures``, as the recipes select them), a kind's word
    or extension and its family ("tarballs": tar, gz …); a word that names a folder ("my
    Documents folder", "~/Music") is no kind."""
    folders = {d for d in dirs if "/" not in d and not d.startswith("~")}  # said as words
    families, words = lx["kinds.families"], lx["kinds.words"]
    prose = _FILENAME.sub(" ", _PATH.sub(" ", task))  # "sales.csv" says no kind
    found: list[str] = [ext for sort in categories for ext in lx[f"kinds.{sort}"].words]
    for word in re.findall(r"[\w-]+", prose):
        if word in folders:
            continue
        family = families.value(word)
        single = words.value(word)
        found += family.split() if family else [single] if single else []
    for m in _DOT_EXT.finditer(prose):
        ext = m.group(1).lower()
        found += (families.value(ext) or ext).split()
    return found


def _total(request: str, count: bool, lx: Lexicon) -> str:
    """What total the request asks: "size" (the space a thing takes, in all; not the space
    each folder takes), "sum" (numbers added up; a sum of lines or rows is a count, and a
    count asked is no sum), or ""."""
    if lx["totals.size"].says(request):
        return "" if lx["totals.each"].says(request) else "size"
    if not count and lx["totals.sum"].says(request) and not lx["totals.counted"].says(request):
        return "sum"
    return ""


def _ranked(request: str, lx: Lexicon) -> int:
    """How many of a ranking the request asks for ("the top 3 IPs", "which five files are
    largest"); 0 when it says no number so, and for a count asked ("how many")."""
    if lx["superlatives.count"].says(request):
        return 0
    hit = lx["superlatives.ranked"].search(request)
    if hit is None:
        return 0
    amount = hit.group("amount")
    said = amount if amount.isdigit() else lx["quantities.numbers"].value(amount)
    return int(said) if said else 0


def _categories(task: str, kinds: Sequence[str], files: Sequence[str], lx: Lexicon) -> list[str]:
    """The sorts of file of many extensions the task asks about ("how many photos":
    ``pictures``), none when it names an extension ("the .jpg photos" are jpgs alone); a
    home's folder said by name ("in my Documents") is a place, not a sort of file, and
    the name of a file it names is what that file holds ("the films in films.json")."""
    if kinds:
        return []
    said = lx["kinds.categories"]
    home = lx["destinations.known_folders"].regex
    stems = {f.rsplit("/", 1)[-1].split(".", 1)[0].lower() for f in files}
    return [
        category
        for m in said.finditer(task)
        if not home.fullmatch(m.group(0))
        and said.word(m).lower() not in stems
        and (category := said.value(said.word(m)))
    ]


def _fields(text: str, lx: Lexicon) -> list[str]:
    """Columns and keys said as such: "the email column", "the 'score' field", "key
    version"."""
    said = lx["quoted.field"].alternation
    little = lx["files.stop"]
    found: list[tuple[int, str]] = []
    for m in re.finditer(rf"['\"`]?([A-Za-z_][\w.-]*)['\"`]?\s+{said}\b", text, re.I):
        found.append((m.start(1), m.group(1)))
    for m in re.finditer(rf"\b{said}\s+['\"`]?([A-Za-z_][\w.-]*)", text, re.I):
        found.append((m.start(1), m.group(1)))
    never = {"this", "that", "which", "each", "every", "its", "their", "from", "one", "new"}
    return [
        w
        for _, w in sorted(found)
        if not little.says(w) and w.lower() not in never and not lx["quoted.field"].says(w)
    ]


def _dirs(task: str, paths: Sequence[str], lx: Lexicon) -> list[str]:
    """The folders named: paths that are no files, names said as folders ("the reports
    folder", "a folder named old"), the folders every home has (Desktop), the home
    ("in my home": ``~``), and a plain name after "in" or "under" ("the CSVs in exports")."""
    found: list[tuple[int, str]] = []
    for path in paths:
        if not _is_file_shaped(path) and not path.rsplit("/", 1)[-1].startswith("."):
            found.append((task.find(path), path.rstrip("/") if path not in ("/", "~/") else path))
    folder = lx["destinations.folder_words"].alternation
    little = lx["files.stop"]
    never = {"new", "this", "that", "same", "one", "each", "every", "current", "whole", "parent"}
    # "the reports folder", not "the empty folders"
    for m in re.finditer(rf"\b([A-Za-z_][\w.-]*)\s+{folder}(?<!s)\b", task):
        word = m.group(1)
        if not little.says(word) and word.lower() not in never:
            found.append((m.start(1), word))
    for m in re.finditer(rf"\b{folder}\s+(?:named|called)\s+['\"`]?([\w.-]+)", task, re.I):
        found.append((m.start(1), m.group(1)))
    for m in lx["destinations.known_folders"].finditer(task):
        if (
            task[max(0, m.start() - 2) : m.start()] != "~/"
            and task[m.start() - 1 : m.start()] != "/"
        ):
            found.append((m.start(), m.group(0)))
    for m in lx["destinations.home"].finditer(task):
        found.append((m.start(), "~"))
    plain = re.compile(
        r"\b(?:in|under|inside)\s+([a-z][\w-]{2,})(?=\s*$|[,.?!](?!\w)|\s+(?:and|that|which|are|is|"
        r"into|to|with|were|was|have|has|older|newer|larger|smaller|bigger)\b)"
    )
    everyday = lx["files.not_folders"]
    for m in plain.finditer(task):
        word = m.group(1)
        if not little.says(word) and not everyday.says(word) and not _amount_word(word, lx):
            found.append((m.start(1), word))
    kept: list[str] = []
    for _, name in sorted(found):
        if name not in kept and not any(k.endswith("/" + name) for k in kept):
            kept.append(name)
    return kept


def _amount_word(word: str, lx: Lexicon) -> bool:
    return any(
        lx[name].value(word) is not None or (lx[name].words and lx[name].says(word))
        for name in ("quantities.time_units", "quantities.spans", "quantities.numbers")
    )


def _one(
    request: str, files: Sequence[str], superlative: bool, one_asked: bool, lx: Lexicon
) -> bool | None:
    """Whether the request is about one thing: the one its superlative asks for, one file
    it names, or several ("the files", "all PDFs", two files named); None when it does not
    say."""
    if superlative:
        return one_asked and not lx["superlatives.counted"].says(request)
    if len(files) == 1:
        return True
    if len(files) > 1:
        return False
    prose = _PATH.sub(" ", request)
    folder = lx["destinations.folder_words"].alternation
    kinds = [w for w in lx["kinds.words"].values if w.endswith("s")]
    several = re.compile(
        rf"(?<![\w'-])(?:{lx['files.several'].alternation}|{'|'.join(kinds)})(?![\w'-])"
        rf"(?!\s+{folder}\b)",
        re.I,
    )
    return False if several.search(prose) else None


def read_task(text: str, *, today: date | None = None) -> TaskReading:
    """The reading of ``text`` (``today``: what "since Monday" counts from)."""
    lx = lexicon()
    request = asking.request_span(text, lx)
    context = text[: len(text) - len(request)] if request != text else ""
    paths = _unique(explicit_paths(text))
    shaped_files = [p for p in paths if _is_file_shaped(p)]
    files = [p for p in paths if _is_file_shaped(p) or p.rsplit("/", 1)[-1].startswith(".")]
    joined = {
        p: j
        for p in shaped_files
        if "/" not in p and not p.startswith("~") and (j := _joined(text, p, lx))
    }
    ending, act, negated = asking.ending_and_act(text, lx)
    prose = _unmade(text, act, lx)
    kinds, unmistakable = _kinds(prose, lx)
    made_kinds = [k for k in _kinds(text, lx)[0] if k not in kinds] if prose != text else []
    one_asked = asking.one_asked(text, lx)
    pick = asking.pick_of(text, one_asked, lx)
    # a day said with its month ("9 October 2024") is a date, not numbers
    undated = lx["quantities.day_said"].regex.sub(" ", _QUOTED.sub(" ", text))
    numbers = [int(m.group(1)) for m in _NUMBER.finditer(undated)]
    numbers += amounts.number_words(text, lx)
    if not numbers and (one_asked or lx["quantities.one_line"].says(text)):
        # "which file is the largest?", "what does the first line say": a count of one
        numbers.append(1)
    spans = amounts.durations(text, lx, today)
    quoted_globs = _quoted_globs(text, lx)
    file_exts = [PurePosixPath(p).suffix.lstrip(".").lower() for p in shaped_files]
    taken = {*quoted_globs, *kinds, *(f".{k}" for k in kinds), *file_exts, *_made(text, act, lx)}
    taken |= {f"*.{k}" for k in [*kinds, *file_exts]} | {f".{e}" for e in file_exts}
    quoted = _quoted(text, request, lx, taken)
    saving = asking.saving_clause(request, lx)
    ages = amounts.ages(text, lx, today)
    said = amounts.days_said(text, lx)
    size_limits = amounts.size_limits(text, lx)
    act_at = _act_at(request, act, lx)
    dest, folder, place = asking.destination(request, act_at, lx) if act_at >= 0 else ("", None, "")
    output = ""
    if act in ("archive", "concat") and dest:
        output, dest, folder = (dest if _is_file_shaped(dest) else ""), "", None
    elif act not in ("move", "copy", "rename", "extract"):
        dest, folder = "", None
    # a folder the words say is one for sure ("a new folder old/", "the Pictures folder",
    # "~/Desktop"); one guessed from the act is not ("copy it to /tmp/latest_plugin" is
    # as often the copy's new name)
    said_folder = bool(folder) or (bool(dest) and _home_folder(dest, lx))
    if dest and folder is None:
        folder = _dest_is_folder(request, dest, act, place, lx)
    if saving and not output:
        output = next((p for p in explicit_paths(saving) if _is_file_shaped(p)), "")
    superlative = asking.superlative_of(text, lx)
    request_files = [f for f in files if f in request and f not in (output, dest)]
    words_caps = [
        w
        for w in _CAPS.findall(text)
        if w not in {"I", "A", "OK"} and lx["kinds.words"].value(w) is None
    ]
    tables = [f for f in files if f.rsplit(".", 1)[-1].lower() in lx["kinds.tables"].words]
    common = lx["files.common"]
    dirs = _dirs(text, paths, lx)
    count = lx["superlatives.count"].says(request)
    selection = asking.selection_text(text, request, ending, "", lx) if ending or pick else ""
    pick_selection = asking.selection_text(text, request, ending, pick, lx) if pick else ""
    return TaskReading(
        text=text,
        request=request,
        context=context,
        kind=asking.kind_of(text, lx),
        act=act,
        negated=negated,
        unwanted=asking.unwanted(request, lx),
        ending=ending,
        pick=pick,
        one_asked=one_asked,
        one=_one(request, request_files, lx["superlatives.any"].says(text), one_asked, lx),
        superlative=superlative,
        count=count,
        total=_total(request, count, lx),
        ranking_end=asking.ranking_end(text, one_asked, lx),
        ranked=_ranked(request, lx),
        quoted=quoted,
        paths=paths,
        files=_unique(files),
        dirs=tuple(dirs),
        joined=joined,
        plain=tuple(
            w for w in re.findall(r"[A-Za-z][\w.-]{2,}", text) if not lx["files.stop"].says(w)
        )
        # "the last thing I downloaded": the Downloads folder, if there is one
        + (("Downloads",) if lx["files.downloaded"].says(text) else ()),
        numbers=tuple(dict.fromkeys(numbers)),
        kinds=_unique(kinds),
        unmistakable_kinds=tuple(unmistakable),
        made_kinds=_unique(made_kinds),
        kind_exts=_unique(_kind_exts(prose, dirs, _categories(text, kinds, files, lx), lx)),
        categories=_unique(_categories(text, kinds, files, lx)),
        quoted_globs=_unique(quoted_globs),
        sizes=_unique([f"{amount}{unit}" for amount, unit, _, _ in amounts.sizes(text, lx)]),
        days=tuple(dict.fromkeys(max(1, round(m / 1440)) for m, _ in spans)),
        minutes=tuple(dict.fromkeys(max(1, m) for m, _ in spans)),
        ages=tuple(ages),
        size_limits=tuple(size_limits),
        times=_unique(
            [f"{int(h):02d}:{m}" for h, m in _TIME.findall(text)]
            + [v for w in re.findall(r"\w+", text) if (v := lx["quantities.clock"].value(w))]
        ),
        dates=_unique(
            ["-".join(d) for d in _DATE.findall(text)] + [d for d in said if d[0] != "-"]
        ),
        days_of_year=_unique([d[2:] for d in said if d[0] == "-"]),
        modes=_unique(_MODE.findall(text) if lx["quantities.mode_words"].says(text) else []),
        words=_unique([*words_caps, *_CAPITAL.findall(text)]),
        names=_unique([m.group(1) for m in lx["quoted.name_after"].finditer(text)]),
        signals=tuple(s for s in SIGNALS if re.search(rf"\b(SIG)?{s}\b", text)),
        look_for=_unique([q.text.strip() for q in quoted if q.role == "look_for"]),
        mentioned=_unique(
            [m.group(1).rstrip(".") for m in lx["quoted.mention"].finditer(_QUOTED.sub(" ", text))]
        ),
        spoken_of=_unique([m.group(1) for m in lx["quoted.spoken_of"].finditer(text)]),
        events=asking.events(request, lx),
        excluded=_unique([m.group(1).rstrip(".") for m in lx["quoted.excluded"].finditer(request)]),
        one_of_kind=_unique([m.group(1).lower() for m in lx["files.one_of_kind"].finditer(text)]),
        quoted_names=_unique([q.text.strip() for q in quoted if q.role == "name"]),
        saving=saving,
        output=output,
        append=bool(saving) and lx["saving.append"].says(saving),
        dest=dest,
        dest_folder=folder if dest else None,
        dest_folder_said=said_folder,
        fields=_unique(_fields(request, lx)),
        tables=_unique(tables),
        selection=selection,
        selection_request=asking.request_span(selection, lx) if selection else "",
        pick_selection=pick_selection,
        pick_selection_request=asking.request_span(pick_selection, lx) if pick_selection else "",
        named_words=frozenset(w.lower() for w in re.findall(r"[A-Za-z0-9_][\w.-]{2,}", text))
        - set(common.words),
        # "its name and size" asks for more than names
        names_only=lx["requests.names_only"].says(request)
        and not re.search(r"\bpaths?\b", request, re.I)
        and not lx["requests.sizes_asked"].says(request),
        sizes_asked=lx["requests.sizes_asked"].says(request),
        top_level=lx["files.top_level"].says(request),
        each_file=lx["totals.each_file"].says(request) and not lx["totals.sum"].says(request),
        old_unsaid=not ages and lx["quantities.old"].says(request),
        objects=asking.objects_said(text, lx),
    )


def _act_at(request: str, act: str, lx: Lexicon) -> int:
    """Where the request says its act (-1: it does not)."""
    entries = [entry for name, entry in asking.ACT_ORDER if name == act]
    for entry in entries:
        said = [i for i in asking.imperatives(request, lx[entry].source_pattern, lx)]
        if said:
            return said[0].at
    return -1


def _home_folder(dest: str, lx: Lexicon) -> bool:
    """Whether ``dest`` is the home or one of the folders every home has (Desktop …)."""
    last = dest.rstrip("/").rsplit("/", 1)[-1]
    return dest in ("~", "/") or bool(lx["destinations.known_folders"].regex.fullmatch(last))


def _dest_is_folder(request: str, dest: str, act: str, place: str, lx: Lexicon) -> bool:
    """Whether a destination the words do not call a folder is one: a home's folder or
    the home is; a name with an extension is a file; what a thing is renamed or copied
    "as" is what the thing is; anything else things go "to" or "into" is a folder."""
    last = dest.rstrip("/").rsplit("/", 1)[-1]
    if _home_folder(dest, lx):
        return True
    if _FILENAME.fullmatch(last):
        return False
    if place == "as" or act == "rename":
        before = request[: request.find(dest)] if dest in request else request
        return lx["destinations.folder_words"].says(before)
    return True
