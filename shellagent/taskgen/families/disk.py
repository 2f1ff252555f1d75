"""Disk usage: which folders and files take the space, and how much."""

from __future__ import annotations

from shellagent.taskgen import vocab
from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import (
    all_of,
    fill,
    has,
    is_file,
    join,
    lacks,
    mkdir,
    path,
    q,
    size_near,
)

PAGE = 4096


def _subdirs(d: Draw, where: str, low: int, high: int) -> list[str]:
    """Subfolder names that appear nowhere in ``where`` (checks look for ``/name``, or
    for the bare name where the answer gives no paths)."""
    taken = set(where.split("/"))
    pool = [w for w in vocab.WORDS + vocab.SERVICES if w not in taken]
    return d.sample(pool, d.num(low, high))


def _sized_tree(d: Draw, where: str, subdirs: list[str]) -> tuple[list[str], dict[str, int]]:
    """Files in each subfolder; sizes are whole pages so disk usage equals file size."""
    setup = [mkdir(*(join(where, s) for s in subdirs))]
    totals: dict[str, int] = {}
    budgets = d.sample(range(20, 400), len(subdirs))
    for sub, pages in zip(subdirs, budgets, strict=True):
        parts = d.num(1, 4)
        sizes = [pages // parts] * (parts - 1) + [pages - pages // parts * (parts - 1)]
        names = [
            f"{s}.{d.pick(('bin', 'dat', 'img', 'pack'))}" for s in d.stems(parts, vocab.WORDS)
        ]
        for name, size in zip(names, sizes, strict=True):
            setup.append(fill(join(where, sub, name), size * PAGE, sub))
        totals[sub] = pages * PAGE
    return setup, totals


@family("biggest_subdir", "disk", "which subfolder uses the most space")
def biggest_subdir(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    subdirs = _subdirs(d, where, 3, 6)
    setup, totals = _sized_tree(d, where, subdirs)
    ranked = sorted(subdirs, key=lambda s: -totals[s])
    task = d.phrase(
        (
            "Which folder inside {dir} takes the most space?",
            "What's the biggest subdirectory of {dir}?",
            "{dir} is filling the disk. Which of its subfolders is the largest?",
        ),
        dir=spoken,
    )
    use = d.recipe("biggest_subdir", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(has(f"/{ranked[0]}"), lacks(*(f"/{s}" for s in ranked[1:]))),
        answer="The biggest subfolder (size, path): {out}",
        slots={"dir": where},
        wrong_answers=(join(where, ranked[1]), join(where, ranked[-1])),
        kind="question",
        recipes=(use,),
    )


@family("dir_size", "disk", "how much space a folder uses")
def dir_size(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    subdirs = d.sample(vocab.WORDS, d.num(1, 3))
    setup, totals = _sized_tree(d, where, subdirs)
    total = sum(totals.values())
    task = d.phrase(
        (
            "How much disk space does {dir} use?",
            "How big is {dir} in total?",
            "what's the total size of everything in {dir}?",
        ),
        dir=spoken,
    )
    use = d.recipe("dir_size", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=size_near(total),
        answer="Total size (du -sh): {out}",
        slots={"dir": where},
        wrong_answers=(f"{total * 2} bytes", f"{total // 3} bytes"),
        kind="question",
        recipes=(use,),
    )


@family("size_by_extension", "disk", "total size of the files of one type")
def size_by_extension(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    ext, other = d.sample(("mp4", "iso", "jpg", "wav", "pdf", "zip"), 2)
    stems = d.stems(d.num(4, 8), vocab.PHOTO_STEMS + vocab.DOC_STEMS)
    k = d.num(2, len(stems) - 1)
    sizes = [d.num(30, 300) * PAGE for _ in stems]
    setup = [mkdir(where)]
    for i, (stem, size) in enumerate(zip(stems, sizes, strict=True)):
        setup.append(fill(join(where, f"{stem}.{ext if i < k else other}"), size))
    total = sum(sizes[:k])
    task = d.phrase(
        (
            "How much space do the .{ext} files in {dir} take altogether?",
            "What's the combined size of all *.{ext} files in {dir}?",
        ),
        ext=ext,
        dir=spoken,
    )
    use = d.recipe("size_by_extension", dir=where, ext=ext)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=size_near(total),
        answer="Together they take {out}.",
        slots={"dir": where, "ext": ext},
        wrong_answers=tuple(
            f"{w} bytes"
            for w in (sum(sizes), sum(sizes[k:]), total * 2)
            if abs(w - total) > total / 4
        ),
        kind="question",
        recipes=(use,),
    )


@family("most_files_subdir", "disk", "which subfolder holds the most files")
def most_files_subdir(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    subdirs = _subdirs(d, where, 3, 5)
    counts = d.sample(range(1, 15), len(subdirs))
    setup = [mkdir(*(join(where, s) for s in subdirs))]
    for sub, n in zip(subdirs, counts, strict=True):
        setup.append(f"cd {path(join(where, sub))} && touch $(seq -f 'item%02g.txt' 1 {n})")
    ranked = [s for _, s in sorted(zip(counts, subdirs, strict=True), reverse=True)]
    task = d.phrase(
        (
            "Which subfolder of {dir} holds the most files?",
            "In {dir}, which directory has the largest number of files?",
        ),
        dir=spoken,
    )
    use = d.recipe("most_files_subdir", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(has(ranked[0]), lacks(*ranked[1:])),  # the recipe names them bare
        answer="Most files (count, folder): {out}",
        slots={"dir": where},
        wrong_answers=(join(where, ranked[1]), " ".join(join(where, s) for s in ranked)),
        kind="question",
        recipes=(use,),
    )


@family("usage_report", "disk", "a report of each subfolder's size, biggest first")
def usage_report(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    subdirs = _subdirs(d, where, 3, 5)
    setup, totals = _sized_tree(d, where, subdirs)
    ranked = sorted(subdirs, key=lambda s: -totals[s])
    out = d.pick(("/tmp/usage.txt", "~/disk-report.txt", join(where, "usage.txt")))
    task = d.phrase(
        (
            "Write the size of each subfolder of {dir} to {out}, one per line, biggest first.",
            "Make a disk usage report of {dir}'s subdirectories in {out}, sorted from largest "
            "to smallest.",
        ),
        dir=spoken,
        out=out,
    )
    use = d.recipe("usage_report", dir=where, out=out)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"cat {path(out)}"),
        check=all_of(
            is_file(out),
            f'[ "$(grep -c . {path(out)})" -eq {len(subdirs)} ]',
            f"head -1 {path(out)} | grep -qF -- {q('/' + ranked[0])}",
            f"tail -1 {path(out)} | grep -qF -- {q('/' + ranked[-1])}",
        ),
        answer=f"Report written to {out}: {{out|lines}}",
        slots={"dir": where, "out": out},
        recipes=(use,),
    )
