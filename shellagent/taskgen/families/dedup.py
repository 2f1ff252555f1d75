"""Duplicates: identical files, "name (1)" copies, repeated lines."""

from __future__ import annotations

from shellagent.taskgen import vocab
from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import (
    all_of,
    exists,
    file_is,
    has,
    join,
    lacks,
    missing,
    mkdir,
    path,
    q,
    write,
)


@family("duplicate_files", "dedup", "which files have the same content")
def duplicate_files(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    stems = d.stems(d.num(5, 8), vocab.PHOTO_STEMS + vocab.DOC_STEMS)
    names = [f"{s}.{d.pick(('jpg', 'pdf', 'txt', 'png'))}" for s in stems]
    k = d.num(2, min(4, len(names) - 2))
    dups, unique = names[:k], names[k:]
    setup = [mkdir(where)]
    setup += [f"echo 'same bytes' > {path(join(where, n))}" for n in dups]
    setup += [f"echo {q('unique ' + n)} > {path(join(where, n))}" for n in unique]
    task = d.phrase(
        (
            "Which files in {dir} have exactly the same content as another file there?",
            "Find the duplicate files (identical contents) in {dir}.",
            "are there files with identical content in {dir}? which ones?",
        ),
        dir=spoken,
    )
    use = d.recipe("duplicate_files", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(has(*dups), lacks(*unique)),
        answer="Identical content: {out|names}.",
        slots={"dir": where},
        wrong_answers=(", ".join(unique), ", ".join(names)),
        kind="question",
        recipes=(use,),
    )


@family("remove_copies", "dedup", 'delete the "name (1)" copies, keep the originals')
def remove_copies(d: Draw) -> Instance:
    where, spoken = d.home_dir() if d.chance(0.7) else (d.app_dir("data"),) * 2
    stems = d.stems(d.num(3, 6), vocab.PHOTO_STEMS + vocab.DOC_STEMS)
    originals = [f"{s}.{d.pick(('jpg', 'pdf', 'png', 'mp3'))}" for s in stems]
    pairs = []
    for name in originals[: d.num(1, len(originals))]:
        stem, ext = name.rsplit(".", 1)
        pairs += [(name, f"{stem} ({i}).{ext}") for i in range(1, d.num(1, 3) + 1)]
    copies = [c for _, c in pairs]
    setup = [mkdir(where)] + [f"echo {q(n)} > {path(join(where, n))}" for n in originals]
    setup += [f"cp {path(join(where, o))} {path(join(where, c))}" for o, c in pairs]
    task = d.phrase(
        (
            "{dir} is full of copies named like 'photo (1).jpg'. Delete those copies and keep the "
            "originals.",
            "Remove the duplicate downloads in {dir}, the ones with ' (1)', ' (2)' … in their "
            "names.",
            "Clean out the 'name (N).ext' copies from {dir}; the originals stay.",
        ),
        dir=spoken,
    )
    use = d.recipe("remove_copies", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(
            use.command,
            f"ls {path(where)}",
        ),
        check=all_of(
            *(missing(join(where, c)) for c in copies),
            *(exists(join(where, n)) for n in originals),
        ),
        answer=f"Deleted {{out1|count}} copies; {where} holds: {{out2|lines}}.",
        slots={"dir": where},
        recipes=(use,),
    )


@family("dedup_lines", "dedup", "remove repeated lines in place, keeping the order")
def dedup_lines(d: Draw) -> Instance:
    where, _ = d.some_dir()
    file = join(where, d.pick(("emails.txt", "urls.txt", "servers.txt", "list.txt")))
    items = d.sample(vocab.WORDS + vocab.SERVICES, d.num(4, 8))
    lines = list(items)
    for _ in range(d.num(2, 6)):
        lines.insert(d.num(1, len(lines)), d.pick(items))
    seen: list[str] = []
    for line in lines:
        if line not in seen:
            seen.append(line)
    task = d.phrase(
        (
            "Remove the duplicate lines from {file} in place, keeping the first occurrence of "
            "each and the original order.",
            "{file} has repeated lines. Keep only the first copy of each line, order unchanged.",
        ),
        file=file,
    )
    use = d.recipe("dedup_lines", file=file)
    return Instance(
        task=task,
        setup=(mkdir(where), write(file, *lines)),
        gold=(
            use.command,
            f"cat {path(file)}",
        ),
        check=file_is(file, *seen),
        answer=f"{file} now reads: {{out|lines}}.",
        slots={"file": file},
        recipes=(use,),
    )
