"""Renames in bulk: extensions, spaces, case, prefixes."""

from __future__ import annotations

from shellagent.taskgen import vocab
from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import all_of, exists, join, missing, mkdir, path, q

EXT_PAIRS = (("jpeg", "jpg"), ("htm", "html"), ("yml", "yaml"), ("text", "txt"), ("tif", "tiff"))


def _setup(where: str, names: list[str]) -> list[str]:
    return [mkdir(where)] + [f"echo {q(n)} > {path(join(where, n))}" for n in names]


@family("rename_extension", "renames", "change the extension of many files")
def rename_extension(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    old, new = d.pick(EXT_PAIRS)
    stems = d.stems(d.num(3, 7), vocab.PHOTO_STEMS + vocab.DOC_STEMS)
    k = d.num(2, len(stems) - 1)
    renamed = stems[:k]
    other = [f"{s}.{d.pick(('pdf', 'png', 'md'))}" for s in stems[k:]]
    task = d.phrase(
        (
            "Rename every .{old} file in {dir} to .{new}.",
            "The files ending in .{old} in {dir} should end in .{new} instead. Rename them.",
            "Change the extension of all *.{old} files in {dir} to .{new}.",
        ),
        old=old,
        new=new,
        dir=spoken,
    )
    use = d.recipe("rename_extension", dir=where, old=old, new=new)
    return Instance(
        task=task,
        setup=tuple(_setup(where, [f"{s}.{old}" for s in renamed] + other)),
        gold=(
            use.command,
            f"ls {path(where)}",
        ),
        check=all_of(
            *(
                f"{exists(join(where, f'{s}.{new}'))} && {missing(join(where, f'{s}.{old}'))}"
                for s in renamed
            ),
            *(exists(join(where, n)) for n in other),
        ),
        answer=f"Renamed; {where} now holds: {{out|lines}}.",
        slots={"dir": where, "old_ext": old, "new_ext": new},
        recipes=(use,),
    )


@family("rename_spaces", "renames", "replace spaces in file names with underscores")
def rename_spaces(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    stems = d.sample(vocab.DOC_STEMS + vocab.PHOTO_STEMS, d.num(4, 8))
    names = []
    for s in stems:
        words = [s, *d.sample(vocab.WORDS, d.num(0, 2))]
        names.append(" ".join(words) + "." + d.pick(("pdf", "txt", "jpg", "docx")))
    spaced = [n for n in names if " " in n]
    if not spaced:
        names[0] = names[0].replace(".", " copy.", 1)
        spaced = [names[0]]
    task = d.phrase(
        (
            "Replace the spaces in the file names in {dir} with underscores.",
            "Some files in {dir} have spaces in their names. Rename them to use _ instead.",
        ),
        dir=spoken,
    )
    use = d.recipe("rename_spaces", dir=where)
    return Instance(
        task=task,
        setup=tuple(_setup(where, names)),
        gold=(
            use.command,
            f"ls {path(where)}",
        ),
        check=all_of(
            *(
                f"{exists(join(where, n.replace(' ', '_')))} && {missing(join(where, n))}"
                for n in spaced
            ),
            *(exists(join(where, n)) for n in names if n not in spaced),
        ),
        answer=f"Renamed; {where} now holds: {{out|lines}}.",
        slots={"dir": where},
        recipes=(use,),
    )


@family("rename_lowercase", "renames", "make file names lowercase")
def rename_lowercase(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    stems = d.stems(d.num(3, 7), vocab.DOC_STEMS + vocab.PHOTO_STEMS)
    names = []
    for i, s in enumerate(stems):
        ext = d.pick(("pdf", "jpg", "txt"))
        names.append(f"{s.upper()}.{ext.upper()}" if i % 2 == 0 else f"{s.capitalize()}.{ext}")
    names.append(f"{d.pick(vocab.WORDS)}.txt")
    task = d.phrase(
        (
            "Make all file names in {dir} lowercase.",
            "Rename the files in {dir} so their names have no capital letters.",
        ),
        dir=spoken,
    )
    upper = [n for n in names if n != n.lower()]
    use = d.recipe("rename_lowercase", dir=where)
    return Instance(
        task=task,
        setup=tuple(_setup(where, names)),
        gold=(
            use.command,
            f"ls {path(where)}",
        ),
        check=all_of(
            *(f"{exists(join(where, n.lower()))} && {missing(join(where, n))}" for n in upper),
            f'[ "$(ls {path(where)} | wc -l)" -eq {len(names)} ]',
        ),
        answer=f"Renamed; {where} now holds: {{out|lines}}.",
        slots={"dir": where},
        recipes=(use,),
    )


@family("rename_prefix", "renames", "add a prefix to the names of some files")
def rename_prefix(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    prefix = d.pick(("old_", "2023-", "draft-", "archived_", "v1-"))
    ext = d.pick(("txt", "csv", "md", "log"))
    stems = d.stems(d.num(3, 7), vocab.DOC_STEMS + vocab.CODE_STEMS)
    k = d.num(2, len(stems))
    targets = [f"{s}.{ext}" for s in stems[:k]]
    others = [f"{s}.{d.pick(('pdf', 'json'))}" for s in stems[k:]]
    task = d.phrase(
        (
            "Add the prefix {prefix} to the name of every .{ext} file in {dir}.",
            "Prefix all the *.{ext} files in {dir} with '{prefix}'.",
        ),
        prefix=prefix,
        ext=ext,
        dir=spoken,
    )
    use = d.recipe("rename_prefix", dir=where, prefix=prefix, glob=f"*.{ext}")
    return Instance(
        task=task,
        setup=tuple(_setup(where, targets + others)),
        gold=(
            use.command,
            f"ls {path(where)}",
        ),
        check=all_of(
            *(f"{exists(join(where, prefix + n))} && {missing(join(where, n))}" for n in targets),
            *(exists(join(where, n)) for n in others),
        ),
        answer=f"Renamed; {where} now holds: {{out|lines}}.",
        slots={"dir": where, "prefix": prefix, "ext": ext},
        recipes=(use,),
    )
