"""Links, checksums, hosts entries, project folders, code search and service config."""

from __future__ import annotations

from shellagent.taskgen import vocab
from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import (
    all_of,
    has,
    is_dir,
    is_file,
    join,
    lacks,
    missing,
    mkdir,
    no_token,
    number,
    path,
    q,
    token,
    write,
)


@family("symlink_current", "links", "point a 'current' link at a release")
def symlink_current(d: Draw) -> Instance:
    app = d.service()
    base = d.pick((f"/opt/{app}", f"/srv/{app}", f"/var/www/{app}"))
    versions = sorted({f"{d.num(1, 3)}.{d.num(0, 9)}.{d.num(0, 9)}" for _ in range(4)})
    old, new = d.sample(versions, 2)
    setup = [mkdir(*(join(base, "releases", v) for v in versions))]
    setup += [f"echo {v} > {path(join(base, 'releases', v, 'VERSION'))}" for v in versions]
    setup.append(f"ln -s {path(join(base, 'releases', old))} {path(join(base, 'current'))}")
    task = d.phrase(
        (
            "Point the symlink {link} at the {new} release in {base}/releases.",
            "Switch {link} from release {old} to {new}.",
            "Make {link} link to {base}/releases/{new}.",
        ),
        link=join(base, "current"),
        base=base,
        old=old,
        new=new,
    )
    link = join(base, "current")
    target = join(base, "releases", new)
    use = d.recipe("symlink_point", target=target, link=link)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"readlink {path(link)}"),
        check=all_of(
            f"[ -L {path(link)} ]",
            f'[ "$(readlink -f {path(link)})" = "$(readlink -f {path(target)})" ]',
            f"[ ! -e {path(join(target, new))} ]",
        ),
        answer=f"{link} now points to {{out}}.",
        slots={"link": link, "target": target},
        recipes=(use,),
    )


@family("broken_symlinks", "links", "remove the symlinks whose target is gone")
def broken_symlinks(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    stems = d.stems(d.num(4, 7), vocab.DOC_STEMS + vocab.CODE_STEMS)
    k = d.num(1, len(stems) - 2)
    broken, good = [f"{s}-link" for s in stems[:k]], [f"{s}-link" for s in stems[k:]]
    setup = [mkdir(where, join(where, "targets"))]
    for name in good:
        setup += [
            f"echo x > {path(join(where, 'targets', name + '.txt'))}",
            f"ln -s targets/{q(name + '.txt')} {path(join(where, name))}",
        ]
    for name in broken:
        setup.append(f"ln -s {q('/nonexistent/' + name)} {path(join(where, name))}")
    task = d.phrase(
        (
            "Remove the broken symbolic links in {dir}; keep the ones that still work.",
            "Some symlinks in {dir} point to files that no longer exist. Delete those links.",
        ),
        dir=spoken,
    )
    use = d.recipe("remove_broken_symlinks", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(
            use.command,
            f"find {path(where)} -type l | sort",
        ),
        check=all_of(
            *(missing(join(where, n)) for n in broken),
            *(f"[ -L {path(join(where, n))} ] && [ -e {path(join(where, n))} ]" for n in good),
        ),
        answer="Removed {out1|count} broken links; still there: {out2|names}.",
        slots={"dir": where},
        recipes=(use,),
    )


@family("checksum_mismatch", "misc", "which file fails its checksum")
def checksum_mismatch(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    names = [
        f"{s}.{d.pick(('iso', 'tar.gz', 'zip', 'bin'))}"
        for s in d.stems(d.num(3, 6), vocab.SERVICES)
    ]
    bad = d.pick(names)
    setup = [mkdir(where)] + [f"echo {q('payload ' + n)} > {path(join(where, n))}" for n in names]
    setup.append(f"cd {path(where)} && sha256sum {' '.join(q(n) for n in names)} > SHA256SUMS")
    setup.append(f"echo tampered >> {path(join(where, bad))}")
    task = d.phrase(
        (
            "Which file in {dir} does not match its checksum in SHA256SUMS?",
            "Verify the downloads in {dir} against SHA256SUMS. Which one is corrupt?",
        ),
        dir=spoken,
    )
    good = [n for n in names if n != bad]
    use = d.recipe("checksum_mismatch", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(has(bad), lacks(*good)),
        answer="Checksum failures: {out}",
        slots={"dir": where},
        wrong_answers=(", ".join(good), ", ".join(names)),
        kind="question",
        recipes=(use,),
    )


@family("hosts_entry", "misc", "make a name resolve to an address via /etc/hosts")
def hosts_entry(d: Draw) -> Instance:
    name = f"{d.service()}.{d.pick(('lan', 'internal', 'test', 'home'))}"
    address = f"10.{d.num(0, 99)}.{d.num(0, 255)}.{d.num(2, 250)}"
    task = d.phrase(
        (
            "Make {name} resolve to {ip} on this machine.",
            "Add a hosts entry so that {name} points to {ip}.",
            "{name} should resolve to {ip} locally. Set that up in /etc/hosts.",
        ),
        name=name,
        ip=address,
    )
    use = d.recipe("hosts_entry", host=name, address=address)
    return Instance(
        task=task,
        setup=("grep -q localhost /etc/hosts",),
        gold=(use.command, f"getent hosts {name}"),
        check=all_of(
            f"getent hosts {name} | grep -q '^{address.replace('.', '[.]')}[[:space:]]'",
            "getent hosts localhost >/dev/null",
        ),
        answer=f"{name} now resolves: {{out}}",
        slots={"name": name, "address": address},
        recipes=(use,),
    )


@family("project_skeleton", "misc", "create a project folder layout")
def project_skeleton(d: Draw) -> Instance:
    name = d.service()
    where = d.pick((f"~/projects/{name}", f"/srv/{name}", f"~/code/{name}"))
    dirs = d.sample(("src", "tests", "docs", "scripts", "data", "config"), d.num(2, 4))
    files = d.sample(("README.md", ".gitignore", "LICENSE", "Makefile"), d.num(1, 2))
    task = d.phrase(
        (
            "Set up a project folder {dir} with the subfolders {subs} and empty files {files}.",
            "Create {dir} containing the directories {subs}, plus an empty {files}.",
        ),
        dir=where,
        subs=", ".join(dirs),
        files=" and ".join(files),
    )
    use = d.recipe("project_skeleton", dir=where, dirs=" ".join(dirs), files=" ".join(files))
    return Instance(
        task=task,
        setup=("true",),
        gold=(
            use.command,
            f"find {path(where)} | sort",
        ),
        check=all_of(
            *(is_dir(join(where, s)) for s in dirs),
            *(f"{is_file(join(where, f))} && [ ! -s {path(join(where, f))} ]" for f in files),
        ),
        answer="Created: {out|lines}",
        slots={"dir": where},
        recipes=(use,),
    )


@family("find_todo", "misc", "which source files have TODO comments")
def find_todo(d: Draw) -> Instance:
    app = d.service()
    where = d.pick((f"~/projects/{app}", f"/srv/{app}/src", f"~/code/{app}"))
    stems = d.stems(d.num(4, 7), vocab.CODE_STEMS)
    ext = d.pick(("py", "js", "go", "sh"))
    marker = "#" if ext in ("py", "sh") else "//"
    k = d.num(1, len(stems) - 1)
    names = [f"{s}.{ext}" for s in stems]
    with_todo, clean = names[:k], names[k:]
    setup = [mkdir(where)]
    for n in with_todo:
        setup.append(
            write(join(where, n), "x = 1", f"{marker} TODO: handle the empty case", "y = 2")
        )
    for n in clean:
        setup.append(write(join(where, n), "x = 1", f"{marker} all done here"))
    task = d.phrase(
        (
            "Which files in {dir} contain TODO comments?",
            "List the source files under {dir} that still have a TODO in them.",
        ),
        dir=where,
    )
    use = d.recipe("find_todo", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(has(*with_todo), lacks(*clean)),
        answer="Files with TODOs: {out|names}.",
        slots={"dir": where},
        wrong_answers=(", ".join(clean), ", ".join(names)),
        kind="question",
        recipes=(use,),
    )


@family("count_code_lines", "misc", "how many lines of code of one language")
def count_code_lines(d: Draw) -> Instance:
    app = d.service()
    where = d.pick((f"~/projects/{app}", f"/srv/{app}", f"~/code/{app}"))
    ext, other = d.sample(("py", "js", "sh", "go"), 2)
    stems = d.stems(d.num(3, 6), vocab.CODE_STEMS)
    counts = [d.num(2, 30) for _ in stems]
    k = d.num(2, len(stems) - 1)
    setup = [mkdir(where, join(where, "lib"))]
    total = 0
    for i, (s, n) in enumerate(zip(stems, counts, strict=True)):
        e = ext if i < k else other
        folder = where if i % 2 else join(where, "lib")
        setup.append(f"seq -f 'line %g' 1 {n} > {path(join(folder, f'{s}.{e}'))}")
        if i < k:
            total += n
    task = d.phrase(
        (
            "How many lines of .{ext} code are there in {dir} altogether (subfolders too)?",
            "Count the total lines in all the *.{ext} files under {dir}.",
        ),
        ext=ext,
        dir=where,
    )
    use = d.recipe("count_code_lines", dir=where, ext=ext)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=number(total),
        answer=f"{{out}} lines of .{ext} code.",
        slots={"dir": where, "ext": ext},
        wrong_answers=(f"{sum(counts)} lines", f"{total + 1} lines"),
        kind="question",
        recipes=(use,),
    )


@family("service_port", "misc", "which port a web server config listens on")
def service_port(d: Draw) -> Instance:
    site = d.service()
    conf = d.pick((f"/etc/nginx/sites-available/{site}", f"/etc/nginx/conf.d/{site}.conf"))
    port, old = d.sample(range(1025, 9999), 2)
    lines = [
        "server {",
        f"    # listen {old};  (old port)",
        f"    listen {port};",
        f"    server_name {site}.example.org;",
        f"    root /var/www/{site};",
        "}",
    ]
    task = d.phrase(
        (
            "Which port does the nginx site in {conf} listen on?",
            "What port is configured for {site} in {conf}?",
        ),
        conf=conf,
        site=site,
    )
    use = d.recipe("service_port", file=conf)
    return Instance(
        task=task,
        setup=(mkdir(conf.rsplit("/", 1)[0]), write(conf, *lines)),
        gold=(use.command,),
        check=all_of(token(str(port)), no_token(str(old))),
        answer="The site is configured with: {out}",
        slots={"conf": conf},
        wrong_answers=(str(old), "80"),
        kind="question",
        recipes=(use,),
    )


@family("temp_cleanup", "misc", "delete the *.tmp, *~ and .*.swp leftovers of a tree")
def temp_cleanup(d: Draw) -> Instance:
    where, spoken = d.some_dir()
    sub = d.pick(vocab.WORDS)
    stems = d.stems(d.num(6, 9), vocab.DOC_STEMS + vocab.CODE_STEMS)
    kept = [join(where, f"{s}.{d.pick(('md', 'py', 'txt', 'csv'))}") for s in stems]
    junk = [join(where, f"{_base(kept[0])}~"), join(where, sub, f".{_base(kept[1])}.swp")]
    junk += [join(where, d.pick(("", sub)), f"{s}.tmp") for s in stems[2:4]]
    kept += [join(where, sub, f"{stems[4]}.tmp.txt")]  # not a .tmp file
    setup = [mkdir(where, join(where, sub))] + [f"echo x > {path(f)}" for f in kept + junk]
    task = d.phrase(
        (
            "Clean the editor leftovers out of {dir}: *.tmp files, ~ backups and .swp swap files.",
            "Delete the temporary junk under {dir}, meaning .tmp files, tilde backups and vim "
            "swap files; keep the real files.",
            "Get rid of the scratch files my editor left in {dir} (tmp, ~ and swap files).",
        ),
        dir=spoken,
    )
    use = d.recipe("temp_cleanup", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(
            use.command,
            f"find {path(where)} -type f | sort",
        ),
        check=all_of(*(missing(f) for f in junk), *(f"[ -e {path(f)} ]" for f in kept)),
        answer="Deleted the leftovers; left: {out2|names}.",
        slots={"dir": where},
        recipes=(use,),
    )


def _base(p: str) -> str:
    return p.rsplit("/", 1)[1]
