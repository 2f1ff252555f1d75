"""Backups: copy, copy selectively, compare with a backup, restore from one."""

from __future__ import annotations

from shellagent.taskgen import vocab
from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import (
    all_of,
    exists,
    has,
    join,
    lacks,
    missing,
    mkdir,
    path,
    q,
    same_content,
    write,
)


def _files(d: Draw, k: int) -> list[str]:
    sub = d.pick(vocab.WORDS)
    names = [
        f"{s}.{d.pick(('txt', 'md', 'conf', 'csv'))}"
        for s in d.stems(k, vocab.DOC_STEMS + vocab.CODE_STEMS)
    ]
    return [n if i % 2 else join(sub, n) for i, n in enumerate(names)]


def _populate(root: str, files: list[str]) -> list[str]:
    dirs = sorted({join(root, f.rsplit("/", 1)[0]) if "/" in f else root for f in files})
    return [mkdir(*dirs)] + [f"echo {q('content of ' + f)} > {path(join(root, f))}" for f in files]


@family("backup_copy_dir", "backups", "copy a folder to a backup location")
def backup_copy_dir(d: Draw) -> Instance:
    src, spoken = d.some_dir()
    name = src.rsplit("/", 1)[1]
    dest = d.pick(
        (f"/var/backups/{name.lower()}", f"/mnt/backup/{name.lower()}", f"~/backup/{name.lower()}")
    )
    files = _files(d, d.num(3, 6))
    task = d.phrase(
        (
            "Back up {src} to {dest}: a full copy with the same files and folders.",
            "Copy everything in {src} into a new backup folder {dest}.",
            "Make a backup copy of {src} at {dest}.",
        ),
        src=spoken,
        dest=dest,
    )
    same = f"diff -r {path(src)} {path(dest)} >/dev/null 2>&1"
    nested = f"diff -r {path(src)} {path(join(dest, name))} >/dev/null 2>&1"
    use = d.recipe("backup_copy_dir", dir=src, dest=dest)
    return Instance(
        task=task,
        setup=tuple(_populate(src, files)),
        gold=(
            use.command,
            f"find {path(dest)} -type f | sort",
        ),
        check=f"{same} || {nested}",
        answer=f"Backed up to {dest}: {{out|lines}}",
        slots={"src": src, "dest": dest},
        recipes=(use,),
    )


@family("backup_by_extension", "backups", "copy the files of one type, keeping their paths")
def backup_by_extension(d: Draw) -> Instance:
    app = d.service()
    src = d.pick((f"/etc/{app}", f"/opt/{app}/conf", f"/srv/{app}"))
    dest = d.pick((f"/var/backups/{app}-conf", f"~/backup/{app}", f"/tmp/{app}-configs"))
    ext = "conf"
    names = d.stems(d.num(4, 7), vocab.CODE_STEMS)
    sub = d.pick(vocab.WORDS)
    files = [
        join(sub, f"{n}.{ext if i % 2 == 0 else d.pick(('log', 'pid', 'txt'))}")
        if i % 3 == 0
        else f"{n}.{ext if i % 2 == 0 else d.pick(('log', 'pid', 'txt'))}"
        for i, n in enumerate(names)
    ]
    chosen = [f for f in files if f.endswith(f".{ext}")]
    others = [f for f in files if not f.endswith(f".{ext}")]
    task = d.phrase(
        (
            "Copy every .{ext} file under {src} into {dest}, keeping their sub-folder paths, and "
            "nothing else.",
            "Back up only the *.{ext} files of {src} to {dest} (same relative paths).",
        ),
        ext=ext,
        src=src,
        dest=dest,
    )
    use = d.recipe("backup_by_extension", dir=src, ext=ext, dest=dest)
    return Instance(
        task=task,
        setup=tuple(_populate(src, files)),
        gold=(
            use.command,
            f"find {path(dest)} -type f | sort",
        ),
        check=all_of(
            *(same_content(join(src, f), join(dest, f)) for f in chosen),
            *(missing(join(dest, f)) for f in others),
        ),
        answer=f"Copied into {dest}: {{out|lines}}",
        slots={"src": src, "dest": dest, "ext": ext},
        recipes=(use,),
    )


@family("backup_diff", "backups", "which files differ from their backup")
def backup_diff(d: Draw) -> Instance:
    app = d.service()
    src = d.pick((f"/srv/{app}", f"~/Documents/{app}", f"/etc/{app}"))
    bak = d.pick((f"/var/backups/{app}", f"/mnt/backup/{app}"))
    files = _files(d, d.num(4, 7))
    k = d.num(1, min(3, len(files) - 1))
    changed = d.sample(files, k)
    setup = _populate(src, files) + [mkdir(bak.rsplit("/", 1)[0]), f"cp -a {path(src)} {path(bak)}"]
    setup += [f"echo 'edited later' >> {path(join(src, f))}" for f in changed]
    same = [f.rsplit("/", 1)[-1] for f in files if f not in changed]
    names = [f.rsplit("/", 1)[-1] for f in changed]
    task = d.phrase(
        (
            "Which files in {src} differ from the backup in {bak}?",
            "Compare {src} with its backup {bak}: what has changed since?",
        ),
        src=src,
        bak=bak,
    )
    use = d.recipe("backup_diff", dir=src, backup=bak)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(has(*names), lacks(*same)),
        answer="These differ: {out|lines}",
        slots={"src": src, "backup": bak},
        wrong_answers=(", ".join(same), ", ".join(same + names)),
        kind="question",
        recipes=(use,),
    )


@family("restore_from_backup", "backups", "restore a damaged file from its backup")
def restore_from_backup(d: Draw) -> Instance:
    app = d.service()
    src = d.pick((f"/etc/{app}", f"/srv/{app}/config", f"~/projects/{app}"))
    bak = d.pick((f"/var/backups/{app}", f"/mnt/backup/{app}"))
    files = [f.rsplit("/", 1)[-1] for f in _files(d, d.num(2, 4))]
    target = d.pick(files)
    setup = _populate(src, files) + _populate(bak, files)
    setup.append(write(join(src, target), "###garbled###"))
    task = d.phrase(
        (
            "{file} got corrupted. Restore it from the backup copy in {bak}.",
            "Put back {file} from the backup at {bak}; it was overwritten by mistake.",
        ),
        file=join(src, target),
        bak=bak,
    )
    use = d.recipe("restore_from_backup", file=join(src, target), backup=bak)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(
            use.command,
            f"cmp {path(join(src, target))} {path(join(bak, target))} && echo identical",
        ),
        check=all_of(
            same_content(join(src, target), join(bak, target)),
            *(exists(join(src, f)) for f in files),
            f"! grep -q garbled {path(join(src, target))}",
        ),
        answer=f"Restored {join(src, target)} from {bak}; compared: {{out}}.",
        slots={"file": join(src, target), "backup": bak},
        recipes=(use,),
    )
