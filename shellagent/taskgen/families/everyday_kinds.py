"""Everyday kinds of request that a first trial answered wrongly or not at all.

"How many photos are in ~/Pictures/trip?", "my latest document", "the oldest song in
~/Music", "the average price in groceries.csv", "how many lines in app.log mention
timeout, whatever the case". Each instance holds files on both sides of the line, so a
wrong reading fails its check: a sort of file said in words has many extensions in any
case (a .PNG, a .heic and one in a subfolder count as photos; a .pdf and a .mp4 do not;
a file of another sort is newer or older than every one asked about), and a CSV figure is
of the column named (its header in another case, decimals, other numeric columns beside
it). The extensions of each sort are the lexicon's
(``shellagent/recipes/data/lexicon/kinds.toml``), the one list the recipes use too.
"""

from __future__ import annotations

from shellagent.recipes.lexicon import lexicon
from shellagent.taskgen import vocab
from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import (
    age,
    join,
    mkdir,
    number,
    path,
    reported,
    token,
    write,
)

PAGE = 4096  # sizes in whole pages: du agrees with them on any file system

# How each sort is said (many, one), where such files live, and stems to name them by.
_SORTS = {
    "pictures": (
        ("photos", "pictures", "images", "pics"),
        ("photo", "picture", "image"),
        "~/Pictures",
        vocab.PHOTO_STEMS,
    ),
    "documents": (("documents", "docs"), ("document",), "~/Documents", vocab.DOC_STEMS),
    "videos": (
        ("videos", "movies", "video files"),
        ("video", "movie"),
        "~/Videos",
        vocab.PHOTO_STEMS,
    ),
    "audio": (
        ("songs", "music files", "audio files"),
        ("song", "recording"),
        "~/Music",
        vocab.PHOTO_STEMS,
    ),
}
# Look-alikes of no sort: their names may say "photo" or "song" but their kind is none
_NO_SORT = ("zip", "csv", "json", "bak", "iso", "log")


def _extensions(sort: str) -> tuple[str, ...]:
    return lexicon()[f"kinds.{sort}"].words


def _find(where: str, sort: str) -> str:
    """The files of ``sort`` below ``where``, as find selects them (any case)."""
    names = " -o ".join(f"-iname '*.{e}'" for e in _extensions(sort))
    return f"find {path(where)} -type f \\( {names} \\)"


def _folder(d: Draw, sort: str) -> tuple[str, str]:
    """A folder for files of ``sort``: its home folder, a trip below it, or a service's."""
    home = _SORTS[sort][2]
    where = d.pick((home, join(home, d.pick(vocab.WORDS)), d.app_dir("data")))
    return where, where


def _sorted_files(d: Draw, sort: str, where: str) -> tuple[list[str], list[str]]:
    """Files of ``sort`` (some extensions in upper case, one in a subfolder) and files of
    other sorts and of none beside them: (wanted paths, other paths)."""
    stems = d.stems(d.num(5, 9), _SORTS[sort][3] + vocab.DOC_STEMS)
    n = d.num(2, len(stems) - 2)
    exts = _extensions(sort)
    wanted = []
    for i, stem in enumerate(stems[:n]):
        ext = d.pick(exts)
        ext = ext.upper() if d.chance(0.3) else ext
        folder = join(where, d.pick(vocab.WORDS)) if i == 0 else where
        wanted.append(join(folder, f"{stem}.{ext}"))
    others_pool = [e for s in _SORTS if s != sort for e in _extensions(s)]
    others_pool = [e for e in others_pool if e not in exts] + list(_NO_SORT)
    others = [join(where, f"{stem}.{d.pick(others_pool)}") for stem in stems[n:]]
    return wanted, others


def _made(files: list[str]) -> list[str]:
    return [mkdir(*sorted({f.rsplit("/", 1)[0] for f in files}))]


def _base(p: str) -> str:
    return p.rsplit("/", 1)[1]


def _count(d: Draw, sort: str) -> Instance:
    where, spoken = _folder(d, sort)
    wanted, others = _sorted_files(d, sort, where)
    said = d.pick(_SORTS[sort][0])
    setup = _made(wanted + others) + [f"echo x > {path(f)}" for f in d.shuffled(wanted + others)]
    task = d.phrase(
        (
            "How many {kind} are in {dir}?",
            "Count the {kind} I keep in {dir}, subfolders included.",
            "how many {kind} do I have under {dir}",
            "What's the number of {kind} in {dir}? Upper-case extensions count too.",
        ),
        kind=said,
        dir=spoken,
    )
    n = len(wanted)
    top_level = sum(1 for f in wanted if f.rsplit("/", 1)[0] == where)
    lower = sum(1 for f in wanted if _base(f).rsplit(".", 1)[1].islower())
    wrong = sorted({top_level, lower, n + len(others), n + 1} - {n})
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(f"{_find(where, sort)} | wc -l",),
        check=number(n),
        answer=f"{{out}} {said} in {where}.",
        slots={"dir": where},
        wrong_answers=tuple(f"{k} {said}" for k in wrong),
        kind="question",
    )


def _by_time(d: Draw, sort: str, newest: bool) -> Instance:
    where, spoken = _folder(d, sort)
    wanted, others = _sorted_files(d, sort, where)
    # distinct ages; a file of another sort is newer (or older) than every one wanted
    days = d.sample(range(2, 300), len(wanted))
    setup = _made(wanted + others)
    for f, n in zip(wanted, days, strict=True):
        setup += [f"echo x > {path(f)}", age(f, n)]
    edge = 0 if newest else 400
    for f in others:
        setup += [f"echo x > {path(f)}", age(f, edge + d.num(0, 1))]
    target = wanted[days.index(min(days) if newest else max(days))]
    said = d.pick(_SORTS[sort][1])
    templates: tuple[str, ...]
    if newest:
        templates = (
            "What's my latest {kind} in {dir}?",
            "Which {kind} in {dir} was changed most recently?",
            "Show me the most recent {kind} under {dir}, subfolders too.",
            "Find the newest {kind} in {dir}.",
        )
    else:
        templates = (
            "What's the oldest {kind} in {dir}?",
            "Which {kind} in {dir} has gone longest without a change?",
            "Find the {kind} under {dir} that was modified longest ago.",
        )
    task = d.phrase(templates, kind=said, dir=spoken)
    order = "-rn" if newest else "-n"
    gold = (f"{_find(where, sort)} -printf '%T@\\t%p\\n' | sort {order} | head -n 1 | cut -f2-",)
    rest = [_base(f) for f in wanted + others if f != target]
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=gold,
        check=reported([_base(target)], rest),
        answer=f"The {'newest' if newest else 'oldest'} {said} in {where}: {{out|names}}.",
        slots={"dir": where},
        wrong_answers=tuple(rest[:3]),
        kind="question",
    )


def _of_sort(d: Draw, sort: str) -> Instance:
    """How many files of ``sort`` a folder holds, or its newest or oldest one. The gold is
    written here: what answers these is the count, newest or oldest the recipe step
    composes at run time from the sort's selection (``pictures_under`` …), no shipped
    recipe to render."""
    asked = d.pick(("count", "newest", "oldest"))
    return _count(d, sort) if asked == "count" else _by_time(d, sort, asked == "newest")


@family(
    "pictures_of_folder",
    "files",
    "how many photos a folder holds, its newest, its oldest",
    composed_from="pictures_under",
)
def pictures_of_folder(d: Draw) -> Instance:
    return _of_sort(d, "pictures")


@family(
    "documents_of_folder",
    "files",
    "how many documents a folder holds, the latest one",
    composed_from="documents_under",
)
def documents_of_folder(d: Draw) -> Instance:
    return _of_sort(d, "documents")


@family(
    "videos_of_folder",
    "files",
    "how many videos a folder holds, its newest, its oldest",
    composed_from="videos_under",
)
def videos_of_folder(d: Draw) -> Instance:
    return _of_sort(d, "videos")


@family(
    "songs_of_folder",
    "files",
    "how many songs a folder holds, its newest, its oldest",
    composed_from="audio_under",
)
def songs_of_folder(d: Draw) -> Instance:
    return _of_sort(d, "audio")


_COLUMNS = (  # (header as written, how it is said, what the rows are)
    ("Amount", ("amount", "amounts"), "expenses"),
    ("PRICE", ("price", "prices"), "groceries"),
    ("total", ("total", "totals"), "invoices"),
    ("Cost", ("cost", "costs"), "purchases"),
)


@family("csv_column_average", "data", "the average of a CSV column named by its header")
def csv_column_average(d: Draw) -> Instance:
    header, words, stem = d.pick(_COLUMNS)
    where = d.pick(("~/Documents", "~/Documents/finance", "/srv/books"))
    file = join(where, f"{stem}-{d.num(2019, 2025)}.csv")
    rows = d.num(4, 9)
    # whole cents that average to whole cents: the answer is exact in any tool
    cents = [d.num(100, 99999) for _ in range(rows - 1)]
    cents.append(d.num(1, 99) * rows - sum(cents) % rows + 100 * rows)
    qty = [d.num(1, 12) for _ in range(rows)]
    items = d.sample(vocab.PRODUCTS, rows)
    lines = [f"date,item,qty,{header}"]
    lines += [
        f"2024-{i % 12 + 1:02d}-{d.num(10, 28)},{item},{k},{c // 100}.{c % 100:02d}"
        for i, (item, k, c) in enumerate(zip(items, qty, cents, strict=True))
    ]
    mean = sum(cents) // rows
    said = f"{mean // 100}.{mean % 100:02d}"
    word = d.pick(words)
    task = d.phrase(
        (
            "What's the average {word} in {file}?",
            "On average, what is the {word} in {file}? The {word} column, decimals and all.",
            "what's the mean of the {word} column of {file}",
        ),
        word=word,
        file=file,
    )
    total = sum(cents)
    use = d.recipe("csv_average_column", file=file, field=header)
    wrong = sorted({f"{total // 100}.{total % 100:02d}", f"{sum(qty) / rows:.2f}"} - {said})
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *lines)),
        gold=(use.command,),
        check=token(said),
        answer=f"The average {word} in {file} is {{out}}.",
        slots={"file": file, "field": header},
        wrong_answers=tuple(wrong),
        kind="question",
        recipes=(use,),
    )


@family("count_lines_any_case", "text", "how many lines mention a word, whatever its case")
def count_lines_any_case(d: Draw) -> Instance:
    where = d.pick(("/var/log/" + d.service(), "~/logs", "/srv/app/logs"))
    file = join(where, d.pick(("app.log", "server.log", "sync.log", "worker.log")))
    word = d.pick(("timeout", "refused", "retry", "denied", "expired", "quota"))
    forms = (word, word.capitalize(), word.upper())
    marked = [f"request {d.num(1, 999)} {d.pick(forms)} after {d.num(2, 60)}s" for _ in range(5)]
    marked = marked[: d.num(2, 5)]
    plain = [f"request {d.num(1, 999)} ok in {d.num(2, 90)}ms" for _ in range(d.num(3, 8))]
    lines = d.shuffled(marked + plain)
    task = d.phrase(
        (
            "How many lines in {file} mention {word}, whatever the case?",
            "Count the lines of {file} containing {word}, upper or lower case alike.",
            "how many lines of {file} say {word}? {cap} and {upper} count too",
        ),
        file=file,
        word=word,
        cap=word.capitalize(),
        upper=word.upper(),
    )
    n = len(marked)
    exact = sum(1 for line in marked if f" {word} " in line)
    use = d.recipe("count_matching_lines_any_case", file=file, pattern=word)
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *lines)),
        gold=(use.command,),
        check=number(n),
        answer=f"{{out}} lines of {file} mention {word}.",
        slots={"file": file, "pattern": word},
        wrong_answers=tuple(f"{k} lines" for k in sorted({exact, len(lines), n + 1} - {n})),
        kind="question",
        recipes=(use,),
    )
