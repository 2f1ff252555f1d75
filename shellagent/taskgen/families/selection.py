"""Files chosen by age or size in either direction, and exactly the kind asked for.

People say a direction many ways ("haven't been touched for 30 days", "newer than a
week", "at least 5 MB", "not bigger than 1 MB"), and an answer in the other direction
looks just as plausible on screen; so each direction is its own family, each instance
holds files on both sides of the line, and its check refuses the other side. The kind
asked ("the .tmp files") is exactly that kind: editor leftovers and look-alike names stay.
"""

from __future__ import annotations

from shellagent.taskgen import vocab
from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import (
    age,
    all_of,
    exists,
    fill,
    has,
    join,
    lacks,
    missing,
    mkdir,
    number,
    path,
    reported,
)

_EXTS = ("txt", "md", "csv", "pdf", "odt", "json", "jpg", "docx")


def _names(d: Draw, k: int, exts: tuple[str, ...] = _EXTS) -> list[str]:
    return [f"{stem}.{d.pick(exts)}" for stem in d.stems(k, vocab.DOC_STEMS + vocab.PHOTO_STEMS)]


def _spread(d: Draw, where: str, names: list[str]) -> list[str]:
    """The names placed under ``where``, a third of them in a subfolder (the selections
    look below a folder, not only in it)."""
    sub = d.pick(vocab.WORDS)
    return [join(where, sub, n) if i % 3 == 2 else join(where, n) for i, n in enumerate(names)]


def _by_age(d: Draw) -> tuple[str, str, int, list[str], list[str], list[str]]:
    """A folder of files, some changed within the last ``days`` days and the others
    untouched for longer: (dir, spoken dir, days, setup, recent paths, old paths)."""
    where, spoken = d.some_dir()
    # more days than files: the task must not hold the count ("… in 7 days" answers 7)
    days = d.pick((10, 14, 30, 60, 90))
    files = _spread(d, where, _names(d, d.num(5, 9)))
    n_recent = d.num(1, len(files) - 2)
    recent, old = files[:n_recent], files[n_recent:]
    setup = [mkdir(*sorted({f.rsplit("/", 1)[0] for f in files}))]
    for f in recent:
        setup += [f"echo now > {path(f)}", age(f, d.num(0, days - 2), 2)]
    for f in old:
        setup += [f"echo then > {path(f)}", age(f, days + d.num(3, 120))]
    return where, spoken, days, setup, recent, old


def _base(p: str) -> str:
    return p.rsplit("/", 1)[1]


@family("older_than_days", "files", "the files not changed in the last N days")
def older_than_days(d: Draw) -> Instance:
    where, spoken, days, setup, recent, old = _by_age(d)
    task = d.phrase(
        (
            "Which files in {dir} have gone {days} days without being modified?",
            "List the files under {dir} that nobody has touched for {days} days.",
            "What in {dir} has gone unchanged for more than {days} days? Subfolders count.",
            "Show me the files in {dir} that are older than {days} days.",
        ),
        dir=spoken,
        days=days,
    )
    use = d.recipe("older_than_days", dir=where, days=days)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=reported([_base(f) for f in old], [_base(f) for f in recent]),
        answer=f"Not changed in the last {days} days: {{out|names}}.",
        slots={"dir": where, "days": str(days)},
        wrong_answers=(", ".join(_base(f) for f in recent), ", ".join(map(_base, old + recent))),
        kind="question",
        recipes=(use,),
    )


@family("count_older_than_days", "files", "how many files were not changed in N days")
def count_older_than_days(d: Draw) -> Instance:
    where, spoken, days, setup, recent, old = _by_age(d)
    task = d.phrase(
        (
            "How many files in {dir} have not been changed in the last {days} days?",
            "Give me a count of the stale files in {dir}: no change for {days} days.",
            "How many files in {dir}, subfolders included, are older than {days} days?",
            "How many of the files in {dir} went {days} days or more without an edit?",
        ),
        dir=spoken,
        days=days,
    )
    wrong = sorted({len(recent), len(recent) + len(old), len(old) + 1} - {len(old)})
    use = d.recipe("count_older_than_days", dir=where, days=days)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=number(len(old)),
        answer=f"{{out}} files in {where} were not changed in the last {days} days.",
        slots={"dir": where, "days": str(days)},
        wrong_answers=tuple(f"{n} files" for n in wrong),
        kind="question",
        recipes=(use,),
    )


@family("count_recently_modified", "files", "how many files changed in the last N days")
def count_recently_modified(d: Draw) -> Instance:
    where, spoken, days, setup, recent, old = _by_age(d)
    task = d.phrase(
        (
            "How many files in {dir} were changed in the last {days} days?",
            "Count the files under {dir} modified within the past {days} days.",
            "How many files in {dir} are newer than {days} days, subfolders included?",
            "How many files have I edited in {dir} during the last {days} days?",
        ),
        dir=spoken,
        days=days,
    )
    wrong = sorted({len(old), len(recent) + len(old), len(recent) + 1} - {len(recent)})
    use = d.recipe("count_recently_modified", dir=where, days=days)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=number(len(recent)),
        answer=f"{{out}} files in {where} were changed in the last {days} days.",
        slots={"dir": where, "days": str(days)},
        wrong_answers=tuple(f"{n} files" for n in wrong),
        kind="question",
        recipes=(use,),
    )


def _by_size(d: Draw) -> tuple[str, str, int, list[str], list[tuple[str, int]]]:
    """A folder of files of sizes well apart from a limit in KB: (dir, spoken dir, limit,
    setup, (path, bytes) of each file)."""
    where, spoken = d.some_dir()
    limit = d.pick((50, 100, 200, 500))
    files = _spread(d, where, _names(d, d.num(5, 8)))
    sizes = [int(limit * 1024 * d.pick((1, 2, 3, 5, 7, 13, 16, 20, 25, 30)) / 10) for _ in files]
    setup = [mkdir(*sorted({f.rsplit("/", 1)[0] for f in files}))]
    setup += [fill(f, n, d.pick(vocab.WORDS)) for f, n in zip(files, sizes, strict=True)]
    return where, spoken, limit, setup, list(zip(files, sizes, strict=True))


def _size_question(d: Draw, templates: tuple[str, ...], keep: str, recipe: str) -> Instance:
    """A question for the files on one side of a limit: ``keep`` says which side
    ("over", "at_least", "under", "at_most"); ``recipe`` is the recipe that lists them,
    given the limit in KB. One file of each instance sits at the limit
    itself (``at_least``: 1024 bytes a KB; ``at_most``: 1000), so a bound said inclusive
    is told from a strict one whatever a KB is taken to be."""
    where, spoken, limit, setup, files = _by_size(d)
    if keep in ("at_least", "at_most"):
        edge = join(where, f"{d.pick(vocab.DOC_STEMS)}-edge.{d.pick(_EXTS)}")
        exact = limit * 1024 if keep == "at_least" else limit * 1000
        setup.append(fill(edge, exact, d.pick(vocab.WORDS)))
        files.append((edge, exact))
    bound = limit * 1024
    sides = {
        "over": lambda n: n > bound,
        "at_least": lambda n: n >= bound,
        "under": lambda n: n < bound,
        "at_most": lambda n: n <= bound,
    }
    inside = [_base(f) for f, n in files if sides[keep](n)]
    outside = [_base(f) for f, n in files if not sides[keep](n)]
    if not inside or not outside:  # both sides are needed to tell a direction
        return _size_question(d, templates, keep, recipe)
    task = d.phrase(templates, dir=spoken, limit=limit)
    use = d.recipe(recipe, dir=where, size=f"{limit}k")
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=reported(inside, outside),
        answer="These files: {out|names}.",
        slots={"dir": where, "limit_kb": str(limit)},
        wrong_answers=(", ".join(outside), ", ".join(inside + outside)),
        kind="question",
        recipes=(use,),
    )


@family("find_larger_than", "files", "which files are bigger than a size")
def find_larger_than(d: Draw) -> Instance:
    templates = (
        "Which files in {dir} are bigger than {limit} KB?",
        "List everything under {dir} that is more than {limit}K.",
        "Find the files in {dir} (subfolders too) over {limit} kilobytes.",
    )
    return _size_question(d, templates, "over", "find_larger_than")


@family("find_smaller_than", "files", "which files are smaller than a size")
def find_smaller_than(d: Draw) -> Instance:
    templates = (
        "Which files in {dir} are smaller than {limit} KB?",
        "List the files under {dir} that are less than {limit}K.",
        "Find the files in {dir}, subfolders included, under {limit} kilobytes.",
    )
    return _size_question(d, templates, "under", "find_smaller_than")


@family("find_at_least_size", "files", "which files are at least a size")
def find_at_least_size(d: Draw) -> Instance:
    templates = (
        "Which files in {dir} are at least {limit} KB?",
        "List the files under {dir} of {limit}K or more.",
        "Find everything in {dir} that is no smaller than {limit} kilobytes.",
    )
    return _size_question(d, templates, "at_least", "find_at_least_size")


@family("find_at_most_size", "files", "which files are not bigger than a size")
def find_at_most_size(d: Draw) -> Instance:
    templates = (
        "Which files in {dir} are not bigger than {limit} KB?",
        "List the files under {dir} of {limit}K or less.",
        "Find everything in {dir} that is at most {limit} kilobytes.",
    )
    return _size_question(d, templates, "at_most", "find_at_most_size")


@family("oldest_file", "files", "the file modified longest ago")
def oldest_file(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    names = _names(d, d.num(4, 8))
    hours = sorted(d.sample(range(1, 900), len(names)), reverse=True)
    setup = [mkdir(where)]
    for n, h in zip(names, hours, strict=True):
        setup += [f"echo v > {path(join(where, n))}", age(join(where, n), h // 24, h % 24)]
    task = d.phrase(
        (
            "Which file in {dir} is the oldest?",
            "What's the least recently changed file in {dir}?",
            "Find the file in {dir} that has gone the longest without an edit.",
        ),
        dir=spoken,
    )
    use = d.recipe("oldest_file", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(has(names[0]), lacks(*names[1:])),
        answer=f"The oldest file in {where} is {{out}}.",
        slots={"dir": where},
        wrong_answers=(names[-1], names[1]),
        kind="question",
        recipes=(use,),
    )


@family("delete_by_extension", "files", "delete the files of exactly one extension")
def delete_by_extension(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    ext = d.pick(("tmp", "bak", "part", "log", "pyc", "orig"))
    stems = d.stems(d.num(6, 9), vocab.DOC_STEMS + vocab.CODE_STEMS)
    n = d.num(2, len(stems) - 4)
    gone = _spread(d, where, [f"{s}.{ext}" for s in stems[:n]])
    a, b, c, *rest = stems[n:]
    others = [join(where, f"{a}.txt~"), join(where, f".{b}.md.swp"), join(where, f"{c}.{ext}.txt")]
    others += [join(where, f"{s}.{d.pick(('md', 'csv', 'py', 'txt'))}") for s in rest]
    setup = [mkdir(*sorted({f.rsplit("/", 1)[0] for f in gone + others}))]
    setup += [f"echo x > {path(f)}" for f in gone + others]
    task = d.phrase(
        (
            "Remove the .{ext} files from {dir} and its subfolders. Nothing else goes.",
            "Delete every *.{ext} file under {dir}, and only those.",
            "Get rid of the files ending in .{ext} anywhere in {dir}; leave all other files.",
        ),
        ext=ext,
        dir=spoken,
    )
    use = d.recipe("delete_by_extension", dir=where, ext=ext)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"find {path(where)} -type f | sort"),
        check=all_of(*(missing(f) for f in gone), *(exists(f) for f in others)),
        answer=f"Deleted the .{ext} files; left: {{out2|names}}.",
        slots={"dir": where, "ext": ext},
        recipes=(use,),
    )


@family("move_images_to_folder", "files", "move the pictures of a folder into another")
def move_images_to_folder(d: Draw) -> Instance:
    src, spoken = d.pick((("~/Downloads", "my Downloads folder"), ("~/Desktop", "the Desktop")))
    dest = d.pick((join(src, "photos"), join(src, "pictures"), "~/Pictures/sorted"))
    stems = d.stems(d.num(6, 9), vocab.PHOTO_STEMS + vocab.DOC_STEMS)
    n = d.num(2, len(stems) - 2)
    kinds = d.shuffled(["jpg", "JPG", "png", "jpeg"] * 3)[:n]
    images = [f"{s}.{e}" for s, e in zip(stems[:n], kinds, strict=True)]
    others = [f"{s}.{d.pick(('pdf', 'txt', 'mp3', 'docx', 'zip'))}" for s in stems[n:]]
    setup = [mkdir(src)] + [f"echo x > {path(join(src, f))}" for f in d.shuffled(images + others)]
    task = d.phrase(
        (
            "Move the pictures in {src} into {dest}; the other files stay.",
            "Put every image from {src} (jpg, png and the like) into {dest}.",
            "{src} is full of photos. Gather them into {dest}, make the folder if needed.",
        ),
        src=spoken,
        dest=dest,
    )
    use = d.recipe("move_images_to_folder", dir=src, dest=dest)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"ls {path(dest)}"),
        check=all_of(
            *(exists(join(dest, f)) for f in images),
            *(missing(join(src, f)) for f in images),
            *(exists(join(src, f)) for f in others),
        ),
        answer=f"Moved the pictures; {dest} holds: {{out|lines}}.",
        slots={"src": src, "dest": dest},
        recipes=(use,),
    )


@family("delete_older_than_days", "files", "delete the files not changed in N days")
def delete_older_than_days(d: Draw) -> Instance:
    where, spoken, days, setup, recent, old = _by_age(d)
    task = d.phrase(
        (
            "Wipe the files in {dir} whose last change is more than {days} days back.",
            "Remove everything under {dir} that nobody has touched for {days} days; keep the "
            "newer files.",
            "Clear out the files in {dir}, subfolders too, that are older than {days} days.",
        ),
        dir=spoken,
        days=days,
    )
    use = d.recipe("delete_older_than_days", dir=where, days=days)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"find {path(where)} -type f | sort"),
        check=all_of(*(missing(f) for f in old), *(exists(f) for f in recent)),
        answer="Deleted {out1|count} files; left: {out2|names}.",
        slots={"dir": where, "days": str(days)},
        recipes=(use,),
    )


@family("older_than_minutes", "files", "the files not changed for more than a few hours")
def older_than_minutes(d: Draw) -> Instance:
    """Ages under two days, said in hours or minutes: find's ``-mtime +1`` would mean two
    days and more, so only a count of minutes answers. Fresh files sit an hour or more on
    the near side of the line, stale ones an hour or more beyond it."""
    where, spoken = d.some_dir()
    hours = d.pick((2, 3, 6, 8, 12, 24))
    files = _spread(d, where, _names(d, d.num(4, 8)))
    n_fresh = d.num(1, len(files) - 2)
    fresh, stale = files[:n_fresh], files[n_fresh:]
    setup = [mkdir(*sorted({f.rsplit("/", 1)[0] for f in files}))]
    for f in fresh:
        setup += [f"echo now > {path(f)}", age(f, 0, d.num(0, hours - 1))]
    for f in stale:
        setup += [f"echo then > {path(f)}", age(f, 0, hours + d.num(1, 30))]
    minutes = hours * 60
    said = d.pick((f"{hours} hours", f"{minutes} minutes"))
    task = d.phrase(
        (
            "Which files in {dir} have sat unchanged for more than {age}?",
            "Show the files under {dir} that nobody modified in the past {age}.",
            "List what in {dir} was last written over {age} ago, subfolders too.",
            "Find every file below {dir} whose last change is older than {age}.",
        ),
        dir=spoken,
        age=said,
    )
    use = d.recipe("older_than_minutes", dir=where, minutes=minutes)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=reported([_base(f) for f in stale], [_base(f) for f in fresh]),
        answer=f"Not changed for more than {said}: {{out|names}}.",
        slots={"dir": where, "minutes": str(minutes)},
        wrong_answers=(", ".join(_base(f) for f in fresh), ", ".join(map(_base, files))),
        kind="question",
        recipes=(use,),
    )
