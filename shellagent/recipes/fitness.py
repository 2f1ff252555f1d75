"""Whether a recipe's shape fits a task, beside what its words say.

The ranker (``shellagent.recipes.rank``) reads words: "One file in Downloads is completely
empty" ranks ``host_name`` first, a recipe that takes no folder at all; "what's inside
holiday-photos.zip, I don't want to unpack it" ranks a recipe that unpacks every zip of a
folder. What the task *names* tells these apart without knowing any word: a recipe must
have somewhere to put each file and folder the task names, a task that asks something is
not answered by a recipe that changes files (nor the other way round), and a task about
PDFs wants a recipe that can be told the kind of file.

``adjust`` gives a recipe's penalty for a task (0 when its shape fits, negative
otherwise); ``rerank`` adds it to the ranker's scores and sorts again. Penalties only: a
recipe never fits *better* than its words say, so the thresholds measured on the ranker's
scores keep their meaning (a score above them is at least as sure as before). One
exception: two recipes that differ only in minding case share the better words score
(``_case_twins_agree``), the case the task asks deciding between them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from shellagent.recipes.compose import is_selection
from shellagent.recipes.lexicon import lexicon
from shellagent.recipes.values import TaskValues, candidates_for, listed_folders, listed_paths

if TYPE_CHECKING:
    from shellagent.recipes.model import Recipe
    from shellagent.recipes.rank import Candidate
    from shellagent.recipes.reading import TaskReading

__all__ = [
    "DOES",
    "Shape",
    "adjust",
    "category_of",
    "keeps_the_unwanted",
    "narrowings",
    "narrows_unsaid",
    "rerank",
    "shape_of",
    "sort_unsaid",
    "untold",
]

# Weights, in the ranker's margin units (a right recipe leads a wrong one by 0.1-0.5
# where the words alone confuse them). Measured with ``bench/recipes_bench.py intents``.
WRONG_KIND = 0.35  # an action recipe for a question, or a question recipe for an action
NO_PLACE = 0.3  # per file or folder the task names that the recipe has no slot for (≤ 2)
NO_VALUE = 0.2  # per required slot the task names no value for (≤ 2)
NO_KIND_OF_FILE = 0.25  # the task asks about a kind of file ("PDFs", ".jpg"); no slot for it
UNUSED_VALUE = 0.25  # per size or age the task says that the recipe has no slot for (≤ 2)
# … when the recipe acts on files: it would delete, move or pack every file of the folder
# where the task says which ("compress the logs older than 30 days"; a pattern of names it
# quotes likewise)
UNUSED_LIMIT = 0.55
# the task packs files into an archive it names ("into a single archive named old.tar.gz");
# the recipe has nowhere to put one (it compresses each file in place)
NO_ARCHIVE = 0.3
NO_TEXT = 0.35  # the task quotes what to look for ("the word 'timeout'"); no slot takes text
OTHER_ACT = 0.3  # the task says "delete them"; the action recipe moves, renames, …
OTHER_FORMAT = 0.3  # the task names a .csv file; the recipe reads access logs (or the reverse)
NO_FIELD = 0.3  # the task says a column or key of the file it names; no slot takes one
# the task says "older than 30 days" (or "not modified in the last 30 days"); the recipe
# finds the files modified within them (or the reverse; sizes likewise)
WRONG_DIRECTION = 0.3
# the task asks how many ("count what in /srv/inbox was edited …"); the recipe lists the
# files it selects, one per line, instead of counting them
NOT_COUNTED = 0.2
# the task looks for a word said as people say one ("which files mention invoice"): a
# search of file contents that minds case misses "Invoice"; a quoted text ("'ERROR'") is
# looked for as quoted, so one that ignores case finds too much
OTHER_CASE = 0.15
# the task asks each file's size reported ("its name and size"); the question prints none
NOT_SIZED = 0.2
# the task names a file ("who is the admin in users.json") and the recipe takes no path
# at all, nor reads that file by itself: it answers from somewhere else (sudo's group)
READS_NONE_NAMED = 0.5
# The task asks a figure for each of several files; the recipe answers with one total.
IN_TOTAL = 0.3
# The task speaks of files only; the recipe selects folders only (or the reverse).
OTHER_OBJECT = 0.3

# Slots a named thing may go in, narrowest first ("path" takes a file or a folder).
_FILE_SLOTS = ("file", "archive", "output", "path")
_DIR_SLOTS = ("dir", "path")
_ANY_PATH_SLOTS = ("file", "dir", "archive", "output", "path")
_OUTPUT_SLOTS = ("output", "archive", "file", "path")
_NAME_SLOTS = ("name", "glob", "pattern", "text", "word", "key")
# Required slots a recipe cannot do without unless the task says the value: a port, a
# date, a size. (A file, a pattern or a key may be meant without being named: "the
# access log", "the version field".)
_TASK_MUST_SAY = {"port", "pid", "date", "day", "zone", "time", "mode", "size", "days"}
_TASK_MUST_SAY |= {"minutes"}
_TASK_MUST_SAY |= {"number", "count", "column", "signal", "output", "archive"}
# A size or an age the task says ("larger than 100MB", "older than 30 days") narrows what
# it asks about: a recipe with no slot for it answers about everything.
_VALUE_SLOTS = {
    "sizes": {"size"},
    "days": {"days", "minutes", "date", "time", "schedule"},
    "days_of_year": {"day"},  # "the alerts of 9 October": a day of any year
    "dates": {"date", "day", "days", "schedule"},  # a date is an age as well ("since 2024-05-01")
}
# What a command that does each of ``compose.ENDINGS``' acts says.
DOES = {
    "delete": r"\brm\b|-delete\b|\bunlink\b|\bshred\b|\brmdir\b|\btruncate\b",
    "move": r"\bmv\b|\brename\b|--remove-source-files",
    "copy": r"\bcp\b|\brsync\b|\binstall\b",
    "gzip": r"\bgzip\b|\bxz\b|\bbzip2\b|\bzstd\b|\bzip\b|\btar\b",
    "archive": r"\btar\b|\bzip\b|\b7z\b",
    "concat": r"\bcat\b|\bpaste\b|>>",
    "extract": (
        r"\btar\b[^|;&]*\s-[a-zA-Z]*x|\bunzip\b|\bgunzip\b|"
        r"\b(?:xz|zstd|bzip2)\s+-d\b|\b7z\s+x\b"
    ),
}
# What a command that changes, moves or removes files other than its output says.
_CHANGES = "|".join(DOES[act] for act in ("delete", "move", "gzip")) + r"|\bchmod\b|\bchown\b"
# The slots that can hold a name the task leaves out ("apart from main").
_LEAVES_OUT = {"branch", "user", "group", "name", "pattern", "glob", "word", "text"}
# Slots a quoted word may go in ("the word 'timeout'", "the 'WARN' entries", "column 'price'")
_TEXT_SLOTS = {"pattern", "text", "word", "name", "key", "user", "group", "branch", "choice"}
_TEXT_SLOTS |= {"column", "glob", "date", "time"}
_DATE_OR_TIME = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}")


def _text_slots(texts: Sequence[str]) -> set[str]:
    """The slots the quoted words ``texts`` may go in: a date or a time slot only for a
    word that is one ("the entries of '2024-05-20'"), not for 'exception'."""
    if any(_DATE_OR_TIME.search(t) for t in texts):
        return _TEXT_SLOTS
    return _TEXT_SLOTS - {"date", "time"}


def _takes_text(recipe: Recipe, texts: Sequence[str]) -> bool:
    """Whether one of ``recipe``'s slots may take one of the quoted words ``texts``: a
    choice only one of its choices ('ERROR' for a level, not 'completed')."""
    fits = _text_slots(texts)
    return any(
        slot.type in fits
        and (slot.type != "choice" or any(t.upper() in map(str.upper, slot.choices) for t in texts))
        for slot in recipe.slots.values()
    )


def _glob_slots(globs: Sequence[str]) -> set[str]:
    """The slots a pattern of names the task quotes may go in: an extension slot only for
    "*.tmp", not for "*_copy.txt" (every .txt file)."""
    # not a "name" slot: a file's exact name, never a pattern ("-name {name}" with '.tmp')
    slots = {"glob", "pattern", "word", "text", "prefix", "suffix"}
    if any(re.fullmatch(r"\*\.[A-Za-z0-9]+", g) for g in globs):
        slots.add("ext")
    return slots


# Formats a file's extension says, and words in a recipe that say which one it reads.
_FORMAT_OF_EXT = {
    "csv": "csv",
    "tsv": "csv",
    "json": "json",
    "jsonl": "json",
    "log": "log",
    "yaml": "yaml",
    "yml": "yaml",
    "xml": "xml",
    "toml": "toml",
    "ini": "ini",
    "conf": "conf",
    "cfg": "conf",
    "md": "text",
    "txt": "text",
}
# what a file slot's help or default says it reads ("an access log", "a CSV file") …
_FORMAT_WORDS = {
    "csv": r"\bcsv\b|\bcomma[- ]separated\b",
    "json": r"\bjson\b",
    "log": r"\blogs?\b|\.log\b|/var/log/",
    "yaml": r"\bya?ml\b",
    "xml": r"\bxml\b",
    "toml": r"\btoml\b",
    "ini": r"\bini\b",
}
# … and the tools a template reads it with
_FORMAT_TOOLS = {"json": r"\bjq\b", "csv": r"-F\s*'?,'?", "xml": r"\bxmllint\b", "yaml": r"\byq\b"}


@dataclass(frozen=True)
class Shape:
    """What a task asks for, as far as recipes' shapes go."""

    kind: str  # "action", "question" or "" (cannot tell)
    files: tuple[str, ...]  # files the task names: with an extension, or listed as files
    dirs: tuple[str, ...]  # folders it names that the listing shows as folders
    either: tuple[str, ...]  # paths that may be a file or a folder ("~/.bashrc", "/srv/x")
    names: tuple[str, ...]  # file names not found here: maybe names to look for
    saved: tuple[str, ...]  # files the task says to save an answer in
    kinds_of_file: tuple[str, ...]  # extensions it asks about ("PDFs" → pdf)
    categories: tuple[str, ...] = ()  # sorts of file of many extensions ("photos")
    act: str = ""  # the find-then-act ending the task asks for ("delete", "move", …)
    texts: tuple[str, ...] = ()  # quoted words to look for ("the word 'timeout'")
    formats: tuple[str, ...] = ()  # formats of the files it names ("csv", "json", "log")
    fields: tuple[str, ...] = ()  # columns or keys of those files it says ("version")
    # the directions of the limits it says, by measure: {"age": {">"}} for "older than"
    ways: Mapping[str, frozenset[str]] = field(default_factory=dict)
    count: bool = False  # a question that asks how many
    # a search of contents in any case (a word said unquoted, in lower case), as quoted
    # (a quoted text), or either (None)
    any_case: bool | None = None
    # patterns of names it quotes ("ending in '_copy.txt'": *_copy.txt, "prefix 'tmp_'")
    globs: tuple[str, ...] = ()
    # it asks for what is older than a day or so ("not modified in the last 24 hours"):
    # find's "-mtime +1" means two days and more, so only a count of minutes says it
    under_two_days: bool = False
    # it changes no file but the one it saves what it finds in ("extract … and save them")
    saving_only: bool = False
    # it packs files into one archive it names ("… into a single archive named x.tar.gz")
    packs: bool = False
    # it asks a figure for each of several files ("count the lines of every .log file")
    each_file: bool = False
    # it calls the files old and says no age ("clean up old files"): an age limit is asked
    old: bool = False
    # it asks each file's size reported beside it ("write its name and size")
    sizes: bool = False
    # it speaks of files only, or of folders only ("files", "folders"; "" either)
    objects: str = ""


def shape_of(values: TaskValues) -> Shape:
    """What the task asks for, as far as shapes go (``values``: what it names, with its
    reading)."""
    reading = values.reading
    saving = reading.saving
    saved = tuple(o for o in values.outputs if saving and o in saving)
    listed = listed_paths(values)
    folders = listed_folders(values)
    files: list[str] = []
    names: list[str] = []
    saved_bases = {o.rsplit("/", 1)[-1] for o in saved}
    for f in values.files:
        if f in saved or f.rsplit("/", 1)[-1] in saved_bases:
            continue
        (names if "/" not in f and f not in listed else files).append(f)
    # "settings.py under ~/projects" reads as the name and as a guessed path: one thing
    bare = {n.lower() for n in names}
    files = [f for f in files if f in listed or f.rsplit("/", 1)[-1].lower() not in bare]
    # a folder that holds a file or folder the task names is where that one is, not a
    # target of its own ("the webshop's src folder": projects/webshop/src, not webshop)
    named = [p.rstrip("/") for p in (*values.files, *values.dirs, *saved)]
    parents = {d for d in values.dirs if any(p.startswith(d.rstrip("/") + "/") for p in named)}
    dirs: list[str] = []
    either: list[str] = []
    for d in values.dirs:
        if d in parents:
            continue
        (dirs if d in folders else either).append(d)
    formats = [
        _FORMAT_OF_EXT.get(f.rsplit(".", 1)[-1].lower(), "")
        for f in (*files, *names)
        if "." in f.rsplit("/", 1)[-1]
    ]
    kind = reading.kind
    saving_only = not reading.act and bool(reading.saving and reading.output)
    if kind == "action" and saving_only:
        # "extract the lines that mention 'x' and save them to /tmp/x.txt" changes no file
        # but the one it saves: a question's answer saved there does it as well
        kind = ""
    return Shape(
        kind,
        _by_base(files),
        _by_base(dirs),
        _by_base(either),
        _by_base(names),
        saved,
        reading.unmistakable_kinds,
        reading.categories,
        reading.ending if reading.kind == "action" else "",
        values.texts,
        tuple(dict.fromkeys(f for f in formats if f)),
        # a field said by name, or one holding a value the task says ("who is the admin
        # in users.json": role): the answer is read from the file's records
        tuple(dict.fromkeys((*reading.said_fields(values.fields), *values.holding_fields))),
        {
            measure: frozenset(q.direction for q in said if q.direction)
            for measure, said in (("age", reading.ages), ("size", reading.size_limits))
            if any(q.direction for q in said)
        },
        reading.count and reading.kind != "action",
        _any_case(reading),
        reading.quoted_globs,
        any(q.direction == ">" and q.minutes < 2 * 1440 for q in reading.ages),
        saving_only,
        reading.act == "archive" and any(_ARCHIVE_NAME.search(f) for f in values.files),
        reading.each_file and reading.kind != "action",
        # "old exports named 'export_*'": the names choose, "old" only describes them
        reading.old_unsaid and not reading.quoted_globs and not reading.size_limits,
        reading.sizes_asked,
        reading.objects,
    )


_ARCHIVE_NAME = re.compile(r"\.(?:tar(?:\.\w+)?|tgz|tbz2|txz|zip|7z)$", re.I)


def _any_case(reading: TaskReading) -> bool | None:
    """Whether a search of contents the task asks for ignores case: yes for a word it
    says unquoted in lower case ("the word invoice", "notes that mention the dentist"), no
    for a text it quotes."""
    if reading.look_for:
        return False
    said = reading.mentioned or reading.spoken_of  # "mention timeout", "… the dentist"
    if said and all(w == w.lower() for w in said):
        return True
    return None


# a template that lists the files whose contents match, and whether it ignores case
_LISTS_BY_CONTENT = re.compile(r"\bgrep\s+(?:-\w+\s+)*-\w*[lL]")
_IGNORES_CASE = re.compile(r"\bgrep\s+(?:-\w+\s+)*-\w*i")


def _reads(recipe: Recipe) -> set[str]:
    """The formats ``recipe``'s file slots say they read (its name, each slot's
    help and default, the tools its templates use); empty when it does not say."""
    files = [slot for slot in recipe.slots.values() if slot.type in ("file", "path")]
    if not files:
        return set()
    said = " ".join(f"{slot.help} {slot.default or ''}" for slot in files)
    said += " " + recipe.name.replace("_", " ")
    templates = " ".join(recipe.templates)
    found = {fmt for fmt, words in _FORMAT_WORDS.items() if re.search(words, said, re.I)}
    return found | {fmt for fmt, tool in _FORMAT_TOOLS.items() if re.search(tool, templates)}


def _by_base(paths: Sequence[str]) -> tuple[str, ...]:
    """One path per base name ("x.txt" and "/tmp/x.txt" name the same file)."""
    seen: dict[str, str] = {}
    for path in paths:
        seen.setdefault(path.rstrip("/").rsplit("/", 1)[-1].lower(), path)
    return tuple(seen.values())


def _unplaced(recipe: Recipe, shape: Shape) -> int:
    """How many of the files and folders the task names ``recipe`` has no slot for."""
    free = [slot.type for slot in recipe.slots.values()]
    missing = 0
    wanted = [
        *((_FILE_SLOTS, ()) for _ in shape.files),
        *((_DIR_SLOTS, ()) for _ in shape.dirs),
        *((_ANY_PATH_SLOTS, ()) for _ in shape.either),
        *((_FILE_SLOTS, _NAME_SLOTS) for _ in shape.names),
    ]
    if recipe.kind == "action":  # an action has no answer to save: the file needs a slot
        wanted += [(_OUTPUT_SLOTS, ()) for _ in shape.saved]
    for fits, otherwise in wanted:
        # the narrowest slot first: "path" takes anything, so it is taken last
        slot = next((t for t in (*fits, *otherwise) if t in free), None)
        if slot is None:
            missing += 1
        else:
            free.remove(slot)
    return missing


def _ignores_the_files(recipe: Recipe, shape: Shape) -> bool:
    """Whether the task names files and ``recipe`` can be told none of them and reads
    none by itself (/etc/passwd named and read by a users recipe is read)."""
    if not shape.files or any(slot.type in _ANY_PATH_SLOTS for slot in recipe.slots.values()):
        return False
    templates = " ".join(recipe.templates)
    return not any(f.rstrip("/").rsplit("/", 1)[-1] in templates for f in shape.files)


def _said(slot_type: str, values: TaskValues) -> bool:
    """Whether the task says a value of ``slot_type`` that its reading keeps for other
    slots: "set 755 on /srv/www" gives a mode without saying "mode"."""
    if slot_type == "mode":
        return any(re.fullmatch(r"0?[0-7]{3}", str(n)) for n in values.numbers)
    return False


def untold(recipe: Recipe, values: TaskValues) -> int:
    """How many of ``recipe``'s required slots want a value only the task can give (a
    date, a size, a port …) that it does not say."""
    return sum(
        1
        for slot in recipe.slots.values()
        if slot.required
        and slot.type in _TASK_MUST_SAY
        and not (candidates_for(slot.type, values, slot.choices) or _said(slot.type, values))
    )


def adjust(recipe: Recipe, shape: Shape, values: TaskValues) -> float:
    """How much less ``recipe`` fits than its words say (0 or negative)."""
    penalty = 0.0
    if shape.kind and shape.kind != recipe.kind:
        penalty += WRONG_KIND
    penalty += NO_PLACE * min(_unplaced(recipe, shape), 2)
    if _ignores_the_files(recipe, shape):
        penalty += READS_NONE_NAMED
    penalty += NO_VALUE * min(untold(recipe, values), 2)
    unused = sum(
        1
        for said, fits in _VALUE_SLOTS.items()
        if getattr(values, said) and not (fits & {slot.type for slot in recipe.slots.values()})
    )
    penalty += (UNUSED_LIMIT if recipe.kind == "action" else UNUSED_VALUE) * min(unused, 2)
    types = {slot.type for slot in recipe.slots.values()}
    does = " ".join(recipe.templates)
    if shape.packs and not types & {"archive", "output"}:
        penalty += NO_ARCHIVE
    if shape.kinds_of_file and not ({"ext", "glob"} & types):
        said = f"{recipe.name} {recipe.summary} {' '.join(recipe.templates)}".lower()
        if not any(re.search(rf"\b{re.escape(k)}\b", said) for k in shape.kinds_of_file):
            penalty += NO_KIND_OF_FILE
    category = category_of(recipe)
    if shape.categories and not category and ("ext" in types or "find {dir}" in does):
        # "how many photos": jpg alone would miss the png ones, every file is too many
        penalty += NO_KIND_OF_FILE
    if shape.act and recipe.kind == "action" and not _does(shape.act, does):
        penalty += OTHER_ACT
    if shape.saving_only and recipe.kind == "action" and re.search(_CHANGES, does):
        # "list the files over 100MB and save their paths to /tmp/x": nothing is moved
        penalty += WRONG_KIND
    if shape.old and not types & {"days", "date"}:
        # "clean up old files in ~/Downloads": every file of the folder is not what is
        # meant, nor what is older than an hour (a count of minutes defaults to one)
        penalty += UNUSED_LIMIT if recipe.kind == "action" else UNUSED_VALUE
    if shape.under_two_days and "days" in types and "minutes" not in types:
        # "-mtime +1" keeps the files one to two days old: a limit the recipe cannot say
        penalty += UNUSED_LIMIT if recipe.kind == "action" else UNUSED_VALUE
    if shape.globs and not types & _glob_slots(shape.globs):
        # "the files ending in '_copy.txt'" say which files as a limit does
        penalty += UNUSED_LIMIT if recipe.kind == "action" else UNUSED_VALUE
    if shape.texts and not _takes_text(recipe, shape.texts):
        penalty += NO_TEXT
    if values.reading.excluded and not types & _LEAVES_OUT:
        # "which branches are there apart from main": every branch is not what is asked
        penalty += UNUSED_VALUE
    reads = _reads(recipe)
    if reads and shape.formats and not reads & set(shape.formats):
        penalty += OTHER_FORMAT
    if (shape.fields and not types & {"key", "column"}) or _numbers_of_a_field_without(
        recipe, values
    ):
        penalty += NO_FIELD
    if shape.objects and _selects(does) not in ("", shape.objects):
        # "One file in Downloads is completely empty": the empty folders are not asked
        penalty += OTHER_OBJECT
    if shape.each_file and lexicon()["totals.in_total"].says(recipe.summary):
        # "count the lines of every .log file": one total hides the figure of each
        penalty += IN_TOTAL
    for measure, way in _ways(recipe).items():
        if shape.ways.get(measure) and way not in shape.ways[measure]:
            penalty += WRONG_DIRECTION
    if shape.count and is_selection(recipe):
        penalty += NOT_COUNTED
    if shape.sizes and recipe.kind == "question" and not prints_sizes(recipe):
        penalty += NOT_SIZED
    first = recipe.templates[0]
    if (
        shape.any_case is not None
        and _LISTS_BY_CONTENT.search(first)
        and bool(_IGNORES_CASE.search(first)) != shape.any_case
    ):
        penalty += OTHER_CASE
    return -penalty


def _numbers_of_a_field_without(recipe: Recipe, values: TaskValues) -> bool:
    """Whether ``recipe`` reckons with the numbers of a field (a sum, a comparison) and
    every field the task says by name of the file it names holds none ("Ben's email in
    people.csv" is no sum)."""
    said = values.reading.said_fields(values.fields)
    return (
        bool(said)
        and any(slot.numbers for slot in recipe.slots.values())
        and not set(said) & set(values.number_fields)
    )


# a tool that shows sizes: du, stat, wc -c, numfmt, a long or size listing of ls
_SHOWS_SIZES = re.compile(r"\b(?:du|stat|numfmt)\b|\bwc\s+-c\b|\bls\s+-\w*[ls]")
# find's size in its output ("-printf '%s\t%p'"), unless a later cut drops that column
_FIND_SIZE = re.compile(r"-printf\s+'[^']*%s")


def prints_sizes(recipe: Recipe) -> bool:
    """Whether ``recipe``'s first command shows sizes of files: "largest file" recipes
    sort by find's ``%s`` and may cut it away again before printing."""
    first = recipe.templates[0]
    if _SHOWS_SIZES.search(first):
        return True
    found = _FIND_SIZE.search(first)
    return found is not None and not re.search(r"\bcut\b", first[found.end() :])


def _does(act: str, commands: str) -> bool:
    """Whether ``commands`` do ``act``: unpacking an archive ("tar -xzf") packs nothing,
    though it runs the same tool, and a name's extension ("-name '*.tar.gz'") is no tool."""
    if act in ("gzip", "archive"):
        commands = re.sub(DOES["extract"], " ", re.sub(r"\.\w+", " ", commands))
    return re.search(DOES[act], commands) is not None


def runs_unasked(recipe: Recipe, reading: TaskReading) -> bool:
    """Whether ``recipe`` runs a file the task names as a program (its command is that
    file: ``run_script``) while the request does not ask to run anything: "grant the
    script execute permissions" must never execute it."""
    first = re.match(r"\{(\w+)", recipe.templates[0].strip())
    slot = recipe.slots.get(first.group(1)) if first else None
    if slot is None or slot.type not in ("file", "path"):
        return False
    return not lexicon()["acts.run"].says(reading.request)


# What each test of a selection narrows by (``compose.is_selection``), the lexicon entry
# that says it (``selections.*``), and the slots whose value says it too.
_NARROWS: tuple[tuple[re.Pattern[str], str, set[str]], ...] = (
    (re.compile(r"\s-size\b"), "selections.size", {"size"}),
    (
        re.compile(r"\s-(?:mtime|mmin|newermt|newer)\b"),
        "selections.age",
        {"days", "minutes", "date"},
    ),
    (re.compile(r"\s-empty\b"), "selections.empty", set()),
    (re.compile(r"\s-perm\b"), "selections.permissions", {"mode"}),
    (re.compile(r"-name '\.\*'"), "selections.hidden", set()),
)


def narrowings(recipe: Recipe) -> set[str]:
    """What the selection ``recipe`` narrows by ("size", "age", "empty", "permissions",
    "hidden": lexicon ``selections.*``); none for a recipe that is no selection."""
    if not is_selection(recipe):
        return set()
    test = recipe.templates[0]
    return {entry.split(".")[1] for found, entry, _ in _NARROWS if found.search(test)}


def keeps_the_unwanted(recipe: Recipe, reading: TaskReading) -> bool:
    """Whether ``recipe``, no plain selection, acts on or lists files by a property the
    task says they must not have (the reading's ``unwanted``): "delete the files that are
    not empty" is no task for ``find … -empty -delete``. (A plain selection is turned
    around instead: ``compose.negated``.)"""
    if not reading.unwanted or is_selection(recipe):
        return False
    for found, entry, _ in _NARROWS:
        if entry.split(".")[1] not in reading.unwanted:
            continue
        for template in recipe.templates:
            if any(
                not template[: m.start()].rstrip().endswith("!") for m in found.finditer(template)
            ):
                return True
    return False


def narrows_unsaid(recipe: Recipe, values: TaskValues) -> bool:
    """Whether the selection ``recipe`` narrows the files by something the task says
    nothing of: a size, an age, emptiness, permissions or hidden names, by neither a word
    (lexicon ``selections.*``) nor a value for the slot that narrows ("count the log files
    in /srv, subfolders included" asks no files smaller than 1k, whatever the slot's
    default). A selection narrowed so fits the files described only by chance."""
    if not is_selection(recipe):
        return False
    test = recipe.templates[0]
    text = values.reading.text
    lx = lexicon()
    for found, entry, slots in _NARROWS:
        if not found.search(test):
            continue
        said = lx[entry].says(text) or any(
            candidates_for(slot.type, values, slot.choices)
            for slot in recipe.slots.values()
            if slot.type in slots
        )
        if not said:
            return True
    return False


def sort_unsaid(recipe: Recipe, reading: TaskReading) -> bool:
    """Whether ``recipe`` selects a sort of file ("the pictures": jpg, png …) the task does
    not ask about: "how big is the Music folder" names a folder, not the songs in it, and
    "how many PDFs are in my Documents" one extension. The ranker reads a folder's name as
    the sort's word, so such a recipe is offered only when the sort is said, by its word
    or by two of its formats ("the images (.jpg and .png)")."""
    category = category_of(recipe)
    if not category or category in reading.categories:
        return False
    said = {k.lower() for k in reading.kinds}
    return len(said & set(lexicon()[f"kinds.{category}"].words)) < 2


def category_of(recipe: Recipe) -> str:
    """The sort of file ``recipe`` selects ("pictures": its first template names every
    extension the lexicon gives pictures, as ``-iname '*.jpg'``), "" for none."""
    lx = lexicon()
    named = set(re.findall(r"-iname '\*\.(\w+)'", recipe.templates[0]))
    if not named:
        return ""
    for category in dict.fromkeys(lx["kinds.categories"].values.values()):
        if set(lx[f"kinds.{category}"].words) <= named:
            return category
    return ""


# Which way a template limits an age or a size: find's "+N" is more than N ("-mtime +30":
# older than 30 days), "-N" less, and a "!" before the test turns it round ("! -size +N":
# at most N).
_WAYS = {
    "age": re.compile(r"(!\s+)?-m(?:time|min)\s+([+-])\{(?:days|minutes)\}"),
    "size": re.compile(r"(!\s+)?-size\s+([+-])\{size"),
}


def _ways(recipe: Recipe) -> dict[str, str]:
    """The direction of each limit ``recipe``'s first template sets, by measure."""
    found = {}
    for measure, way in _WAYS.items():
        said = {(m.group(2) == "+") != bool(m.group(1)) for m in way.finditer(recipe.templates[0])}
        if len(said) == 1:
            found[measure] = ">" if said == {True} else "<"
    return found


def _selects(does: str) -> str:
    """What a recipe's templates ``does`` select with find: "files" (``-type f`` only),
    "folders" (``-type d`` only), or "" (both, neither, or not find)."""
    files = "-type f" in does
    folders = "-type d" in does
    return "files" if files and not folders else "folders" if folders and not files else ""


def rerank(
    ranked: Sequence[Candidate], recipes: Mapping[str, Recipe], values: TaskValues
) -> list[Candidate]:
    """``ranked`` with each recipe's shape penalty added to its score, best first."""
    shape = shape_of(values)
    if shape.any_case is not None:
        ranked = _case_twins_agree(ranked, recipes, shape.any_case)
    adjusted = [
        replace(c, score=c.score + adjust(recipes[c.name], shape, values))
        if c.name in recipes
        else c
        for c in ranked
    ]
    return sorted(adjusted, key=lambda c: -c.score)


def _case_twins_agree(
    ranked: Sequence[Candidate], recipes: Mapping[str, Recipe], any_case: bool
) -> list[Candidate]:
    """``ranked`` with each pair of case twins (recipes whose first templates differ only
    in grep's ``-i``) scored alike, the one minding case as the task asks above the other.

    The words cannot tell twins apart unless they say "whatever the case": "how many lines
    mention a timeout" ranks the case-minding count far above its twin. The case the task
    asks for (``shape.any_case``) decides between them, so the pair's words score goes
    to the twin it asks for (the one exception to penalties only: the words' evidence was
    for either)."""
    ranked = _with_case_twins(ranked, recipes)
    keys = {c.name: _case_free(recipes[c.name].templates[0]) for c in ranked if c.name in recipes}
    pairs: dict[str, list[float]] = {}
    for c in ranked:
        if c.name in keys:
            pairs.setdefault(keys[c.name][0], []).append(c.score)
    agreed = []
    for c in ranked:
        key, ignores = keys.get(c.name, ("", False))
        scores = pairs.get(key, [])
        if len(scores) < 2:
            agreed.append(c)
        elif ignores == any_case:
            agreed.append(replace(c, score=max(scores)))
        else:
            agreed.append(replace(c, score=min(c.score, max(scores) - 0.01)))
    return agreed


def _with_case_twins(ranked: Sequence[Candidate], recipes: Mapping[str, Recipe]) -> list[Candidate]:
    """``ranked`` and, after each recipe, its case twin when the ranker left the twin out
    ("which notes mention the dentist" ranks the case-minding search alone): the words'
    evidence was for either."""
    twins: dict[str, list[str]] = {}
    for name, recipe in recipes.items():
        twins.setdefault(_case_free(recipe.templates[0])[0], []).append(name)
    names = {c.name for c in ranked}
    out: list[Candidate] = []
    for c in ranked:
        out.append(c)
        if c.name not in recipes:
            continue
        key, ignores = _case_free(recipes[c.name].templates[0])
        for twin in twins.get(key, ()):
            if twin not in names and _case_free(recipes[twin].templates[0])[1] != ignores:
                out.append(replace(c, name=twin))
                names.add(twin)
    return out


_GREP_FLAGS = re.compile(r"(\bgrep\s+(?:-[\w]+\s+)*)")


@functools.lru_cache(maxsize=8192)
def _case_free(template: str) -> tuple[str, bool]:
    """``template`` without grep's case flag (``-i``, or the ``i`` of ``-rliF``), and
    whether it had one: the key case twins share."""
    ignores = False

    def drop(m: re.Match[str]) -> str:
        nonlocal ignores
        out = []
        for flag in m.group(1).split():
            if flag.startswith("-") and not flag.startswith("--") and "i" in flag:
                ignores = True
                flag = flag.replace("i", "")
                if flag == "-":
                    continue
            out.append(flag)
        return " ".join(out) + " "

    return _GREP_FLAGS.sub(drop, template), ignores
