"""One file at a time: find it by name anywhere in the home, copy it into a folder or under
a new name, move it into a folder, rename it.

The destination of a copy or a move is a folder that may not exist yet, and it must end up
a folder holding the file (never a file of the folder's name); a new name stays beside the
original.
"""

from __future__ import annotations

from shellagent.taskgen import vocab
from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import (
    all_of,
    file_has,
    has,
    is_dir,
    join,
    lacks,
    missing,
    mkdir,
    path,
    q,
)

_DOC_EXTS = ("pdf", "docx", "odt", "txt", "xlsx", "md", "jpg", "png")


def _one_file(d: Draw) -> tuple[str, str, str, list[str]]:
    """A file with some content in a folder beside a few others: (folder, file name,
    content, setup)."""
    where, _ = d.some_dir()
    stems = d.stems(d.num(3, 5), vocab.DOC_STEMS + vocab.PHOTO_STEMS)
    names = [f"{s}.{d.pick(_DOC_EXTS)}" for s in stems]
    content = f"{d.pick(vocab.WORDS)} {d.num(100, 999)}"
    setup = [mkdir(where)]
    setup += [
        f"echo {q(content if i == 0 else n)} > {path(join(where, n))}" for i, n in enumerate(names)
    ]
    return where, names[0], content, setup


@family("find_in_home", "files", "where in the home folder a file of a given name is")
def find_in_home(d: Draw) -> Instance:
    stem = d.pick(vocab.DOC_STEMS)
    ext = d.pick(("pdf", "xlsx", "docx", "odt", "txt"))
    spot = join(d.pick(("~/Documents", "~/Desktop", "~/Downloads", "~/projects")), *d.words(2))
    stored = f"{stem.capitalize() if d.chance(0.3) else stem}.{ext}"
    decoys = [
        join("~/Documents", d.pick(vocab.WORDS), f"{stem}-{d.num(2015, 2024)}.{ext}"),
        join("~/Desktop", f"{stem}.{d.pick([e for e in ('csv', 'md', 'zip') if e != ext])}.bak"),
    ]
    files = [join(spot, stored), *decoys]
    setup = [mkdir(*sorted({f.rsplit("/", 1)[0] for f in files}))]
    setup += [f"echo doc > {path(f)}" for f in files]
    name = f"{stem}.{ext}"
    task = d.phrase(
        (
            "Where did {name} go? It's somewhere in my home folder.",
            "Which folder of my home directory holds {name}?",
            "I saved {name} a while ago and lost track of it. Where is it?",
            "Find {name} for me, I don't remember which folder it's in.",
        ),
        name=name,
    )
    use = d.recipe("find_in_home", name=name)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(has(join(spot, stored)[2:]), lacks(*(p[2:] for p in decoys))),
        answer="It is at {out}.",
        slots={"name": name},
        wrong_answers=tuple(p[2:] for p in decoys),
        kind="question",
        recipes=(use,),
    )


def _new_folder(d: Draw, where: str) -> str:
    """A destination folder that does not exist yet (its parent may)."""
    return d.pick(
        (
            join("~/Desktop", d.pick(vocab.WORDS)),
            join(where, d.pick(("old", "copies", "keep", "sent"))),
            join("~/backup", d.pick(vocab.WORDS), str(d.num(2020, 2025))),
        )
    )


@family("copy_file_into_dir", "files", "copy one file into a folder, made if missing")
def copy_file_into_dir(d: Draw) -> Instance:
    where, name, content, setup = _one_file(d)
    dest = _new_folder(d, where)
    task = d.phrase(
        (
            "Copy {file} into the folder {dest}; the folder may not exist yet.",
            "I need a copy of {file} inside {dest}. Keep the original where it is.",
            "Drop a copy of {file} in {dest} (make that folder if it's missing).",
        ),
        file=join(where, name),
        dest=dest,
    )
    use = d.recipe("copy_file_into_dir", file=join(where, name), dest=dest)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(
            use.command,
            f"ls {path(dest)}",
        ),
        check=all_of(
            is_dir(dest),
            file_has(join(dest, name), content),
            file_has(join(where, name), content),
        ),
        answer=f"Copied; {dest} holds: {{out|lines}}.",
        slots={"file": join(where, name), "dest": dest},
        recipes=(use,),
    )


@family("move_file_into_dir", "files", "move one file into a folder, made if missing")
def move_file_into_dir(d: Draw) -> Instance:
    where, name, content, setup = _one_file(d)
    dest = _new_folder(d, where)
    task = d.phrase(
        (
            "Move {file} into the folder {dest}, creating it if needed.",
            "{file} belongs in {dest}. Put it there (the folder may not exist yet).",
            "File {file} away into {dest}.",
        ),
        file=join(where, name),
        dest=dest,
    )
    use = d.recipe("move_file_into_dir", file=join(where, name), dest=dest)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(
            use.command,
            f"ls {path(dest)}",
        ),
        check=all_of(is_dir(dest), file_has(join(dest, name), content), missing(join(where, name))),
        answer=f"Moved; {dest} holds: {{out|lines}}.",
        slots={"file": join(where, name), "dest": dest},
        recipes=(use,),
    )


def _new_name(d: Draw, name: str) -> str:
    stem, ext = name.rsplit(".", 1)
    return d.pick(
        (f"{stem}-old.{ext}", f"{stem}-copy.{ext}", f"{stem}_v2.{ext}", f"final-{stem}.{ext}")
    )


@family("copy_file_as", "files", "copy one file under a new name beside it")
def copy_file_as(d: Draw) -> Instance:
    where, name, content, setup = _one_file(d)
    new = _new_name(d, name)
    task = d.phrase(
        (
            "Copy {file} as {new}, in the same folder.",
            "Make a copy of {file} called {new} next to it.",
            "Before I edit {file}, keep a copy of it named {new} beside it.",
        ),
        file=join(where, name),
        new=new,
    )
    use = d.recipe("copy_file_as", file=join(where, name), copy=new)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"ls {path(where)}"),
        check=all_of(file_has(join(where, new), content), file_has(join(where, name), content)),
        answer=f"Copied; {where} holds: {{out|lines}}.",
        slots={"file": join(where, name), "copy": new},
        recipes=(use,),
    )


@family("rename_file", "files", "rename one file, keeping it in its folder")
def rename_file(d: Draw) -> Instance:
    where, name, content, setup = _one_file(d)
    new = _new_name(d, name)
    task = d.phrase(
        (
            "Rename {file} to {new}.",
            "Change the name of {file} to {new}; it stays in the same folder.",
            "{file} should be called {new} from now on.",
        ),
        file=join(where, name),
        new=new,
    )
    use = d.recipe("rename_file", file=join(where, name), new=new)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"ls {path(where)}"),
        check=all_of(file_has(join(where, new), content), missing(join(where, name))),
        answer=f"Renamed; {where} holds: {{out|lines}}.",
        slots={"file": join(where, name), "new": new},
        recipes=(use,),
    )


@family("copy_file", "files", "copy a file to an exact path in another folder")
def copy_file(d: Draw) -> Instance:
    where, name, content, setup = _one_file(d)
    there = d.pick(("/tmp", "~/Desktop", "/srv/shared"))
    target = join(there, _new_name(d, name))
    setup.append(mkdir(there))
    task = d.phrase(
        (
            "Copy {file} to {target}.",
            "Make a copy of {file} at {target}; the original stays.",
            "I want {file} duplicated as {target}.",
        ),
        file=join(where, name),
        target=target,
    )
    use = d.recipe("copy_file", path=join(where, name), dest=target)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"ls {path(there)}"),
        check=all_of(file_has(target, content), file_has(join(where, name), content)),
        answer=f"Copied; {there} holds: {{out|lines}}.",
        slots={"path": join(where, name), "dest": target},
        recipes=(use,),
    )


@family("move_file", "files", "move a folder to an exact new path")
def move_file(d: Draw) -> Instance:
    app = d.service()
    src = d.pick((f"~/projects/{app}", f"/srv/{app}-old", f"~/Documents/{app}"))
    target = d.pick((f"~/archive/{app}-2023", f"/srv/retired/{app}", f"~/old-{app}"))
    names = [f"{s}.{d.pick(_DOC_EXTS)}" for s in d.stems(d.num(2, 4), vocab.DOC_STEMS)]
    setup = [mkdir(src, target.rsplit("/", 1)[0])]
    setup += [f"echo {q(n)} > {path(join(src, n))}" for n in names]
    task = d.phrase(
        (
            "Move the folder {src} to {target}.",
            "{src} should now live at {target}; move it there, contents and all.",
            "Relocate the directory {src} so that it becomes {target}.",
        ),
        src=src,
        target=target,
    )
    use = d.recipe("move_file", path=src, dest=target)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"ls {path(target)}"),
        check=all_of(missing(src), *(file_has(join(target, n), n) for n in names), is_dir(target)),
        answer=f"Moved; {target} holds: {{out|lines}}.",
        slots={"path": src, "dest": target},
        recipes=(use,),
    )
