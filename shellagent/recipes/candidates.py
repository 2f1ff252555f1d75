"""Values a task names, by slot type: what a recipe's slots may be filled with.

A 135M model fills a slot well when it only has to pick: the grammar built from these
candidates (``shellagent.agent.recipe_grammar``) admits, for most slot types, only the
values the task itself names, and the model's choice is which of them goes where. The
task's words are read for quoted strings, paths, numbers (digits and number words),
extensions ("PDFs" → ``pdf``), sizes ("1MB" → ``1M``), durations ("last week" → 7 days),
times, dates, octal modes and capitalised or upper-case words (the usual search patterns).
A name the task gives without its folder ("access.log", "my Downloads folder", "the
webshop project") is looked up in a listing of the working directory (and of the folders
the task names), so the slot gets a path that exists.

Candidates are ordered best first: what the task says explicitly before what the listing
suggests, in the order the task says it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

__all__ = [
    "TaskValues",
    "candidates_for",
    "listed_folders",
    "listed_paths",
    "Fields",
    "fields_command",
    "fields_said",
    "listing_command",
    "read_fields",
    "looks_like_file_name",
    "one_asked",
    "quoted_spans",
    "read_task",
    "request",
    "said_as_imperative",
    "saving_clause",
    "slot_candidates",
    "the_one_of_a_ranking",
]

NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "fifty": 50,
    "hundred": 100,
    "dozen": 12,
    "a couple": 2,
    "a few": 3,
}
# Words that name a kind of file: "PDFs", "Python files", "photos".
EXT_WORDS = {
    "pdf": "pdf",
    "python": "py",
    "jpeg": "jpg",
    "jpg": "jpg",
    "jpgs": "jpg",
    "jpegs": "jpg",
    "photo": "jpg",
    "photos": "jpg",
    "png": "png",
    "pngs": "png",
    "csv": "csv",
    "csvs": "csv",
    "json": "json",
    "yaml": "yaml",
    "yml": "yml",
    "markdown": "md",
    "text": "txt",
    "txt": "txt",
    "log": "log",
    "logs": "log",
    "shell": "sh",
    "bash": "sh",
    "html": "html",
    "xml": "xml",
    "sql": "sql",
    "conf": "conf",
    "config": "conf",
    "gz": "gz",
    "gzip": "gz",
    "gzipped": "gz",
    "zip": "zip",
    "tar": "tar",
    "mp3": "mp3",
    "mp3s": "mp3",
    "bak": "bak",
    "tmp": "tmp",
    "javascript": "js",
    "js": "js",
    "typescript": "ts",
    "ini": "ini",
    "deb": "deb",
    "pdfs": "pdf",
}
UNITS = {"k": "k", "kb": "k", "kib": "k", "m": "M", "mb": "M", "mib": "M", "g": "G", "gb": "G"}
UNITS.update({"gib": "G", "kilobytes": "k", "megabytes": "M", "gigabytes": "G"})
SIGNALS = ("TERM", "KILL", "HUP", "INT", "USR1", "USR2", "STOP", "CONT")

_QUOTED = re.compile(r"(?<![\w])'([^'\n]{1,120})'(?![\w])|\"([^\"\n]{1,120})\"|`([^`\n]{1,120})`")
_PATH = re.compile(r"(?<![\w.])(?:~/|~(?![\w])|\.{1,2}/|/)[\w.@%+~*?/-]*")
_RELPATH = re.compile(r"(?<![\w/~.-])[\w.-]+/[\w.@+*/-]*[\w*]")
_FILENAME = re.compile(r"(?<![\w/~.-])[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,5}(?![\w])")
_DOT_EXT = re.compile(r"(?<![\w/])\.([A-Za-z][A-Za-z0-9]{0,9})\b")
# "how many 404s": a plural number is a number too
_NUMBER = re.compile(r"(?<![\w.:/-])(\d{1,7})(?!(?!s\b)[\w:/]|\.\d|-\d)")
_SIZE = re.compile(
    r"\b(\d{1,6})\s?(kib|kb|k|mib|mb|m|gib|gb|g|kilobytes|megabytes|gigabytes)\b", re.I
)
_DURATION = re.compile(
    r"\b(\d{1,4}|an?|one|two|three|four|five|six|seven|ten|twelve|thirty|last|past)\s*"
    r"(minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)\b",
    re.I,
)
_TIME = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)\b")
_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MODE = re.compile(r"(?<![\w.])([0-7]{3,4})(?![\w.])")
_CAPS = re.compile(r"\b[A-Z][A-Z0-9_]{1,30}\b")
_CAPITAL = re.compile(r"(?<=[a-z,] )[A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})?")
_AFTER = re.compile(
    r"\b(?:named|called|user|branch|field|key|column|group|tag|process)\s+"
    r"(?!(?:named|called|and|or|but|is|are|was|in|on|of|to|with|that|who|which|the|a|an)\b)"
    r"['\"]?([\w.@+-]{1,60})",
    re.I,
)
_STOP = {"the", "a", "an", "my", "in", "of", "to", "and", "is", "are", "for", "on", "with"}


# "save the list to /tmp/x", "write the count into out.txt", "append them to report.log"
# Said to the agent ("save …", "… should be saved in"), not of a program ("the service
# stores its logs in /var/x", "a script writes to /tmp/y").
_SAVE = re.compile(
    r"\b(?:save|saved|saving|write|written|writing|store|stored|storing|redirect|"
    r"append|appending|export|dump)\b[^.?!]*?\b(?:to|in|into|as)\b|"
    # "list their names in /tmp/x.txt", "record the count to out.txt": only when a file
    # follows ("list the files in /srv" saves nothing)
    r"\b(?:list|record|put|place|output|print|log|report)\b[^.?!]*?\b(?:to|in|into)\s+"
    r"(?:(?:a|the)\s+(?:new\s+)?file\s+(?:named\s+|called\s+)?)?['\"`]?"
    r"(?=[~/]?[\w.@+/-]*\.[A-Za-z][A-Za-z0-9]{0,5}\b)",
    re.I,
)


# Where a sentence ends: after . ! or ? (a path's last dot included), before a capital or
# a quote. "e.g. 666" and "i.e. the" do not end one.
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<=[.!?])\s+(?=[A-Z'\"(])")
# How a sentence that asks for something starts: a verb in the imperative, a question
# word, or the person asking ("I need …", "Can you …", "Please …").
_REQUEST_START = re.compile(
    r"^(?:please\s+|now\s+|then\s+|also\s+)?(?:find|list|show|count|delete|remove|move|"
    r"copy|compress|decompress|identify|locate|extract|create|make|rename|replace|change|"
    r"set|sort|calculate|compute|generate|check|determine|search|get|print|display|archive|"
    r"back|backup|clean|convert|combine|concatenate|merge|update|append|write|save|verify|"
    r"ensure|add|kill|stop|restart|schedule|truncate|split|tell|give|store|record|output|"
    r"summari[sz]e|report|filter|monitor|retrieve|fetch|read|compare|scan|analy[sz]e|"
    r"what|what's|which|how|where|when|who|whose|is|are|does|do|did|can|could|would|will|"
    r"i|i'd|i'm|we|let's|please)\b",
    re.I,
)


def request(task: str) -> str:
    """The part of ``task`` that asks for something: from its first sentence that asks on
    ("The 'x' service logs to /var/log/x. Find the errors …": ``Find the errors …``);
    the whole task when its first sentence asks already, or when none does."""
    sentences = _SENTENCE_END.split(task.strip())
    for i, sentence in enumerate(sentences):
        if _REQUEST_START.match(sentence.strip()) or sentence.rstrip().endswith("?"):
            return " ".join(sentences[i:]) if i else task
    return task


def quoted_spans(text: str) -> list[tuple[int, int, str]]:
    """Each quoted string of ``text`` ('x', "x" or `x`): its start, end and inside."""
    return [
        (m.start(), m.end(), next(g for g in m.groups() if g is not None))
        for m in _QUOTED.finditer(text)
    ]


def looks_like_file_name(text: str) -> bool:
    """Whether ``text`` is a file name with an extension ("report.csv")."""
    return bool(_FILENAME.fullmatch(text))


# A quoted word that names a thing rather than what to look for: "the 'x' service",
# "a folder named 'processed'".
_THING_AFTER = re.compile(
    r"^['\"`]?\s+(?:service|services|application|app|project|tool|team|user|group|"
    r"directory|folder|dir|file|files|database|db|system|server|script|module|package|"
    r"container|job|process|daemon|cluster|site|repo|repository|component|pipeline|api)\b",
    re.I,
)
_NAMED_BEFORE = re.compile(r"\b(?:named|called|as|user|group|branch)\s+['\"`]?$", re.I)


def _asked_texts(task: str, taken: set[str]) -> list[str]:
    """The quoted words of ``task``'s request that say what to look for or use: not a
    path, a file name, a glob or extension in ``taken``, nor the name of a thing ("the
    'x' service", "a folder named 'processed'")."""
    asked = request(task)
    found = []
    for start, end, inside in quoted_spans(asked):
        text = inside.strip()
        if (
            not text
            or {text, f"*{text}", f"{text}*"} & taken
            or "/" in text
            or looks_like_file_name(text)
            or _THING_AFTER.match(asked[end:])
            or _NAMED_BEFORE.search(asked[:start])
        ):
            continue
        found.append(text)
    return found


# What comes before a verb said in the imperative: the start of a sentence or clause,
# "and", "then", "please", "to" ("I want to rename"), "you" ("can you delete").
_LEAD = r"(?:^|[.!?;:,]\s+|\b(?:and|then|please|to|you|just|also|now|let's|lets|we)\s+)"
# "don't delete", "I don't want to unpack it", "without extracting"
_NEGATED = re.compile(
    r"\b(?:don't|dont|do\s+not|not|never|without|no\s+need\s+to)\s+(?:\w+\s+){0,2}$", re.I
)


def said_as_imperative(task: str, verbs: str) -> int | None:
    """Where ``task`` first says one of ``verbs`` (a regex) in the imperative and not
    negated ("… and delete them", "Please remove", not "A backup script", not "don't
    unpack it"); None if it does not."""
    for match in re.finditer(_LEAD + r"(?P<verb>(?:" + verbs + r"))\b", task, re.I):
        at = match.start("verb")
        if not _NEGATED.search(task[:at]):
            return at
    return None


def saving_clause(task: str) -> str:
    """The part of ``task`` from a verb of saving on ("save the list to /tmp/x": ``save
    the list to /tmp/x``), or "" when it says to save nothing."""
    said = _SAVE.search(task)
    return task[said.start() :] if said else ""


# "the largest", "most often", "the most recent": a superlative …
_SUPERLATIVE = re.compile(
    r"\b(?:largest|biggest|heaviest|longest|smallest|shortest|lightest|newest|oldest|latest|"
    r"earliest|highest|lowest|busiest|most|least|fewest|single)\b",
    re.I,
)
# … asked of one thing ("which file", "what is the", "which one"), not of several
# ("which files", "what are the", "the largest files").
_ONE = re.compile(
    r"\b(?:which|what)(?:'s|\s+is|\s+was)?\s+(?:the\s+)?(?:single\s+)?"
    r"(?:\.\w+\s+)?(?:one|[a-z]+(?<!s))\b|\bthe\s+single\b",
    re.I,
)
_SEVERAL = re.compile(
    r"\b(?:which|what)\s+(?:are|were)\b|"
    r"\b(?:which|what)\s+(?!is\b|was\b|has\b|does\b|process\b|address\b|status\b)[a-z]+s\b|"
    r"\b(?:which|what)\s+[\w.]+\s+[a-z]+s\s+(?:are|were|have)\b|"
    r"\b(?:largest|biggest|heaviest|longest|smallest|newest|oldest|latest|top)\s+[a-z]+s\b",
    re.I,
)


# "the most recent backup file", "the largest file size": the two words after "the" and
# a superlative; one of them plural ("the largest files") asks for several.
_THE_SUPERLATIVE = re.compile(
    r"\bthe\s+(?:single\s+)?(?:largest|biggest|heaviest|longest|smallest|shortest|newest|"
    r"oldest|latest|earliest|highest|lowest|most|least)\s+([a-z]+)(?:\s+([a-z]+))?",
    re.I,
)
_NOT_PLURAL = {"is", "was", "has", "this", "its", "process", "access", "address", "status"}


def one_asked(task: str) -> bool:
    """Whether ``task`` asks for the one most or least of something ("Which Python file is
    the longest?", "What's the single biggest file?", "Identify the most recent backup
    file"), so a count slot means 1."""
    if _SEVERAL.search(task):
        return False
    if _SUPERLATIVE.search(task) and _ONE.search(task):
        return True
    match = _THE_SUPERLATIVE.search(task)
    if match is None:
        return False
    words = [w.lower() for w in match.groups() if w]
    return not any(w.endswith("s") and w not in _NOT_PLURAL for w in words)


@dataclass(frozen=True)
class TaskValues:
    """Everything a task names, sorted by kind, best first."""

    paths: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    quoted: tuple[str, ...] = ()
    numbers: tuple[int, ...] = ()
    exts: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()
    sizes: tuple[str, ...] = ()
    days: tuple[int, ...] = ()
    minutes: tuple[int, ...] = ()
    times: tuple[str, ...] = ()
    dates: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()
    words: tuple[str, ...] = ()  # upper-case and capitalised words, names after "named"
    texts: tuple[str, ...] = ()  # quoted words the request looks for ("the word 'timeout'")
    names: tuple[str, ...] = ()
    signals: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()  # the columns and keys of the CSV and JSON files it names
    number_fields: tuple[str, ...] = ()  # those of them that hold numbers
    holding_fields: tuple[str, ...] = ()  # those of them holding a value it says ("Berlin")
    listing: tuple[str, ...] = field(default=(), repr=False)
    task: str = field(default="", repr=False)


# a pipeline's last stage that sorts in reverse: a ranking, the most first
_REVERSED_LAST = re.compile(
    r"\|\s*sort(?:\s+-[a-zA-Z]+)*\s+-[a-zA-Z]*r[a-zA-Z]*(?:\s+-[a-zA-Z]+)*\s*$"
)
_LEAST = re.compile(r"\b(?:least|fewest|smallest|lowest|shortest|tiniest|lightest)\b", re.I)


def the_one_of_a_ranking(task: str, command: str) -> str:
    """``command`` cut to the one line the task asks for when it prints a ranking, the most
    first ("… | sort | uniq -c | sort -rn"), and the task asks for the one most or least
    of something ("Which URL failed most often?": ``… | sort -rn | head -n 1``); else
    ``command`` as it is."""
    if not _REVERSED_LAST.search(command) or not one_asked(task):
        return command
    first = _SUPERLATIVE.search(task)
    if first is None:
        return command
    least = _LEAST.match(task, first.start()) is not None
    return f"{command} | {'tail' if least else 'head'} -n 1"


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for item in items:
        if item and item not in seen:
            seen[item] = None
    return tuple(seen)


def _looks_like_path(text: str) -> bool:
    return bool(text) and (
        text.startswith(("/", "~", "./", "../")) or "/" in text or bool(_FILENAME.fullmatch(text))
    )


def listing_command(task: str, limit: int = 3000) -> str:
    """A read-only command that lists the working directory (three levels) and the folders
    the task names, one path a line; its output is ``read_task``'s ``listing``."""
    import shlex

    named: list[str] = []
    parents: list[str] = []
    for path in _explicit_paths(task):
        if path.startswith("/") and "*" not in path and "?" not in path:
            named.append(path)
            if _FILENAME.search(path.rsplit("/", 1)[-1]):  # a file, or "/etc/cron.daily"
                parents.append(path.rsplit("/", 1)[0] or "/")
    # the named paths first: a large parent (/etc) must not push them past the limit
    roots = list(_unique(r for r in [*named, *parents, "."] if r not in ("/", "")))[:7]
    quoted = " ".join(shlex.quote(r) for r in roots)
    return (
        f"find {quoted} -maxdepth 3 \\( -name '.*' ! -name . -prune \\) -o "
        f"\\( -type d -printf '%p/\\n' \\) -o -printf '%p\\n' 2>/dev/null | head -n {limit}"
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
    import shlex

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


def read_fields(output: str, task: str = "") -> Fields:
    """The columns and keys in ``fields_command``'s output (see ``Fields``)."""
    said = task.lower()
    found: list[str] = []
    numbers: list[str] = []
    holding: list[str] = []

    def says(value: str) -> bool:
        value = value.strip().lower()
        return (
            len(value) > 2
            and not _A_NUMBER.fullmatch(value)
            and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", said) is not None
        )

    name, header, rows = "", list[str](), list[list[str]]()
    for line in [*output.split("\n"), _FIELDS_MARK]:
        if line.startswith(_FIELDS_MARK):
            found += header
            for i, column in enumerate(header):
                cells = [r[i] for r in rows if i < len(r)]
                if cells and len(cells) == len(rows) and all(map(_A_NUMBER.fullmatch, cells)):
                    numbers.append(column)
                if any(says(c) for c in cells):
                    holding.append(column)
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
    kept = _unique(f.strip() for f in found if len(f.strip()) <= 80)
    return Fields(
        kept,
        tuple(n for n in _unique(numbers) if n in kept),
        tuple(h for h in _unique(holding) if h in kept),
    )


def _explicit_paths(task: str) -> list[str]:
    found: list[tuple[int, str]] = []
    for m in _QUOTED.finditer(task):
        inner = next(g for g in m.groups() if g is not None).strip()
        if _looks_like_path(inner) and " " not in inner:
            found.append((m.start(), inner))
    stripped = _QUOTED.sub(lambda m: " " * len(m.group(0)), task)
    for m in _PATH.finditer(stripped):
        text = m.group(0).rstrip(".,:;!?)")
        if len(text) > 1 or text == "~":
            found.append((m.start(), text))
    for m in _RELPATH.finditer(stripped):
        found.append((m.start(), m.group(0).rstrip(".,:;")))
    for m in _FILENAME.finditer(stripped):
        text = m.group(0)
        if not re.fullmatch(r"\d+(\.\d+)+", text):  # a version such as 2.3.1
            found.append((m.start(), text))
    found.sort()
    return [p for _, p in found]


def _resolve(names: Sequence[str], listing: Sequence[str], task_words: set[str]) -> list[str]:
    """Listing entries whose base name is one of ``names`` (exact), best first: the entry
    whose folders the task also names, then the shallowest."""
    hits: list[tuple[int, int, str]] = []
    wanted = {n.lower() for n in names}
    for entry in listing:
        clean = entry.rstrip("/")
        base = clean.rsplit("/", 1)[-1].lower()
        if base in wanted:
            parts = [p.lower() for p in clean.split("/")[:-1]]
            named = sum(1 for p in parts if p in task_words)
            hits.append((-named, clean.count("/"), entry))
    hits.sort()
    return [h[2] for h in hits]


def _tidy(entry: str) -> str:
    """A listing entry as a slot value: ``./x`` as ``x``, a folder without its slash."""
    text = entry[2:] if entry.startswith("./") else entry
    return text.rstrip("/") or "."


def read_task(task: str, listing: Sequence[str] = (), home: str = "") -> TaskValues:
    """The values ``task`` names; ``listing`` (``listing_command``'s lines) resolves names
    given without their folder; ``home`` lets a listed path under it read as ``~/…``."""
    words = [w.lower() for w in re.findall(r"[\w.-]+", task)]
    word_set = {w.strip(".") for w in words}
    explicit = _unique(_explicit_paths(task))
    listed_dirs = [e for e in listing if e.endswith("/")]
    listed_files = [e for e in listing if not e.endswith("/")]

    dirs: list[str] = []
    files: list[str] = []
    outputs: list[str] = []
    listed = set(_tidy(e) for e in listing)
    listed_as_dirs = set(listed_dirs)
    resolved: set[str] = set()  # names the listing found elsewhere: not offered as written
    for path in explicit:
        last = path.rstrip("/").rsplit("/", 1)[-1]
        # "/etc/cron.daily" looks like a file; the listing knows it is a folder
        is_file = (
            bool(_FILENAME.fullmatch(last))
            and not path.endswith("/")
            and path.rstrip("/") + "/" not in listed_as_dirs
        )
        if "/" not in path and not path.startswith("~") and is_file:
            found = _resolve([path], listed_files, word_set)
            if found:
                files += [_tidy(f) for f in found]
                resolved.add(path)  # the name stands for what the listing found
                continue
            joined = _joined(task, path)
            files += [*joined, path]
            outputs += [*joined, path]
            continue
        if "/" in path and not path.startswith(("/", "~", ".")) and path not in listed:
            # "Documents/contacts.csv": look for it below the working directory
            found = [e for e in listing if _tidy(e).endswith("/" + path.rstrip("/"))]
            if found:
                (dirs if found[0].endswith("/") else files).append(_tidy(found[0]))
                resolved.add(path)
                continue
        if is_file:
            files.append(path)
            parent = path.rsplit("/", 1)[0]
            if parent and parent != path:
                dirs.append(parent)
            if path.startswith("/tmp/") or not any(_tidy(e) == path for e in listing):
                outputs.append(path)
        else:
            dirs.append(path.rstrip("/") if path not in ("/", "~/") else path)
    # Names given without a path: "my Downloads folder", "the webshop project".
    plain = [w for w in re.findall(r"[A-Za-z][\w.-]{2,}", task) if w.lower() not in _STOP]
    plain_lower = [w.lower().strip(".") for w in plain]
    dirs += [_tidy(d) for d in _resolve(plain_lower, listed_dirs, word_set)]
    files += [_tidy(f) for f in _resolve(plain_lower, listed_files, word_set)]
    # A file named by its stem: "my contacts file" → contacts.csv
    stems: dict[str, list[str]] = {}
    for entry in listed_files:
        base = _tidy(entry).rsplit("/", 1)[-1]
        stem = base.split(".", 1)[0].lower()
        if stem in plain_lower and len(stem) > 3:
            stems.setdefault(stem, []).append(entry)
    for stem in sorted(stems, key=plain_lower.index):
        files += [
            _tidy(e)
            for e in _resolve(
                [e.rstrip("/").rsplit("/", 1)[-1] for e in stems[stem]], stems[stem], word_set
            )
        ]
    if home:
        dirs = [_home(d, home) for d in dirs]
        files = [_home(f, home) for f in files]

    quoted = [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(task)]
    numbers: list[int] = []
    for m in _NUMBER.finditer(_QUOTED.sub(" ", task)):
        numbers.append(int(m.group(1)))
    for word, value in NUMBER_WORDS.items():
        if re.search(rf"\b{word}\b", task, re.I):
            numbers.append(value)
    if not numbers and one_asked(task):
        numbers.append(1)  # "which file is the largest?": a count of one
    exts = [m.group(1).lower() for m in _DOT_EXT.finditer(task)]
    prose = [w.lower() for w in re.findall(r"[\w-]+", _PATH.sub(" ", task))]
    exts += [EXT_WORDS[w] for w in prose if w in EXT_WORDS]
    for f in files:
        ext = PurePosixPath(f).suffix.lstrip(".")
        if ext and f in explicit:
            exts.append(ext.lower())
    globs = [q for q in quoted if any(c in q for c in "*?") and "/" not in q]
    for q in quoted:
        if "/" in q or " " in q or any(c in q for c in "*?"):
            continue
        before = task[: task.find(q)].lower()[-30:]
        if re.search(r"(end(s|ing)? (in|with)|suffix|extension)\W*$", before):
            globs.append(f"*{q}")
        elif re.search(r"(start(s|ing)? with|prefix(ed)?|begin(s|ning)? with)\W*$", before):
            globs.append(f"{q}*")
    globs += [f"*.{e}" for e in exts]
    sizes = [m.group(1) + UNITS[m.group(2).lower()] for m in _SIZE.finditer(task)]
    days, minutes = _durations(task)
    times = [f"{int(h):02d}:{m}" for h, m in _TIME.findall(task)]
    if re.search(r"\bmidnight\b", task, re.I):
        times.append("00:00")
    dates = ["-".join(d) for d in _DATE.findall(task)]
    modes = []
    if re.search(r"\b(mode|permissions?|chmod|octal)\b", task, re.I):
        modes = _MODE.findall(task)
    caps = [
        w for w in _CAPS.findall(task) if w not in {"I", "A", "OK"} and w.lower() not in EXT_WORDS
    ]
    named = [m.group(1) for m in _AFTER.finditer(task)]
    capital = _CAPITAL.findall(task)
    signals = [s for s in SIGNALS if re.search(rf"\b(SIG)?{s}\b", task)]
    texts = _asked_texts(task, {*globs, *exts, *(f".{e}" for e in exts)})
    return TaskValues(
        paths=_unique([*(p for p in explicit if p not in resolved), *dirs, *files]),
        dirs=_unique(dirs),
        files=_unique(files),
        outputs=_unique(outputs),
        quoted=_unique(q for q in quoted if not _looks_like_path(q)),
        numbers=tuple(dict.fromkeys(numbers)),
        exts=_unique(exts),
        globs=_unique(globs),
        sizes=_unique(sizes),
        days=tuple(dict.fromkeys(days)),
        minutes=tuple(dict.fromkeys(minutes)),
        times=_unique(times),
        dates=_unique(dates),
        modes=_unique(modes),
        words=_unique([*caps, *capital]),
        texts=_unique(texts),
        names=_unique(named),
        signals=_unique(signals),
        listing=tuple(listing),
        task=task,
    )


# "x.txt in '/tmp'", "x.tar.gz and place it in /tmp", "x.csv in the same directory"
_IN_DIR = re.compile(
    r"^['\"]?(?:\s+and\s+(?:place|put|save|store|write|keep|leave|move)\s+it)?"
    r"\s+(?:in|under|inside|into|to)\s+(?:the\s+)?(?:(?:directory|folder)\s+)?"
    r"(?:['\"]?(?P<folder>(?:/|~/?)[\w.@+/-]*)|(?P<same>(?:same|that|this)\s+(?:directory|folder)))",
    re.I,
)


def _joined(task: str, name: str) -> list[str]:
    """``name`` put in the folder the task names right after it ("x.txt in /tmp", "… and
    place it in /tmp"; "in the same directory": the last folder named before it)."""
    at = task.find(name)
    match = _IN_DIR.match(task[at + len(name) :]) if at >= 0 else None
    if match is None:
        return []
    if match.group("same"):
        before = [p for p in _explicit_paths(task[:at]) if p.startswith(("/", "~"))]
        folders = [p for p in before if not _FILENAME.fullmatch(p.rstrip("/").rsplit("/", 1)[-1])]
        if not folders:
            return []
        folder = folders[-1].rstrip("/") or "/"
    else:
        folder = match.group("folder").rstrip("/.,") or "/"
    if _FILENAME.fullmatch(folder.rsplit("/", 1)[-1]):
        return []  # "config.php inside site.tar.gz": a file in a file, not a path
    return [f"{folder}/{name}" if folder != "/" else f"/{name}"]


def _home(path: str, home: str) -> str:
    if home and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")) :]
    return path


_UNIT_DAYS = {"minute": 1 / 1440, "min": 1 / 1440, "hour": 1 / 24, "hr": 1 / 24}
_UNIT_DAYS.update({"day": 1, "week": 7, "month": 30, "year": 365})


def _durations(task: str) -> tuple[list[int], list[int]]:
    days: list[int] = []
    minutes: list[int] = []
    low = task.lower()
    for m in _DURATION.finditer(low):
        amount_text, unit = m.group(1), m.group(2).rstrip("s")
        unit = {"min": "minute", "hr": "hour"}.get(unit, unit)
        amount = int(amount_text) if amount_text.isdigit() else NUMBER_WORDS.get(amount_text, 1)
        in_days = amount * _UNIT_DAYS[unit]
        days.append(max(1, round(in_days)))
        minutes.append(max(1, round(in_days * 1440)))
    for phrase, n in (("yesterday", 1), ("today", 1), ("fortnight", 14), ("last 24 hours", 1)):
        if phrase in low:
            days.append(n)
            minutes.append(n * 1440)
    return days, minutes


# What a task may call an archive's kind: "a tar.gz archive", "as a .zip". A bare kind
# is never the archive's name (it would write a file called "tar.gz").
ARCHIVE_KINDS = ("tar.gz", "tgz", "tar.xz", "txz", "tar.bz2", "tbz2", "tar.zst", "tar", "zip")


_ARCHIVE_SUFFIXES = tuple(f".{k}" for k in ARCHIVE_KINDS) + (".gz", ".bz2", ".xz", ".7z")


def _archive_names(values: TaskValues) -> list[str]:
    """An archive slot's candidates: the files and paths the task names that are not a
    folder it names nor a bare kind, then, for each folder it names, the folder's name
    with the kind the task asks for (``~/Documents`` + "tar.gz" -> ``Documents.tar.gz``,
    written in the working directory)."""
    named = [
        p
        for p in _unique([*values.files, *values.paths])
        if p not in values.dirs and p.lstrip(".").lower() not in ARCHIVE_KINDS
    ]
    # "config.php inside ~/Downloads/site.tar.gz": the archive is the one named like one
    named.sort(key=lambda p: not p.lower().endswith(_ARCHIVE_SUFFIXES))
    mentioned = {*values.exts, *(p.lstrip(".").lower() for p in values.files)}
    kind = next((k for k in ARCHIVE_KINDS if k in mentioned), "")
    if not kind and "gz" in mentioned:
        kind = "tar.gz"
    derived = []
    for folder in values.dirs:
        base = folder.rstrip("/").rsplit("/", 1)[-1].lstrip(".~")
        if re.fullmatch(r"[\w@+-][\w.@+-]*", base or ""):
            derived.append(f"{base}.{kind or 'tar.gz'}")
    return list(_unique([*named, *derived]))


def candidates_for(slot_type: str, values: TaskValues, choices: Sequence[str] = ()) -> list[str]:
    """The values a slot of ``slot_type`` may take from the task, best first (empty: the
    task names none; the grammar then allows the default, or a free value of the type)."""
    if slot_type == "dir":
        return list(values.dirs)
    if slot_type == "archive":
        return _archive_names(values)
    if slot_type == "file":
        # the files first; then any other path (a "file" slot of `stat` takes a folder too)
        return list(values.files) + [p for p in values.paths if p not in values.files]
    if slot_type == "path":
        return list(values.paths)
    if slot_type == "output":
        return list(values.outputs) + [p for p in values.files if p not in values.outputs]
    if slot_type == "glob":
        return list(values.globs)
    if slot_type == "ext":
        return list(values.exts)
    # a file named without a folder may be what to look for ("where is settings.py")
    bare = [f for f in values.files if "/" not in f]
    # what the request quotes to look for before what its context quotes ("the 'x' service")
    if slot_type in ("pattern", "text"):
        return list(_unique([*values.texts, *values.quoted, *values.words, *values.names, *bare]))
    if slot_type == "key" and values.fields:
        return _said_first(values.fields, values.task, values.holding_fields)
    if slot_type in ("name", "word", "key"):
        return [
            w
            for w in _unique([*values.names, *values.texts, *values.quoted, *values.words, *bare])
            if re.fullmatch(r"[A-Za-z0-9._@+][A-Za-z0-9._@+-]*", w)
        ]
    if slot_type in ("user", "group"):
        return [
            w
            for w in _unique([*values.names, *values.quoted])
            if re.fullmatch(r"[a-z_][a-z0-9_-]*", w)
        ]
    if slot_type == "branch":
        return [
            w
            for w in _unique([*values.names, *values.quoted])
            if re.fullmatch(r"[A-Za-z0-9._/][A-Za-z0-9._/-]*", w)
        ]
    if slot_type in ("count", "column"):
        return [str(n) for n in values.numbers if 1 <= n <= 100000]
    if slot_type in ("number", "pid"):
        return [str(n) for n in values.numbers]
    if slot_type == "port":
        return [str(n) for n in values.numbers if 1 <= n <= 65535]
    if slot_type == "days":
        return [str(n) for n in values.days]
    if slot_type == "minutes":
        return [str(n) for n in values.minutes]
    if slot_type == "size":
        return list(values.sizes)
    if slot_type == "mode":
        return list(values.modes)
    if slot_type == "time":
        return list(values.times)
    if slot_type == "date":
        return list(values.dates)
    if slot_type == "signal":
        return list(values.signals)
    if slot_type == "choice":
        return [c for c in choices if c in values.words or c in values.quoted]
    return []


def fields_said(task: str, fields: Sequence[str]) -> tuple[str, ...]:
    """The columns and keys among ``fields`` whose name (or its last part: "server.port")
    ``task`` says as a word of its own ("What version is the project at": ``version``)."""
    words = {w.lower() for w in re.findall(r"[A-Za-z][\w-]*", task)}
    return tuple(
        f for f in fields if len(last := f.rsplit(".", 1)[-1]) > 2 and last.lower() in words
    )


def _said_first(fields: Sequence[str], task: str, holding: Sequence[str] = ()) -> list[str]:
    """``fields`` with those whose name (or its last part: "server.port") the task says
    first, in the order it says them; then those ``holding`` a value it says; the rest in
    the files' order."""
    words = [w.lower() for w in re.findall(r"[\w-]+", task)]

    def said(field: str) -> tuple[int, bool]:
        last = field.rsplit(".", 1)[-1].lower()
        return (words.index(last) if last in words else len(words), field not in holding)

    return sorted(fields, key=said)


# Slots that name where something goes: the value after "to"/"into" is theirs.
_DESTINATIONS = {"dest", "destination", "target", "to", "into", "out", "output", "backup"}
_PATH_TYPES = {"dir", "file", "path", "output", "archive"}
_GOES_TO = re.compile(
    r"\b(?:to|into|onto)\s+(?:the\s+|a\s+)?(?:(?:new\s+)?(?:directory|folder|file)\s+)?"
    r"(?:named\s+|called\s+)?['\"`]?$",
    re.I,
)


def _goes_to(task: str, value: str) -> bool:
    """Whether ``task`` names ``value`` as where something goes ("move them to /srv/old")."""
    for name in (value, value.rsplit("/", 1)[-1]):
        at = task.find(name)
        if name and at >= 0:
            return bool(_GOES_TO.search(task[max(0, at - 40) : at]))
    return False


def listed_paths(values: TaskValues) -> set[str]:
    """Every path the listing shows, as slot values."""
    return {_tidy(e) for e in values.listing}


def listed_folders(values: TaskValues) -> set[str]:
    """The paths the listing shows are folders, as slot values."""
    return {_tidy(e) for e in values.listing if e.endswith("/")}


def slot_candidates(
    slots: Sequence[tuple[str, str, Sequence[str]]], values: TaskValues
) -> list[list[str]]:
    """The candidates of each of a recipe's slots (``(name, type, choices)``, declared
    order), best first: ``candidates_for`` each, then the paths the task names after
    "to"/"into" first for a destination slot ("dest", an output) and last for the others,
    and slots of the same kind of value started on different values ("move x.log to
    /srv/old": the source and the destination are not both ``x.log``)."""
    result: list[list[str]] = []
    firsts: set[str] = set()
    for name, slot_type, choices in slots:
        found = candidates_for(slot_type, values, choices)
        if slot_type in _PATH_TYPES and values.task and len(found) > 1:
            destination = name in _DESTINATIONS or slot_type == "output"
            going = [v for v in found if _goes_to(values.task, v)]
            staying = [v for v in found if v not in going]
            found = [*going, *staying] if destination else [*staying, *going]
        if name in ("archive", "tarball", "zip") and slot_type in _PATH_TYPES:
            # an archive slot of type file: the file named like an archive first
            found = sorted(found, key=lambda v: not v.lower().endswith(_ARCHIVE_SUFFIXES))
        if slot_type in _PATH_TYPES and found and found[0] in firsts:
            unused = [v for v in found if v not in firsts]
            if unused:
                found = [unused[0], *(v for v in found if v != unused[0])]
        if slot_type in _PATH_TYPES and found:
            firsts.add(found[0])
        result.append(found)
    return result
