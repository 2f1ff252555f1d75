"""Archives: pack, unpack, list and pick from tarballs and zip files."""

from __future__ import annotations

from shellagent.taskgen import vocab
from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import (
    all_of,
    exists,
    file_has,
    has,
    join,
    mkdir,
    number,
    path,
    q,
)


def _tree(d: Draw, root: str, k: int) -> list[str]:
    """``k`` files (relative paths, some in a subfolder) under ``root``."""
    sub = d.pick(vocab.WORDS)
    names = [
        f"{s}.{d.pick(('txt', 'md', 'csv', 'json', 'conf', 'html'))}"
        for s in d.stems(k, vocab.DOC_STEMS + vocab.CODE_STEMS)
    ]
    return [n if i % 3 else join(sub, n) for i, n in enumerate(names)]


def _make_tree(root: str, files: list[str]) -> list[str]:
    dirs = sorted({join(root, f.rsplit("/", 1)[0]) if "/" in f else root for f in files})
    return [mkdir(*dirs)] + [f"echo {q(f)} > {path(join(root, f))}" for f in files]


@family("archive_create", "archives", "pack a folder into a gzipped tarball")
def archive_create(d: Draw) -> Instance:
    app = d.service()
    src = d.pick((f"~/projects/{app}", f"/srv/{app}", f"~/Documents/{app}", f"/opt/{app}/conf"))
    out = d.pick((f"/tmp/{app}.tar.gz", f"~/{app}-backup.tar.gz", f"/var/backups/{app}.tgz"))
    files = _tree(d, src, d.num(3, 6))
    parent, name = src.rsplit("/", 1)
    task = d.phrase(
        (
            "Pack {src} into a gzipped tarball at {out}.",
            "Make a .tar.gz of {src} and save it as {out}.",
            "Archive the whole {src} folder into {out} (tar + gzip).",
        ),
        src=src,
        out=out,
    )
    listing = f"tar -tzf {path(out)}"
    use = d.recipe("archive_create", dir=src, archive=out)
    return Instance(
        task=task,
        setup=tuple(_make_tree(src, files)) + (mkdir(out.rsplit("/", 1)[0]),),
        gold=(
            use.command,
            f"tar -tzf {path(out)} | sort",
        ),
        check=all_of(
            f"gzip -t {path(out)}",
            *(f"{listing} | grep -q -- {q('/' + f.rsplit('/', 1)[-1] + '$')}" for f in files),
        ),
        answer=f"Created {out}; it holds: {{out|lines}}.",
        slots={"src": src, "out": out},
        recipes=(use,),
    )


@family("archive_extract", "archives", "unpack an archive into a folder")
def archive_extract(d: Draw) -> Instance:
    app = d.service()
    zipped = d.chance(0.35)
    archive = f"~/Downloads/{app}-files.{'zip' if zipped else 'tar.gz'}"
    dest = d.pick((f"~/projects/{app}", f"/srv/{app}", f"/opt/{app}", f"~/{app}"))
    files = _tree(d, "/tmp/stage", d.num(3, 6))
    pack = (
        f"cd /tmp/stage && zip -qr {path(archive)} ."
        if zipped
        else f"tar -czf {path(archive)} -C /tmp/stage ."
    )
    setup = [*_make_tree("/tmp/stage", files), mkdir("~/Downloads"), pack, "rm -rf /tmp/stage"]
    task = d.phrase(
        (
            "Unpack {archive} into {dest}.",
            "Extract everything in {archive} to {dest}.",
            "I downloaded {archive}; put its contents in {dest}.",
        ),
        archive=archive,
        dest=dest,
    )
    use = d.recipe("archive_extract", archive=archive, dest=dest)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"find {path(dest)} -type f | sort"),
        check=all_of(*(file_has(join(dest, f), f) for f in files)),
        answer=f"Extracted into {dest}: {{out|lines}}.",
        slots={"archive": archive, "dest": dest},
        recipes=(use,),
    )


@family("archive_list", "archives", "what an archive holds, or how many files")
def archive_list(d: Draw) -> Instance:
    app = d.service()
    zipped = d.chance(0.4)
    archive = d.pick((f"~/Downloads/{app}", f"/var/backups/{app}", f"/tmp/{app}-release"))
    archive += ".zip" if zipped else ".tar.gz"
    files = _tree(d, "/tmp/stage", d.num(2, 7))
    pack = (
        f"cd /tmp/stage && zip -qr {path(archive)} ."
        if zipped
        else f"tar -czf {path(archive)} -C /tmp/stage ."
    )
    setup = (
        *_make_tree("/tmp/stage", files),
        mkdir(archive.rsplit("/", 1)[0]),
        pack,
        "rm -rf /tmp/stage",
    )
    names = [f.rsplit("/", 1)[-1] for f in files]
    if d.chance(0.5):
        task = d.phrase(
            (
                "Which files are inside {archive}? Don't unpack it.",
                "What does {archive} contain?",
                "List the files packed in {archive}.",
            ),
            archive=archive,
        )
        use = d.recipe("archive_list", archive=archive)
        return Instance(
            task=task,
            setup=setup,
            gold=(use.command,),
            check=has(*names),
            answer=f"{archive} holds: {{out|lines}}.",
            slots={"archive": archive},
            wrong_answers=(", ".join(names[:-1]),),
            kind="question",
            recipes=(use,),
        )
    task = d.phrase(
        (
            "How many files are in {archive}?",
            "Without extracting it, tell me how many files {archive} holds.",
        ),
        archive=archive,
    )
    use = d.recipe("archive_count_files", archive=archive)
    return Instance(
        task=task,
        setup=setup,
        gold=(use.command,),
        check=number(len(files)),
        answer=f"{archive} holds {{out}} files.",
        slots={"archive": archive},
        wrong_answers=(f"{len(files) + 1} files", f"{len(files) + 2} files"),
        kind="question",
        recipes=(use,),
    )


@family("archive_extract_one", "archives", "take a single file out of a tarball")
def archive_extract_one(d: Draw) -> Instance:
    app = d.service()
    archive = d.pick((f"/var/backups/{app}.tar.gz", f"~/{app}-snapshot.tar.gz"))
    files = _tree(d, "/tmp/stage", d.num(3, 6))
    wanted = d.pick(files)
    rest = [f for f in files if f != wanted]
    dest = d.pick(("/tmp/restore", f"~/restored-{app}", f"/srv/{app}/restore"))
    setup = (
        *_make_tree("/tmp/stage", files),
        mkdir(archive.rsplit("/", 1)[0]),
        f"tar -czf {path(archive)} -C /tmp/stage .",
        "rm -rf /tmp/stage",
    )
    task = d.phrase(
        (
            "Get only {name} out of {archive} into {dest}; don't unpack the rest.",
            "I need just the file {name} from {archive}. Extract that one file to {dest}.",
        ),
        name=wanted,
        archive=archive,
        dest=dest,
    )
    use = d.recipe("archive_extract_one", archive=archive, member=wanted, dest=dest)
    return Instance(
        task=task,
        setup=setup,
        gold=(
            use.command,
            f"find {path(dest)} -type f",
        ),
        check=all_of(
            f"find {path(dest)} -type f -name {q(wanted.rsplit('/', 1)[-1])} | grep -q .",
            *(f"! find {path(dest)} -name {q(f.rsplit('/', 1)[-1])} | grep -q ." for f in rest),
        ),
        answer=f"Extracted {wanted} to: {{out}}.",
        slots={"archive": archive, "file": wanted, "dest": dest},
        recipes=(use,),
    )


@family("zip_files", "archives", "zip the files of one type")
def zip_files(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    ext, other = d.sample(("md", "pdf", "csv", "txt", "jpg", "odt"), 2)
    stems = d.stems(d.num(4, 8), vocab.DOC_STEMS)
    k = d.num(1, len(stems) - 1)
    chosen = [f"{s}.{ext}" for s in stems[:k]]
    others = [f"{s}.{other}" for s in stems[k:]]
    out = join(where, d.pick((f"{ext}-files.zip", "bundle.zip", f"all-{ext}.zip")))
    setup = [mkdir(where)] + [f"echo text > {path(join(where, n))}" for n in chosen + others]
    task = d.phrase(
        (
            "Zip up all the .{ext} files in {dir} into {out}.",
            "Make a zip archive {out} holding every .{ext} file from {dir} (nothing else).",
        ),
        ext=ext,
        dir=spoken,
        out=out,
    )
    listing = f"unzip -Z1 {path(out)}"
    use = d.recipe("zip_files", dir=where, ext=ext, archive=out)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"unzip -Z1 {path(out)}"),
        check=all_of(
            exists(out),
            *(f"{listing} | grep -qx -- {q(n)}" for n in chosen),
            *(f"! {listing} | grep -qF -- {q(n)}" for n in others),
        ),
        answer=f"{out} holds: {{out|lines}}.",
        slots={"dir": where, "ext": ext, "out": out},
        recipes=(use,),
    )


@family("zip_folder", "archives", "zip a named folder into a named .zip, its folder made")
def zip_folder(d: Draw) -> Instance:
    app = d.service()
    src = d.pick((f"~/projects/{app}", f"~/Documents/{app}", f"/srv/{app}", "~/Pictures/trip"))
    out_dir = d.pick(("~/backups", "/tmp/outbox", f"~/Desktop/{d.pick(vocab.WORDS)}"))
    name = src.rsplit("/", 1)[1]
    out = join(out_dir, f"{name}.zip" if d.chance(0.6) else f"{name}-{d.num(2020, 2025)}.zip")
    files = _tree(d, src, d.num(3, 6))
    task = d.phrase(
        (
            "Zip the folder {src} as {out}.",
            "Make a zip file {out} of everything in {src}, subfolders too.",
            "I want {src} packed into {out}; that folder may not exist yet.",
        ),
        src=src,
        out=out,
    )
    use = d.recipe("zip_folder", dir=src, archive=out)
    return Instance(
        task=task,
        setup=tuple(_make_tree(src, files)),
        gold=(
            use.command,
            f"unzip -Z1 {path(out)} | sort",
        ),
        check=all_of(
            f"unzip -tq {path(out)} >/dev/null",
            *(f"unzip -Z1 {path(out)} | grep -qx -- {q(join(name, f))}" for f in files),
        ),
        answer=f"Created {out}; it holds: {{out|lines}}.",
        slots={"src": src, "out": out},
        recipes=(use,),
    )
