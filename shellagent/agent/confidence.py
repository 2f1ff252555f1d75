"""Whether a recipe's result may be presented as done: what was observed, weighed.

A command that exits 0 proves that it worked, not that it was the command asked for:
"how many files haven't been modified in the last 30 days?" answered with the count of
files modified *within* 30 days ran cleanly, and so did a copy that made a file named
``Desktop`` where the folder ``~/Desktop`` was meant. A user cannot tell such an answer
from a right one, so a result is *claimed* (presented as done, with no stated doubt)
only when what was observed supports it:

- the ranking: the recipe was the ranker's confident choice, or a trial preferred it;
- the result's shape, checked after the run against what the task asks (``Expected``):
  one number for "how many", and a count of 0 only from a folder with no files its
  selection missed; no more lines than the top few asked ("the top 3 IPs"); the space one
  folder takes as one size, of that folder; "the newest photo" as a file of that kind; a
  sum as numbers added up, not lines counted; every file and folder the task names used;
  something changed when a file-changing recipe ran, a destination that is a folder when
  the task puts things into one, only files of the kind asked deleted, an archive that
  holds the folder packed;
- the amounts it selected by ("older than 30 days") said by the task, not a slot's
  default or a guess.

Below that, nothing is said to be done: the last line says what ran in the recipe's plain
words (``says``), that it may not be what was asked, and offers the next candidates.

The checks of an action compare two listings of the places it may touch (``Snapshot``),
made by a read-only command before and after it ran in the session's own shell, so they
see what the command saw (the session's overlays, the task set's throwaway root).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shellagent.recipes import Recipe

__all__ = [
    "BLOCKING",
    "Change",
    "Confidence",
    "Doubt",
    "Entry",
    "Expected",
    "Ranking",
    "Snapshot",
    "action_doubts",
    "archive_command",
    "files_command",
    "limit_doubts",
    "nothing_counted",
    "one_number",
    "question_doubts",
    "says",
    "snapshot_command",
    "unsaid_doubts",
    "unused_names",
]

# The areas whose action recipes change files: "nothing changed" after one is a doubt
# (a process killed or a service restarted changes no file, and says nothing by it).
FILE_AREAS = frozenset(
    {"archives", "backups", "dedup", "files", "links", "perms", "renames", "text", "data"}
)
SNAPSHOT_DEPTH = 3
ROOT_LINES = 2000
ROOTS_MAX = 8
# The doubts that keep a result from being claimed. Every doubt is shown; these are the
# ones measured to mark wrong answers (bench/claims_bench.py).
BLOCKING = frozenset(
    {"count", "empty", "unused", "unchanged", "not-a-folder", "other-kinds", "archive"}
    | {"ranking", "saved", "limit", "part", "kind", "sum", "many", "unsaid", "shallow"}
)


@dataclass(frozen=True)
class Expected:
    """What the task asks of a result, from its reading."""

    count: bool = False  # "how many": the answer is one number
    named: tuple[str, ...] = ()  # the files and folders the task names itself
    kinds: tuple[str, ...] = ()  # extensions of the files it is about ("the .tmp files")
    folders: tuple[str, ...] = ()  # places it puts things into: folders afterwards
    packed: tuple[str, ...] = ()  # folders it packs into an archive
    # the limits it sets, as said ("older than 30 days": ("age", ">30d")): what ran must
    # select by them
    limits: tuple[tuple[str, str], ...] = ()
    # the one folder or file whose space in all is asked ("how much space does ~/Music
    # take"): one size, of it
    size_of: str = ""
    # the extensions the file a superlative picks may have ("the newest photo": jpg, png …)
    pick_exts: tuple[str, ...] = ()
    sum: bool = False  # numbers added up ("what do the amounts add up to"), not a count
    # how many of a ranking were asked for ("the top 3 IPs"): at most that many lines
    at_most: int = 0
    # the amounts the task says, by slot type ("days": ("7",) for "in the last week")
    amounts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    top_level: bool = False  # it says only the folder itself ("directly in", "top level")
    said: str = ""  # the request's words, lower case: what a search may look for


@dataclass(frozen=True)
class Doubt:
    """One reason the result may not be what was asked, in plain words."""

    check: str
    says: str


@dataclass(frozen=True)
class Ranking:
    """How the recipe that ran was chosen."""

    score: float  # the ranker's score, after the shapes reordered the shortlist
    margin: float  # over the best other recipe (inf: no other fits)
    confident: bool  # at least ``RecipeBook.confident``: filled without trying others
    tried: bool = False  # tried before it was shown, and its result fitted best
    runner_up: str = ""
    # the other recipes it was unsure between, tried on copies, did exactly the same: the
    # same output, or the same changes to the same files (whichever was meant, this is it)
    agreed: bool = False


@dataclass(frozen=True)
class Confidence:
    """The evidence about one result and whether it may be claimed."""

    ranking: Ranking
    doubts: tuple[Doubt, ...] = ()

    @property
    def claimed(self) -> bool:
        return not any(d.check in BLOCKING for d in self.doubts)

    def to_json(self) -> dict[str, object]:
        margin = self.ranking.margin
        return {
            "score": round(self.ranking.score, 3),
            "margin": round(margin, 3) if margin != float("inf") else None,
            "confident": self.ranking.confident,
            "tried": self.ranking.tried,
            "agreed": self.ranking.agreed,
            "doubts": [d.check for d in self.doubts],
        }


def ranking_doubts(ranking: Ranking, min_score: float) -> list[Doubt]:
    """A recipe the ranking itself barely fits: its score, after the task's shapes reordered
    the shortlist, below ``min_score``. Measured on the everyday and dev sets
    (bench/claims_bench.py): the score is what separates right answers from wrong ones;
    the lead over the next recipe and a trial's preference add little."""
    if ranking.score >= min_score or ranking.agreed:
        return []
    other = f"; {ranking.runner_up} ranked close" if ranking.runner_up else ""
    return [Doubt("ranking", f"no recipe clearly fits the request{other}")]


# -- questions -------------------------------------------------------------------------------

# one number, maybe with a word or a path beside it ("42", "42 total", "3 /srv/x")
_A_NUMBER = re.compile(r"\s*-?\d+(?:[.,]\d+)?\s*(?:[A-Za-z%]{1,6}\b)?(?:[ \t]+\S+)?\s*")


def one_number(output: str) -> bool:
    """Whether ``output`` is one number, maybe with a unit, a word or a path beside it."""
    return bool(_A_NUMBER.fullmatch(output.strip()))


def question_doubts(expected: Expected, output: str, command: str = "") -> list[Doubt]:
    """What a question's output (printed by ``command``) does not answer of what was
    asked."""
    text = output.strip()
    if not text:
        return [Doubt("empty", "it printed nothing: nothing matched, or it looked elsewhere")]
    if expected.count and not one_number(text):
        lines = len(text.splitlines())
        return [Doubt("count", f"'how many' was asked, and the answer is {lines} lines")]
    return [
        *_part_doubts(expected, text),
        *_kind_doubts(expected, text),
        *_many_doubts(expected, text),
    ] + (_sum_doubts(command) if expected.sum else [])


def _many_doubts(expected: Expected, text: str) -> list[Doubt]:
    """A ranking's first few asked ("the top 3 IPs") answered with more lines than that:
    every distinct address, the whole sorted list (a ``total`` line, as du -c ends, aside)."""
    if not expected.at_most or expected.count:
        return []
    lines = [line for line in text.splitlines() if line.strip()]
    items = [line for line in lines if line.split()[-1].lower() != "total"]
    if len(items) <= expected.at_most:
        return []
    return [Doubt("many", f"{expected.at_most} were asked for, and it printed {len(items)} lines")]


# a size as du and ls print it, then what it is the size of ("3.0M\tMusic/album/")
_SIZE_LINE = re.compile(
    r"\s*\d+(?:[.,]\d+)?\s*(?:[KMGTPE]i?B?|[kmgtp]B?|B|bytes?)?(?:\s+(.*?))?\s*"
)


def _part_doubts(expected: Expected, text: str) -> list[Doubt]:
    """The space one folder takes answered with the sizes of its parts: several sizes (no
    total among them), or the size of a folder inside it ("how much space does ~/Music
    take" answered ``3.0M  Music/album/``)."""
    if not expected.size_of:
        return []
    sized = [m.group(1) or "" for line in text.splitlines() if (m := _SIZE_LINE.fullmatch(line))]
    asked = expected.size_of
    base = posixpath.basename(asked.rstrip("/"))
    paths = [[p for p in said.rstrip("/").split("/") if p] for said in sized]
    # du without -s lists the folders inside, then the folder itself; du -c ends on a total
    if not sized or any(p and p[-1] in (base, "total") for p in paths):
        return []
    if len(sized) > 1:
        return [
            Doubt(
                "part",
                f"the space {asked} takes in all was asked, and it printed {len(sized)} sizes",
            )
        ]
    if base in ("", "~", ".") or not paths[0] or base not in paths[0][:-1]:
        return []
    return [
        Doubt("part", f"it printed the size of {sized[0]}, inside {asked}, not of {asked} in all")
    ]


def _kind_doubts(expected: Expected, text: str) -> list[Doubt]:
    """A superlative's answer ("the newest photo") naming files of none of the kind's
    extensions (``budget.ods``). Only an answer that is a list of files, each line ending
    in a path or a file's name, is judged (not the lines of "the latest log entries"); a
    name without an extension says nothing either way."""
    if not expected.pick_exts:
        return []
    names = []
    for line in text.splitlines():
        last = line.split()[-1] if line.split() else ""
        name = posixpath.basename(last.rstrip("/"))
        if "/" not in last and not _NAMED_FILE.fullmatch(name):
            return []  # a line that is no file's: not a list of files
        names.append(name)
    others = [
        n
        for n in names
        if _NAMED_FILE.fullmatch(n)
        and not {e.lower() for e in n.split(".")[1:]} & set(expected.pick_exts)
    ]
    if not others:
        return []
    kinds = "/".join(f".{e}" for e in expected.pick_exts[:4])
    more = "…" if len(expected.pick_exts) > 4 else ""
    return [Doubt("kind", f"it answered {', '.join(others[:3])}, not a {kinds}{more} file")]


_NAMED_FILE = re.compile(r"[^\s/]*[^\s/.]\.[A-Za-z0-9]{1,6}")
# What in a command counts lines rather than adding numbers up.
_COUNTS_LINES = re.compile(
    r"\bwc\s+(?:-\w*l\w*|--lines)\b|\bwc\s*(?:$|[|;&)])"
    r"|\bgrep\b[^|;&]*\s(?:-[A-Za-z]*c[A-Za-z]*|--count)\b|\bEND\s*\{\s*print\s+NR\b"
)


def _sum_doubts(command: str) -> list[Doubt]:
    """A sum asked ("what do the amounts add up to") answered by a count of lines."""
    counted = _COUNTS_LINES.search(command)
    if counted is None:
        return []
    said = counted.group(0).strip()
    return [Doubt("sum", f"a sum was asked, and what ran counted lines ({said})")]


# What in a command selects files by name: find's name tests, a shell glob.
_NAME_TEST = re.compile(r"-i?name\s+(?:'([^']*)'|\"([^\"]*)\"|(\S+))")
_GLOB = re.compile(r"(?<![\w-])['\"]?(\S*\*\.\w+)")


def nothing_counted(expected: Expected, command: str, output: str) -> tuple[str, ...]:
    """The name patterns a count of 0 selected files by (``*.jpg``): nothing matched them.
    Empty when the output is no count of 0 or the count selected by no name. Whether it is
    evidence depends on what the folder holds (``claims.judge`` looks): a folder with files
    none of which matched is the same evidence as a question that printed nothing."""
    if not expected.count or not one_number(output) or output.split()[0] not in ("0", "0.0"):
        return ()
    found = [next(g for g in m.groups() if g is not None) for m in _NAME_TEST.finditer(command)]
    if not found:
        found = [posixpath.basename(m.group(1).strip("'\"")) for m in _GLOB.finditer(command)]
    return tuple(dict.fromkeys(f for f in found if f))


def unused_names(expected: Expected, command: str, output: str, home: str = "") -> list[Doubt]:
    """The files and folders the task names that neither the command nor its output
    mentions: the recipe answered about something else ("where is my budget.xlsx?"
    answered with the disk use of every folder)."""
    said = f"{command}\n{output}"
    missing = []
    for name in expected.named:
        forms = {name, name.rstrip("/"), posixpath.basename(name.rstrip("/"))}
        if name.startswith("~/") and home:
            forms.add(home.rstrip("/") + name[1:])
        if not any(f and f in said for f in forms):
            missing.append(name)
    if not missing:
        return []
    return [Doubt("unused", f"{', '.join(missing)} played no part in what ran")]


# What in a command selects by an age or a size: find's tests, tools' options, a date or a
# size read and compared.
_SELECTS_BY = {
    "age": re.compile(
        r"-[acm](?:time|min)\b|-newer|--(?:since|until|after|before|newer|older)|\bdate\b|%[TAC]"
    ),
    "size": re.compile(r"-size\b|\bdu\b|%s\b|\bstat\b|--(?:min|max)-size|\bls\b[^|;&]*-\w*S"),
}
_MEASURES = {"age": "an age", "size": "a size"}


def limit_doubts(expected: Expected, command: str) -> list[Doubt]:
    """The limits the task sets ("older than 30 days", "larger than 100MB") that what ran
    does not select by: it took every file ("archive the logs older than 30 days" packed
    the whole folder)."""
    doubts = []
    for measure, said in expected.limits:
        if not _SELECTS_BY[measure].search(command):
            doubts.append(
                Doubt(
                    "limit",
                    f"the request limits by {_MEASURES[measure]} ({said}); what ran did not",
                )
            )
    return doubts


# The slot types that select by an amount: a value the request never said is a guess
# ("the 5 oldest files" moved by "older than 30 days", the slot's default).
_AMOUNTS = ("days", "minutes", "size")
# The slot types a search looks for: a text the request never says is a guess ("when did
# the webshop last start" searched for "s")
_SEARCHED = ("pattern", "text")


def unsaid_doubts(
    types: Mapping[str, str],
    args: Mapping[str, str],
    said: Mapping[str, Sequence[str]],
    words: str = "",
) -> list[Doubt]:
    """The amounts what ran selects by, and the texts it looked for, that the request
    never said: ``types`` are the recipe's slots' types, ``args`` the values it ran with,
    ``said`` the values of each type the request says (``days``: ("7",) for "in the last
    week"), ``words`` the request in lower case. An amount taken from a slot's default,
    or made up, and a text the request does not say, are guesses about what was meant."""
    doubts = []
    for name, value in args.items():
        kind = types.get(name, "")
        if value in ("", None):
            continue
        if kind in _AMOUNTS and str(value) not in said.get(kind, ()):
            doubts.append(
                Doubt("unsaid", f"it took {name} {value}, which the request does not say")
            )
        elif kind in _SEARCHED and words and not _said_in(str(value), words):
            doubts.append(
                Doubt("unsaid", f"it looked for '{value}', which the request does not say")
            )
    return doubts


def _said_in(text: str, words: str) -> bool:
    """Whether ``words`` say ``text`` (any case), from a word's start ("error" in "the
    errors"; not "s" in "last start"); a text shorter than three letters as a whole word."""
    end = r"(?!\w)" if len(text) < 3 else ""
    return re.search(rf"(?<!\w){re.escape(text.lower())}{end}", words) is not None


# -- actions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One listed path: its type (``f`` file, ``d`` folder, ``l`` link …), size, mode and
    modification time as ``find -printf`` gives them."""

    type: str
    size: str
    mode: str
    mtime: str


@dataclass(frozen=True)
class Snapshot:
    """The places an action may touch, listed: absolute path -> entry."""

    home: str
    cwd: str
    entries: Mapping[str, Entry]
    cut: bool = False  # a root had more entries than were listed: removals are not known

    def absolute(self, path: str) -> str:
        if path == "~" or path.startswith("~/"):
            path = self.home + path[1:]
        elif not path.startswith("/"):
            path = posixpath.join(self.cwd, path)
        return posixpath.normpath(path)


def snapshot_command(roots: Iterable[str]) -> str:
    """A read-only command that lists ``roots`` (and the working directory) to
    ``SNAPSHOT_DEPTH`` levels: first ``$HOME`` and ``$PWD``, then one path a line with its
    type, size, mode and modification time (``read_snapshot``). The whole file system and
    the kernel's own trees (/proc, /sys, /dev) are never listed; a root with more than
    ``ROOT_LINES`` entries is cut, and says so (``CUT``)."""
    parts = ['printf \'HOME\\t%s\\nPWD\\t%s\\n\' "$HOME" "$PWD"']
    for root in _unique([".", *roots])[:ROOTS_MAX]:
        if root.rstrip("/") in ("", "~") or root.startswith(("/proc", "/sys", "/dev")):
            continue
        if root.startswith("~/"):
            word = '"$HOME"' + shlex.quote(root[1:])
        else:
            word = shlex.quote(root if not root.startswith("-") else f"./{root}")
        label = shlex.quote(root)
        parts.append(
            f"find {word} -maxdepth {SNAPSHOT_DEPTH} "
            "\\( -path /proc -o -path /sys -o -path /dev \\) -prune -o "
            "-printf '%y\\t%s\\t%m\\t%T@\\t%p\\n' 2>/dev/null "
            f"| awk -v r={label} 'NR <= {ROOT_LINES} {{ print }} "
            f'END {{ if (NR > {ROOT_LINES}) print "CUT\\t" r }}\''
        )
    return "; ".join(parts)


def read_snapshot(lines: Iterable[str]) -> Snapshot:
    home = cwd = ""
    cut = False
    rows: list[tuple[str, Entry]] = []
    for line in lines:
        parts = line.split("\t")
        if len(parts) == 2 and parts[0] in ("HOME", "PWD"):
            home, cwd = (parts[1], cwd) if parts[0] == "HOME" else (home, parts[1])
        elif len(parts) == 2 and parts[0] == "CUT":
            cut = True
        elif len(parts) == 5:
            rows.append((parts[4], Entry(*parts[:4])))
    snapshot = Snapshot(home or "/", cwd or "/", {})
    entries = {snapshot.absolute(path): entry for path, entry in rows}
    return Snapshot(snapshot.home, snapshot.cwd, entries, cut)


@dataclass(frozen=True)
class Change:
    """What differs between two snapshots."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.modified)


def compare(before: Snapshot, after: Snapshot) -> Change:
    old, new = before.entries, after.entries
    return Change(
        added=tuple(p for p in new if p not in old),
        removed=tuple(p for p in old if p not in new),
        modified=tuple(p for p in new if p in old and new[p] != old[p] and new[p].type != "d"),
    )


def files_command(folder: str) -> str:
    """A read-only command that prints one file of ``folder`` (to ``SNAPSHOT_DEPTH``
    levels), or nothing when it holds none."""
    word = _word(folder or ".")
    return f"find {word} -maxdepth {SNAPSHOT_DEPTH} -type f -print -quit 2>/dev/null"


# a command that looks only at the top of a folder: find's -maxdepth 1, or ls without -R
_SHALLOW = re.compile(r"-maxdepth\s+1\b|(?:^|[|;&(]\s*)ls\b(?![^|;&]*\s-\w*R)")


def shallow(expected: Expected, command: str) -> bool:
    """Whether ``command`` looks only at the top of a folder while the request does not
    say that only the folder itself is meant."""
    return not expected.top_level and bool(_SHALLOW.search(command))


def deeper_command(folder: str) -> str:
    """A read-only command that prints one file of a subfolder of ``folder`` (to
    ``SNAPSHOT_DEPTH`` levels), or nothing when its subfolders hold none."""
    word = _word(folder or ".")
    return f"find {word} -mindepth 2 -maxdepth {SNAPSHOT_DEPTH} -type f -print -quit 2>/dev/null"


def _word(path: str) -> str:
    """``path`` as one shell word, ``~`` expanded."""
    if path == "~" or path.startswith("~/"):
        return '"$HOME"' + shlex.quote(path[1:]) if path != "~" else '"$HOME"'
    return shlex.quote(path if not path.startswith("-") else f"./{path}")


def archive_command(archive: str) -> str:
    """A read-only command that lists what an archive holds, one path a line."""
    word = _word(archive)
    if archive.lower().endswith(".zip"):
        return f"unzip -Z1 {word} 2>/dev/null | head -n 2000"
    return f"tar -tf {word} 2>/dev/null | head -n 2000"


def action_doubts(
    expected: Expected,
    area: str,
    before: Snapshot,
    after: Snapshot,
    archive: tuple[str, Sequence[str]] | None = None,
) -> list[Doubt]:
    """What the change an action made does not do of what was asked. ``archive``: the
    archive the action made and what it holds, when it made one."""
    change = compare(before, after)
    doubts: list[Doubt] = []
    known = not (before.cut or after.cut)  # a cut listing shows changes that did not happen
    if area in FILE_AREAS and not change and known:
        doubts.append(Doubt("unchanged", "nothing changed"))
    for folder in expected.folders:
        path = after.absolute(folder)
        entry, was = after.entries.get(path), before.entries.get(path)
        if entry is not None and entry.type != "d" and (was is None or was.type == "d"):
            doubts.append(Doubt("not-a-folder", f"{folder} is now a file, not a folder"))
    if expected.kinds and known:
        kinds = tuple(f".{k.lower().lstrip('.')}" for k in expected.kinds)
        others = [
            p
            for p in change.removed
            if before.entries[p].type != "d" and not p.lower().endswith(kinds)
        ]
        if others:
            shown = ", ".join(posixpath.basename(p) for p in others[:3])
            more = f" and {len(others) - 3} more" if len(others) > 3 else ""
            doubts.append(
                Doubt(
                    "other-kinds",
                    f"it also removed {shown}{more}, not {'/'.join(kinds)} files",
                )
            )
    if archive is not None:
        name, held = archive
        if not held:
            doubts.append(Doubt("archive", f"{name} holds nothing"))
        for folder in expected.packed:
            base = posixpath.basename(after.absolute(folder).rstrip("/"))
            if held and not any(base in p.split("/") for p in held):
                doubts.append(Doubt("archive", f"{name} does not hold {folder}"))
    return doubts


# -- plain words -----------------------------------------------------------------------------


def says(recipe: Recipe, args: Mapping[str, str]) -> str:
    """What a filled recipe does, in its own plain words: its summary and the values it
    was given ("the files changed in the last N days under a folder (days: 30, folder:
    ~/Downloads)")."""
    given = [f"{name}: {value}" for name, value in args.items() if value != ""]
    return recipe.summary + (f" ({', '.join(given)})" if given else "")


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))
