"""Files by name, age, size and type."""

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
    q,
    reported,
    token,
    write,
)

FILE_EXTS = ("pdf", "zip", "iso", "mp4", "jpg", "docx", "csv", "mkv", "png", "odt", "mp3")
NAMED_STEMS = vocab.DOC_STEMS + vocab.PHOTO_STEMS


def _names(d: Draw, k: int, exts: tuple[str, ...] = FILE_EXTS) -> list[str]:
    return [f"{stem}.{d.pick(exts)}" for stem in d.stems(k, NAMED_STEMS)]


@family("largest_files", "files", "the N largest files of a folder")
def largest_files(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    k = d.pick((1, 3, 5))
    names = _names(d, k + d.num(2, 5))
    sizes = sorted(
        (kb * 1024 + d.num(0, 999) for kb in d.sample(range(20, 600), len(names))), reverse=True
    )
    setup = [mkdir(where)] + [
        fill(join(where, name), size, d.pick(vocab.WORDS))
        for name, size in d.shuffled(list(zip(names, sizes, strict=True)))
    ]
    top, rest = names[:k], names[k:]
    if k == 1:
        task = d.phrase(
            (
                "Which file in {dir} is the biggest?",
                "What's the largest file in {dir}?",
                "Find the biggest file in {dir} and tell me its name.",
                "Something in {dir} is eating space. Which file there is the largest?",
            ),
            dir=spoken,
        )
    else:
        task = d.phrase(
            (
                "Which {k} files in {dir} take up the most space?",
                "List the {k} biggest files in {dir}, largest first.",
                "What are the {k} largest files in {dir}?",
                "Tell me the names of the {k} heaviest files sitting in {dir}.",
            ),
            dir=spoken,
            k=k,
        )
    use = d.recipe("largest_files", dir=where, count=k)
    answer = (
        f"The largest file in {where} is {{out|first}}."
        if k == 1
        else f"The {k} largest files in {where}, biggest first: {{out|lines}}."
    )
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(has(*top), lacks(*rest)),
        answer=answer,
        slots={"dir": where, "count": str(k)},
        wrong_answers=(", ".join(rest[:k]), ", ".join(names)),
        kind="question",
        recipes=(use,),
    )


@family("count_by_extension", "files", "count files of one type in a tree")
def count_by_extension(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    ext, *others = d.sample(("pdf", "jpg", "txt", "csv", "log", "mp3", "png", "docx", "md"), 3)
    subdirs = d.words(2)
    places = [where] + [join(where, s) for s in subdirs]
    n, m = d.num(3, 14), d.num(2, 8)
    stems = d.stems(n + m, vocab.DOC_STEMS + vocab.PHOTO_STEMS + vocab.CODE_STEMS)
    files = [join(d.pick(places), f"{s}.{ext}") for s in stems[:n]]
    files += [join(d.pick(places), f"{s}.{d.pick(others)}") for s in stems[n:]]
    top_level = sum(1 for f in files[:n] if f.rsplit("/", 1)[0] == where)
    setup = [mkdir(*places)] + [f"echo {q(f.rsplit('/', 1)[1])} > {path(f)}" for f in files]
    task = d.phrase(
        (
            "How many .{ext} files are in {dir}, counting subfolders?",
            "Count the .{ext} files under {dir}, sub-folders included. How many are there?",
            "how many {ext} files do I have in {dir} and everything below it?",
            "What's the total number of *.{ext} files anywhere inside {dir}?",
        ),
        ext=ext,
        dir=spoken,
    )
    wrong = {n + 1, n - 1, top_level} - {n}
    use = d.recipe("count_by_extension", dir=where, ext=ext)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=number(n),
        answer=f"There are {{out}} .{ext} files in {where}, subfolders included.",
        slots={"dir": where, "ext": ext},
        wrong_answers=tuple(f"There are {w} .{ext} files." for w in sorted(wrong)),
        kind="question",
        recipes=(use,),
    )


@family("delete_old_files", "files", "delete files of a type older than N days")
def delete_old_files(d: Draw) -> Instance:
    if d.chance(0.3):
        where, spoken = d.home_dir()
    else:
        where = d.app_dir(d.pick(("data", "log")))
        spoken = where
    ext, other = d.sample(("tmp", "bak", "part", "cache", "old", "dump", "log"), 2)
    days = d.pick((7, 14, 30, 60, 90))
    stems = d.stems(d.num(5, 10), vocab.WORDS + vocab.CODE_STEMS)
    n_old = d.num(2, len(stems) - 3)
    old = [f"{s}.{ext}" for s in stems[:n_old]]
    new = [f"{s}.{ext}" for s in stems[n_old:-1]]
    keep = [f"{stems[-1]}.{other}"]
    setup = [mkdir(where)]
    for name in old + keep:
        setup += [
            f"echo old > {path(join(where, name))}",
            age(join(where, name), days + d.num(3, 40)),
        ]
    for name in new:
        setup += [
            f"echo new > {path(join(where, name))}",
            age(join(where, name), d.num(0, days - 2)),
        ]
    task = d.phrase(
        (
            "Delete the .{ext} files in {dir} that are more than {days} days old, but keep the "
            "newer ones and anything that isn't .{ext}.",
            "Clean up {dir}: remove .{ext} files not modified in the last {days} days. Leave "
            "every other file alone.",
            "Get rid of every *.{ext} file older than {days} days in {dir}; recent ones and "
            "other types stay.",
        ),
        ext=ext,
        dir=spoken,
        days=days,
    )
    use = d.recipe("delete_old_files", dir=where, ext=ext, days=days)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"ls {path(where)}"),
        check=all_of(
            *(missing(join(where, n)) for n in old),
            *(exists(join(where, n)) for n in new + keep),
        ),
        answer=f"Deleted the old .{ext} files; {where} now holds: {{out2|lines}}.",
        slots={"dir": where, "ext": ext, "days": str(days)},
        recipes=(use,),
    )


@family("move_by_extension", "files", "move files of some types into another folder")
def move_by_extension(d: Draw) -> Instance:
    src, spoken = d.pick((("~/Downloads", "my Downloads folder"), ("~/Desktop", "the Desktop")))
    kinds = {
        "pictures": (("jpg", "png", "gif", "webp"), "~/Pictures"),
        "documents": (("pdf", "docx", "odt"), "~/Documents"),
        "music files": (("mp3", "flac", "ogg"), "~/Music"),
        "videos": (("mp4", "mkv", "webm"), "~/Videos"),
    }
    what = d.pick(tuple(kinds))
    exts_all, base = kinds[what]
    exts = sorted(d.sample(exts_all, d.num(1, 2)))
    dest = join(base, d.pick(vocab.WORDS)) if d.chance(0.5) else base
    other_exts = [e for k, (es, _) in kinds.items() if k != what for e in es]
    stems = d.stems(d.num(5, 9), vocab.DOC_STEMS + vocab.PHOTO_STEMS)
    moved = [f"{s}.{e}" for s, e in zip(stems, exts, strict=False)]
    moved += [f"{s}.{d.pick(exts)}" for s in stems[len(exts) : len(stems) - 2]]
    stay = [f"{s}.{d.pick(other_exts)}" for s in stems[len(stems) - 2 :]]
    setup = [mkdir(src)] + [f"echo x > {path(join(src, n))}" for n in d.shuffled(moved + stay)]
    listed = " and ".join(f".{e}" for e in exts)
    task = d.phrase(
        (
            "Move all the {what} ({listed}) from {src} into {dest}.",
            "Tidy up {src}: every {listed} file should go to {dest}.",
            "Put the {listed} files that are in {src} into {dest} (create it if needed).",
        ),
        what=what,
        listed=listed,
        src=spoken,
        dest=dest,
    )
    uses = tuple(d.recipe("move_by_extension", src=src, dest=dest, ext=e) for e in exts)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(*(u.command for u in uses), f"ls {path(dest)}"),
        check=all_of(
            *(exists(join(dest, n)) for n in moved),
            *(missing(join(src, n)) for n in moved),
            *(exists(join(src, n)) for n in stay),
        ),
        answer=f"Moved them; {dest} now holds: {{out|lines}}.",
        slots={"src": src, "dest": dest, "exts": ",".join(exts)},
        recipes=uses,
    )


@family("empty_files", "files", "find or remove empty files")
def empty_files(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    sub = d.pick(vocab.WORDS)
    stems = d.stems(d.num(5, 9), vocab.DOC_STEMS + vocab.CODE_STEMS)
    exts = ("txt", "log", "csv", "md", "json")
    names = [join(d.pick(("", sub)), f"{s}.{d.pick(exts)}").lstrip("/") for s in stems]
    n_empty = d.num(1, len(names) - 2)
    empties, full = names[:n_empty], names[n_empty:]
    setup = [mkdir(where, join(where, sub))]
    setup += [f": > {path(join(where, n))}" for n in empties]
    setup += [f"echo {q(d.pick(vocab.WORDS))} > {path(join(where, n))}" for n in full]
    if d.chance(0.5):
        task = d.phrase(
            (
                "Which files in {dir} (subfolders included) are empty?",
                "Are there any zero-byte files under {dir}? Name them.",
                "List the empty files anywhere in {dir}.",
            ),
            dir=spoken,
        )
        base = [n.rsplit("/", 1)[-1] for n in empties]
        rest = [n.rsplit("/", 1)[-1] for n in full]
        listed = d.recipe("empty_files", dir=where)
        return Instance(
            task=task,
            setup=tuple(setup),
            gold=(listed.command,),
            check=all_of(has(*base), lacks(*rest)),
            answer="The empty files: {out|names}.",
            slots={"dir": where},
            wrong_answers=(", ".join(rest), ", ".join(base + rest)),
            kind="question",
            recipes=(listed,),
        )
    task = d.phrase(
        (
            "Delete the empty files in {dir} and its subfolders; keep everything with content.",
            "Remove every zero-byte file under {dir}.",
            "{dir} is full of empty files. Clear those out, and only those.",
        ),
        dir=spoken,
    )
    use = d.recipe("delete_empty_files", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"find {path(where)} -type f | sort"),
        check=all_of(
            *(missing(join(where, n)) for n in empties),
            *(exists(join(where, n)) for n in full),
        ),
        answer="Deleted the empty files; left: {out2|names}.",
        slots={"dir": where},
        recipes=(use,),
    )


@family("recently_modified", "files", "which files changed in the last N days")
def recently_modified(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    days = d.pick((2, 3, 5, 7, 10, 14))
    names = _names(d, d.num(5, 9), ("txt", "md", "csv", "pdf", "odt", "json"))
    n_recent = d.num(1, len(names) - 2)
    recent, old = names[:n_recent], names[n_recent:]
    setup = [mkdir(where)]
    for n in recent:
        setup += [f"echo now > {path(join(where, n))}", age(join(where, n), d.num(0, days - 1), 2)]
    for n in old:
        setup += [f"echo then > {path(join(where, n))}", age(join(where, n), days + d.num(2, 60))]
    task = d.phrase(
        (
            "Which files in {dir} were changed in the last {days} days?",
            "Show me what was modified in {dir} during the past {days} days.",
            "What have I touched in {dir} over the last {days} days?",
        ),
        dir=spoken,
        days=days,
    )
    use = d.recipe("recently_modified", dir=where, days=days)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=reported(recent, old),
        answer=f"Modified in the last {days} days: {{out|names}}.",
        slots={"dir": where, "days": str(days)},
        wrong_answers=(", ".join(old), ", ".join(names)),
        kind="question",
        recipes=(use,),
    )


@family("newest_file", "files", "the most recently modified file")
def newest_file(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    names = _names(d, d.num(4, 8))
    ages = sorted(d.sample(range(1, 400), len(names)))
    setup = [mkdir(where)]
    for n, hours in zip(names, ages, strict=True):
        setup += [f"echo v > {path(join(where, n))}", age(join(where, n), hours // 24, hours % 24)]
    task = d.phrase(
        (
            "What's the most recently modified file in {dir}?",
            "Which file in {dir} did I change last?",
            "Find the newest file in {dir}.",
        ),
        dir=spoken,
    )
    use = d.recipe("newest_file", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(has(names[0]), lacks(*names[1:])),
        answer=f"The newest file in {where} is {{out}}.",
        slots={"dir": where},
        wrong_answers=(names[-1], names[1]),
        kind="question",
        recipes=(use,),
    )


@family("files_larger_than", "files", "move files above a size into another folder")
def files_larger_than(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    limit = d.pick((100, 200, 500))
    dest = join(where, d.pick(("large", "big", "oversized", "archive")))
    names = _names(d, d.num(4, 8))
    n_big = d.num(1, len(names) - 1)
    big, small = names[:n_big], names[n_big:]
    setup = [mkdir(where)]
    setup += [fill(join(where, n), int(limit * 1024 * d.num(13, 30) / 10)) for n in big]
    setup += [fill(join(where, n), int(limit * 1024 * d.num(1, 8) / 10)) for n in small]
    task = d.phrase(
        (
            "Move every file in {dir} that is bigger than {limit} KB into {dest}.",
            "Files over {limit}K in {dir} should live in {dest}. Move them there.",
            "Put the files of {dir} larger than {limit} kilobytes into the subfolder {name}.",
        ),
        dir=spoken,
        limit=limit,
        dest=dest,
        name=dest.rsplit("/", 1)[1],
    )
    use = d.recipe("files_larger_than", dir=where, dest=dest, size=f"{limit}k")
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"ls {path(dest)}"),
        check=all_of(
            *(exists(join(dest, n)) for n in big),
            *(missing(join(where, n)) for n in big),
            *(exists(join(where, n)) for n in small),
        ),
        answer=f"Moved into {dest}: {{out|lines}}.",
        slots={"dir": where, "dest": dest, "limit_kb": str(limit)},
        recipes=(use,),
    )


@family("find_by_name", "files", "where is a file with a given name")
def find_by_name(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    stem = d.pick(vocab.DOC_STEMS)
    ext = d.pick(("pdf", "xlsx", "docx", "txt", "odt"))
    years = d.sample(range(2015, 2025), 3)
    target = f"{stem}-{years[0]}.{ext}"
    a, b, c, e = d.words(4)
    spot = join(a, b, target)
    decoys = [join(c, f"{stem}-{years[1]}.{ext}"), join(a, e, f"{stem}-{years[2]}.{ext}")]
    setup = [mkdir(*(join(where, p.rsplit("/", 1)[0]) for p in [spot, *decoys]))]
    setup += [f"echo doc > {path(join(where, p))}" for p in [spot, *decoys]]
    task = d.phrase(
        (
            "Where is {name} under {dir}? Give me its full path.",
            "I saved {name} somewhere in {dir} and can't find it. Where is it?",
            "Find the file called {name} below {dir}.",
        ),
        name=target,
        dir=spoken,
    )
    use = d.recipe("find_by_name", dir=where, name=target)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(has(spot), lacks(*decoys)),
        answer="It is at {out}.",
        slots={"dir": where, "name": target},
        wrong_answers=tuple(join(where, p) for p in decoys),
        kind="question",
        recipes=(use,),
    )


PNG = r"printf '\211PNG\r\n\032\n\0\0\0\rIHDR\0\0\0\20\0\0\0\20\10\2\0\0\0'"


@family("files_by_type", "files", "which files really are PNG images, whatever their names")
def files_by_type(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    stems = d.stems(d.num(5, 8), vocab.PHOTO_STEMS + vocab.WORDS)
    n_png = d.num(2, len(stems) - 2)
    pngs = [f"{s}.{d.pick(('png', 'dat', 'bin', 'img', 'jpg'))}" for s in stems[:n_png]]
    fakes = [f"{s}.{d.pick(('png', 'txt', 'dat', 'jpg'))}" for s in stems[n_png:]]
    setup = [mkdir(where)]
    setup += [f"{PNG} > {path(join(where, n))}" for n in pngs]
    setup += [f"echo 'not an image' > {path(join(where, n))}" for n in fakes]
    task = d.phrase(
        (
            "Some files in {dir} have misleading extensions. Which ones are really PNG images?",
            "Which of the files in {dir} are actually PNG pictures, whatever their names say?",
            "Look at the contents, not the names: which files in {dir} are PNG images?",
        ),
        dir=spoken,
    )
    use = d.recipe("files_by_type", dir=where, kind="PNG image")
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(has(*pngs), lacks(*fakes)),
        answer="These are PNG images: {out|names}.",
        slots={"dir": where},
        wrong_answers=(", ".join(fakes), ", ".join(pngs + fakes)),
        kind="question",
        recipes=(use,),
    )


@family("newest_file_tail", "files", "the last lines of a folder's most recently modified file")
def newest_file_tail(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    count = d.pick((2, 3, 5))
    names = [f"{stem}.log" for stem in d.stems(d.num(3, 5), NAMED_STEMS)]
    setup = [mkdir(where)]
    lines: list[list[str]] = []
    for i, name in enumerate(names):  # names[0] newest
        mine = [f"{name.split('.')[0]} line {n}" for n in range(1, count + d.num(2, 4))]
        lines.append(mine)
        setup += [write(join(where, name), *mine), age(join(where, name), 0, 2 + 5 * i)]
    newest = lines[0]
    said = "last line" if count == 1 else f"last {count} lines"
    task = d.phrase(
        (
            "Show the {said} of the most recently modified file in {dir}.",
            "Which file in {dir} changed last? Give me its {said}.",
            "Print the {said} of the newest file sitting in {dir}.",
        ),
        dir=spoken,
        said=said,
    )
    use = d.recipe("newest_file_tail", dir=where, count=count)
    tail, head = newest[-count:], newest[:-count]
    others = [line for each in lines[1:] for line in each]
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=reported(tail, [*head, *others]),
        answer=f"The {said} of the newest file in {where}: {{out|lines}}",
        slots={"dir": where, "count": str(count)},
        wrong_answers=("\n".join(newest), "\n".join(lines[1][-count:])),
        kind="question",
        recipes=(use,),
    )


@family("largest_file_with_size", "files", "a folder's largest file with its size")
def largest_file_with_size(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    names = _names(d, d.num(3, 6))
    sizes = sorted((d.num(20, 900) * 1024 + d.num(1, 999) for _ in names), reverse=True)
    if len(set(sizes)) < len(sizes):  # a tie has no one largest file
        sizes = [s + i for i, s in enumerate(reversed(sizes))][::-1]
        sizes = sorted(sizes, reverse=True)
    unit = d.pick(("bytes", "KB"))
    shown = sizes[0] if unit == "bytes" else -(-sizes[0] // 1024)
    setup = [mkdir(where)] + [
        fill(join(where, name), size, d.pick(vocab.WORDS))
        for name, size in d.shuffled(list(zip(names, sizes, strict=True)))
    ]
    task = d.phrase(
        (
            "Which file in {dir} is the largest, and how big is it in {unit}?",
            "Give the name and the size in {unit} of the biggest file in {dir}.",
            "Find the heaviest file in {dir} and report its name with its size ({unit}).",
        ),
        dir=spoken,
        unit=unit,
    )
    use = d.recipe("largest_file_with_size", dir=where, unit=unit)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(has(names[0]), lacks(*names[1:]), token(str(shown))),
        answer=f"The largest file in {where} is {{out}}.",
        slots={"dir": where, "unit": unit},
        wrong_answers=(f"{names[1]} {sizes[1]}", f"{names[0]} {shown + 7}"),
        kind="question",
        recipes=(use,),
    )
