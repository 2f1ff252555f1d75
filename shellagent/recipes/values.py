"""What a task names, as slot values: its reading plus what the working directory holds.

A 135M model fills a slot well when it only has to pick: the grammar built from these
candidates admits, for most slot types, only the values the task itself names, and the
model's choice is which of them goes where. The values come from the task's reading
(``shellagent.recipes.reading``: quoted strings, paths, numbers, extensions, sizes,
durations, times, dates, modes, capitalised words); a name the task gives without its
folder ("access.log", "my Downloads folder", "the webshop project") is looked up in a
listing of the working directory (and of the folders the task names), so the slot gets a
path that exists.

Candidates are ordered best first: what the task says explicitly before what the listing
suggests, in the order the task says it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from shellagent.recipes.reading import TaskReading, looks_like_file_name, looks_like_path

__all__ = [
    "ARCHIVE_KINDS",
    "TaskValues",
    "candidates_for",
    "listed_folders",
    "listed_paths",
    "slot_candidates",
    "task_values",
]


@dataclass(frozen=True)
class TaskValues:
    """Everything a task names, sorted by kind, best first; ``reading`` is the task's."""

    reading: TaskReading
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
    days_of_year: tuple[str, ...] = ()  # "9 October": ("10-09",)
    modes: tuple[str, ...] = ()
    words: tuple[str, ...] = ()  # upper-case and capitalised words, names after "named"
    texts: tuple[str, ...] = ()  # quoted words the request looks for ("the word 'timeout'")
    names: tuple[str, ...] = ()
    signals: tuple[str, ...] = ()
    # folders said only as where a result goes: the folder of the file an answer is saved
    # in ("save the list to /tmp/x.txt": /tmp) or of a name put in one ("an archive named
    # old.tar.gz in /tmp"); never what a task's files are read from
    output_dirs: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()  # the columns and keys of the CSV and JSON files it names
    number_fields: tuple[str, ...] = ()  # those of them that hold numbers
    holding_fields: tuple[str, ...] = ()  # those of them holding a value it says ("Berlin")
    held_values: tuple[str, ...] = ()  # those values, as the files have them
    listing: tuple[str, ...] = field(default=(), repr=False)


def _unique(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


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


def tidy(entry: str) -> str:
    """A listing entry as a slot value: ``./x`` as ``x``, a folder without its slash. An
    entry whose name starts with ``~`` keeps its ``./``: ``~/reports`` would be the home's
    reports folder, not the working directory's folder named ``~``."""
    text = entry[2:] if entry.startswith("./") and not entry.startswith("./~") else entry
    return text.rstrip("/") or "."


def task_values(reading: TaskReading, listing: Sequence[str] = (), home: str = "") -> TaskValues:
    """The values ``reading``'s task names; ``listing`` (``listing.listing_command``'s
    lines) resolves names given without their folder; ``home`` lets a listed path under it
    read as ``~/…``."""
    task = reading.text
    word_set = {w.lower().strip(".") for w in re.findall(r"[\w.-]+", task)}
    explicit = reading.paths
    listed_dirs = [e for e in listing if e.endswith("/")]
    listed_files = [e for e in listing if not e.endswith("/")]

    dirs: list[str] = []
    files: list[str] = []
    outputs: list[str] = []
    listed = {tidy(e) for e in listing}
    listed_as_dirs = set(listed_dirs)
    resolved: set[str] = set()  # names the listing found elsewhere: not offered as written
    for path in explicit:
        last = path.rstrip("/").rsplit("/", 1)[-1]
        # "/etc/cron.daily" looks like a file; the listing knows it is a folder
        is_file = (
            looks_like_file_name(last)
            and not path.endswith("/")
            and path.rstrip("/") + "/" not in listed_as_dirs
        )
        if "/" not in path and not path.startswith("~") and is_file:
            found = _resolve([path], listed_files, word_set)
            if found:
                files += [tidy(f) for f in found]
                resolved.add(path)  # the name stands for what the listing found
                continue
            joined = list(reading.joined.get(path, ()))
            files += [*joined, path]
            # "a file named x.txt in /tmp" is written there, never as x.txt here
            outputs += joined or [path]
            continue
        if "/" in path and not path.startswith(("/", "~", ".")) and path not in listed:
            # "Documents/contacts.csv": look for it below the working directory
            found = [e for e in listing if tidy(e).endswith("/" + path.rstrip("/"))]
            if found:
                (dirs if found[0].endswith("/") else files).append(tidy(found[0]))
                resolved.add(path)
                continue
        if is_file:
            files.append(path)
            parent = path.rsplit("/", 1)[0]
            if parent and parent != path:
                dirs.append(parent)
            if path.startswith("/tmp/") or not any(tidy(e) == path for e in listing):
                outputs.append(path)
        else:
            dirs.append(path.rstrip("/") if path not in ("/", "~/") else path)
    # Names given without a path: "my Downloads folder", "the webshop project".
    plain_lower = [w.lower().strip(".") for w in reading.plain]
    dirs += [tidy(d) for d in _resolve(plain_lower, listed_dirs, word_set)]
    files += [tidy(f) for f in _resolve(plain_lower, listed_files, word_set)]
    # A file named by its stem: "my contacts file" → contacts.csv; not a word that names
    # a folder the task writes ("my notes in ~/Documents/notes") or what a text speaks of
    # ("notes that mention the dentist": not dentist.md)
    written = {p.rstrip("/").rsplit("/", 1)[-1].lower() for p in explicit}
    not_stems = written | {w.lower() for w in reading.spoken_of}
    stems: dict[str, list[str]] = {}
    for entry in listed_files:
        base = tidy(entry).rsplit("/", 1)[-1]
        stem = base.split(".", 1)[0].lower()
        if stem in plain_lower and len(stem) > 3 and stem not in not_stems:
            stems.setdefault(stem, []).append(entry)
    for stem in sorted(stems, key=plain_lower.index):
        files += [
            tidy(e)
            for e in _resolve(
                [e.rstrip("/").rsplit("/", 1)[-1] for e in stems[stem]], stems[stem], word_set
            )
        ]
    # "the .deb installer in my Downloads": the one file of that kind where the task looks
    inside = tuple(d.rstrip("/") + "/" for d in dirs)
    for kind in reading.one_of_kind:
        of_kind = [
            tidy(e)
            for e in listed_files
            if tidy(e).lower().endswith("." + kind) and (not inside or tidy(e).startswith(inside))
        ]
        if len(of_kind) == 1:
            files.append(of_kind[0])
    output_dirs = _output_dirs(reading)
    if home:
        dirs = [_home(d, home) for d in dirs]
        files = [_home(f, home) for f in files]
        output_dirs = [_home(d, home) for d in output_dirs]

    quoted = [q.text for q in reading.quoted]
    exts = list(reading.kinds)
    # the kinds of file to select by name: not the kind of the file an answer is saved
    # in ("… and save its name and size to /tmp/largest.txt" selects no .txt files)
    selected = list(reading.kinds)
    for f in files:
        ext = PurePosixPath(f).suffix.lstrip(".")
        if ext and f in explicit:
            exts.append(ext.lower())
            if f not in outputs:
                selected.append(ext.lower())
    return TaskValues(
        reading=reading,
        paths=_unique([*(p for p in explicit if p not in resolved), *dirs, *files]),
        dirs=_unique(dirs),
        files=_unique(files),
        outputs=_unique(outputs),
        quoted=_unique([q for q in quoted if not looks_like_path(q)]),
        numbers=reading.numbers,
        exts=_unique(exts),
        globs=_unique([*reading.quoted_globs, *(f"*.{e}" for e in _unique(selected))]),
        sizes=reading.sizes,
        days=reading.days,
        minutes=reading.minutes,
        times=reading.times,
        dates=reading.dates,
        days_of_year=reading.days_of_year,
        modes=reading.modes,
        words=reading.words,
        texts=reading.look_for,
        names=reading.names,
        signals=reading.signals,
        output_dirs=_unique(output_dirs),
        listing=tuple(listing),
    )


def _output_dirs(reading: TaskReading) -> list[str]:
    """The folders ``reading``'s task says only as where a result goes: the folder of the
    file it saves an answer in ("save the list to /tmp/x.txt") and the folder it puts a
    name in after saying the name ("named x.tar.gz in '/tmp'"), unless it says that
    folder anywhere else too ("the logs in /tmp … to /tmp/x.txt": /tmp is read from; "in
    the same directory": the one read from)."""
    text = reading.text
    found = []
    output = reading.output
    if "/" in output.strip("/") and output in text:
        folder = output.rsplit("/", 1)[0]
        if text.count(folder) == text.count(output):
            found.append(folder)
    for name, joined in reading.joined.items():
        for path in joined:
            folder = path.rsplit("/", 1)[0] or "/"
            at = text.find(name)
            said = [m.start() for m in re.finditer(re.escape(folder), text)]
            if said and all(s > at for s in said):
                found.append(folder)
    return found


def _home(path: str, home: str) -> str:
    if home and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")) :]
    return path


# What a task may call an archive's kind: "a tar.gz archive", "as a .zip". A bare kind
# is never the archive's name (it would write a file called "tar.gz").
ARCHIVE_KINDS = ("tar.gz", "tgz", "tar.xz", "txz", "tar.bz2", "tbz2", "tar.zst", "tar", "zip")
_ARCHIVE_SUFFIXES = tuple(f".{k}" for k in ARCHIVE_KINDS) + (".gz", ".bz2", ".xz", ".7z")


def _archive_names(values: TaskValues) -> list[str]:
    """An archive slot's candidates: the files and paths the task names that are not a
    folder it names nor a bare kind, then, for each folder it names, the folder's name
    with the kind the task asks for (``~/Documents`` + "tar.gz" -> ``Documents.tar.gz``,
    written in the working directory)."""
    joined = values.reading.joined
    named = [
        p
        for p in _unique([*values.files, *values.paths])
        if p not in values.dirs
        and p.lstrip(".").lower() not in ARCHIVE_KINDS
        and not joined.get(p)  # "old.tar.gz in /tmp" is /tmp/old.tar.gz
    ]
    # "config.php inside ~/Downloads/site.tar.gz": the archive is the one named like one
    named.sort(key=lambda p: not p.lower().endswith(_ARCHIVE_SUFFIXES))
    mentioned = {*values.exts, *values.reading.made_kinds}
    mentioned |= {p.lstrip(".").lower() for p in values.files}
    kind = next((k for k in ARCHIVE_KINDS if k in mentioned), "")
    if not kind and "gz" in mentioned:
        kind = "tar.gz"
    derived = []
    for folder in values.dirs:
        if folder in values.output_dirs:  # where the archive goes, not what it holds
            continue
        base = folder.rstrip("/").rsplit("/", 1)[-1].lstrip(".~")
        if re.fullmatch(r"[\w@+-][\w.@+-]*", base or ""):
            derived.append(f"{base}.{kind or 'tar.gz'}")
    return list(_unique([*named, *derived]))


_ZONE = re.compile(r"(?:[A-Z][A-Za-z0-9_+-]*)(?:/[A-Z][A-Za-z0-9_+-]*){1,2}|UTC|GMT")


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
        joined = values.reading.joined
        rest = [p for p in values.files if p not in values.outputs and not joined.get(p)]
        return list(values.outputs) + rest
    if slot_type == "glob":
        return list(values.globs)
    if slot_type == "ext":
        return list(values.exts)
    # a file named without a folder may be what to look for ("where is settings.py")
    bare = [f for f in values.files if "/" not in f]
    # what the request quotes to look for before what its context quotes ("the 'x' service")
    if slot_type in ("pattern", "text"):
        mentioned = values.reading.mentioned
        # a value the named file holds ("who is the admin in users.json": admin) before
        # an unquoted word the task merely mentions
        said = [
            *values.texts,
            *values.quoted,
            *values.held_values,
            *mentioned,
            *values.reading.spoken_of,  # "notes that mention the dentist"
            *values.reading.events,  # "when did the backup last fail": fail
            *values.words,
            *values.names,
            *bare,
        ]
        return list(_unique(said))
    if slot_type == "key" and values.fields:
        return values.reading.fields_first(values.fields, values.holding_fields)
    if slot_type in ("name", "word", "key"):
        return [
            w
            for w in _unique([*values.names, *values.texts, *values.quoted, *values.words, *bare])
            if re.fullmatch(r"[A-Za-z0-9._@+][A-Za-z0-9._@+-]*", w)
        ]
    if slot_type in ("user", "group"):
        return [
            w
            for w in _unique([*values.names, *values.quoted, *values.reading.excluded])
            if re.fullmatch(r"[a-z_][a-z0-9_-]*", w)
        ]
    if slot_type == "branch":
        return [
            w
            for w in _unique([*values.names, *values.quoted, *values.reading.excluded])
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
    if slot_type == "zone":  # "Europe/Paris" reads as a relative path; "UTC" as a word
        said = [p for p in values.reading.paths if _ZONE.fullmatch(p)]
        return list(_unique([*said, *(w for w in values.words if _ZONE.fullmatch(w))]))
    if slot_type == "day":  # a date's day too, when a recipe reads days alone
        return list(_unique([*values.days_of_year, *(d[5:] for d in values.dates)]))
    if slot_type == "signal":
        return list(values.signals)
    if slot_type == "choice":
        exact = [c for c in choices if c in values.words or c in values.quoted]
        return list(_unique([*exact, *_choices_said(choices, values.reading.text)]))
    return []


def _choices_said(choices: Sequence[str], text: str) -> list[str]:
    """The choices ``text`` says as words, any case, or with an ending ("the warnings":
    WARN, then WARNING; "sorted by sizes": size), in their declared order."""
    # "md5", "SHA-256": sha256
    said = {w.lower().replace("-", "") for w in re.findall(r"[A-Za-z][A-Za-z0-9]*(?:-\d+)?", text)}
    return [
        c
        for c in choices
        if c.lower() in said
        or (len(c) >= 4 and any(w.startswith(c.lower()) and len(w) - len(c) <= 4 for w in said))
    ]


# Slots that name where something goes: the value after "to"/"into" is theirs.
_DESTINATIONS = {"dest", "destination", "target", "to", "into", "out", "output", "backup"}
_PATH_TYPES = {"dir", "file", "path", "output", "archive"}
# slots whose values are started different from an earlier slot's of the same type
_DISTINCT_TYPES = {*_PATH_TYPES, "ext"}


def _as_folder(value: str, reading: TaskReading) -> str:
    """A destination the reading says is a folder, written as one ("~/Desktop/"): ``cp x
    ~/Desktop`` makes a file named Desktop when the folder is missing, ``cp x ~/Desktop/``
    fails and says so."""
    said = reading.dest.rstrip("/")
    if not reading.dest_folder_said or not said or value.endswith("/"):
        return value
    if value == said or value.rstrip("/").rsplit("/", 1)[-1] == said.rsplit("/", 1)[-1]:
        return value + "/"
    return value


def listed_paths(values: TaskValues) -> set[str]:
    """Every path the listing shows, as slot values."""
    return {tidy(e) for e in values.listing}


def listed_folders(values: TaskValues) -> set[str]:
    """The paths the listing shows are folders, as slot values."""
    return {tidy(e) for e in values.listing if e.endswith("/")}


def slot_candidates(
    slots: Sequence[tuple[str, str, Sequence[str]]], values: TaskValues
) -> list[list[str]]:
    """The candidates of each of a recipe's slots (``(name, type, choices)``, declared
    order), best first: ``candidates_for`` each, then the paths the task names after
    "to"/"into" first for a destination slot ("dest", an output) and last for the others,
    a destination the reading says is a folder written with its ``/``, and slots of the
    same kind of value started on different values ("move x.log to /srv/old": the source
    and the destination are not both ``x.log``; "rename the .jpeg files to .jpg": the old
    and the new extension are not both ``jpeg``)."""
    result: list[list[str]] = []
    firsts: set[str] = set()
    for name, slot_type, choices in slots:
        found = candidates_for(slot_type, values, choices)
        if slot_type in _PATH_TYPES and values.reading.text and len(found) > 1:
            destination = name in _DESTINATIONS or slot_type == "output"
            going = [v for v in found if values.reading.goes_to(v)]
            staying = [v for v in found if v not in going]
            found = [*going, *staying] if destination else [*staying, *going]
        if name in ("archive", "tarball", "zip") and slot_type in _PATH_TYPES:
            # an archive slot of type file: the file named like an archive first
            found = sorted(found, key=lambda v: not v.lower().endswith(_ARCHIVE_SUFFIXES))
        if name in _DESTINATIONS and slot_type == "path":  # a "dir" slot is made if missing
            found = [_as_folder(v, values.reading) for v in found]
        if slot_type == "dir" and name not in _DESTINATIONS and values.output_dirs:
            # where the result goes is no folder to read from, unless nothing else is said
            kept = [v for v in found if v not in values.output_dirs]
            found = kept or found
        if slot_type in _DISTINCT_TYPES and found and found[0] in firsts:
            unused = [v for v in found if v not in firsts]
            if unused:
                found = [unused[0], *(v for v in found if v != unused[0])]
        if slot_type in _DISTINCT_TYPES and found:
            firsts.add(found[0])
        result.append(found)
    return result
