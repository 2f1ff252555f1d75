"""Permissions and ownership."""

from __future__ import annotations

from shellagent.taskgen import vocab
from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import (
    add_user,
    all_of,
    any_token,
    has,
    join,
    lacks,
    mkdir,
    mode_is,
    no_token,
    path,
)


@family("make_scripts_executable", "permissions", "make the shell scripts of a folder executable")
def make_scripts_executable(d: Draw) -> Instance:
    app = d.service()
    where = d.pick((f"~/projects/{app}/scripts", f"/opt/{app}/bin", f"/srv/{app}/tools", "~/bin"))
    stems = d.stems(d.num(4, 8), vocab.CODE_STEMS)
    k = d.num(1, len(stems) - 1)
    scripts = [f"{s}.sh" for s in stems[:k]]
    others = [f"{s}.{d.pick(('py', 'txt', 'conf', 'md'))}" for s in stems[k:]]
    setup = [mkdir(where)]
    setup += [f"printf '#!/bin/sh\\necho hi\\n' > {path(join(where, n))}" for n in scripts]
    setup += [f"echo data > {path(join(where, n))}" for n in others]
    setup.append(f"chmod 644 {path(where)}/*")
    task = d.phrase(
        (
            "Make every .sh script in {dir} executable, and only those.",
            "The shell scripts in {dir} can't be run. Fix their permissions (leave the other "
            "files alone).",
            "Add execute permission to the *.sh files in {dir}.",
        ),
        dir=where,
    )
    use = d.recipe("make_scripts_executable", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"cd {path(where)} && stat -c '%A %n' *"),
        check=all_of(
            *(f"[ -x {path(join(where, n))} ]" for n in scripts),
            *(f"[ ! -x {path(join(where, n))} ]" for n in others),
        ),
        answer="Done. Permissions now: {out|lines}",
        slots={"dir": where},
        recipes=(use,),
    )


@family("fix_world_writable", "permissions", "take write permission away from others")
def fix_world_writable(d: Draw) -> Instance:
    where = d.app_dir(d.pick(("data", "web", "config")))
    stems = d.stems(d.num(4, 7), vocab.CODE_STEMS + vocab.DOC_STEMS)
    names = [f"{s}.{d.pick(('conf', 'html', 'json', 'txt'))}" for s in stems]
    modes = {n: d.pick(("666", "646", "777", "664", "644", "640", "775")) for n in names}
    if not any(int(m[2]) & 2 for m in modes.values()):
        modes[names[0]] = "666"
    setup = [mkdir(where)] + [f"echo x > {path(join(where, n))}" for n in names]
    setup += [f"chmod {m} {path(join(where, n))}" for n, m in modes.items()]
    fixed = {n: m[:2] + str(int(m[2]) & ~2) for n, m in modes.items()}
    task = d.phrase(
        (
            "Some files in {dir} are writable by everyone. Remove write permission for 'others' "
            "from them without changing anything else.",
            "Find the world-writable files under {dir} and take away the world write bit.",
        ),
        dir=where,
    )
    use = d.recipe("fix_world_writable", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(
            use.command,
            f"find {path(where)} -type f -perm -o+w | wc -l",
        ),
        check=all_of(*(mode_is(join(where, n), m) for n, m in fixed.items())),
        answer="Removed the world write bit; world-writable files left: {out}.",
        slots={"dir": where},
        recipes=(use,),
    )


def _users(d: Draw, k: int) -> list[tuple[str, str, int]]:
    base = d.num(30, 39) * 100
    return [(login, full, base + i) for i, (login, full) in enumerate(d.people(k))]


@family("chown_tree", "permissions", "give a folder and its contents to a user")
def chown_tree(d: Draw) -> Instance:
    users = _users(d, 2)
    (login, full, uid), (other, _, _) = users
    app = d.service()
    where = d.pick((f"/srv/{app}", f"/var/www/{app}", f"/opt/{app}", f"/home/{login}/{app}"))
    files = [f"{s}.txt" for s in d.stems(d.num(2, 5), vocab.DOC_STEMS)]
    sub = d.pick(vocab.WORDS)
    setup = [add_user(lg, u, f) for lg, f, u in users]
    setup += [mkdir(join(where, sub))]
    setup += [f"echo x > {path(join(where, d.pick(('', sub)), n))}" for n in files]
    setup.append(f"chown -R {other}:{other} {path(where)}")
    task = d.phrase(
        (
            "Make {login} the owner (user and group) of {dir} and everything in it.",
            "{dir} should belong to {login}: change owner and group recursively.",
            "Hand {dir} over to {name} (account {login}), group included, all files inside too.",
        ),
        login=login,
        dir=where,
        name=full,
    )
    use = d.recipe("chown_tree", user=login, dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(
            use.command,
            f"find {path(where)} ! -user {login} -o ! -group {login} | wc -l",
        ),
        check=all_of(
            f'[ -z "$(find {path(where)} ! -user {login} -o ! -group {login})" ]',
            f'[ "$(stat -c %U {path(where)})" = {login} ]',
        ),
        answer=f"{where} now belongs to {login}; entries owned by anyone else: {{out}}.",
        slots={"dir": where, "user": login},
        recipes=(use,),
    )


@family("permission_query", "permissions", "a file's permissions in octal")
def permission_query(d: Draw) -> Instance:
    where, _ = d.some_dir()
    names = [f"{s}.{d.pick(('key', 'conf', 'sh', 'txt'))}" for s in d.stems(3, vocab.CODE_STEMS)]
    modes = d.sample(("600", "640", "644", "700", "750", "755", "660", "444", "400"), 3)
    target, mode = names[0], modes[0]
    setup = [mkdir(where)] + [f"echo x > {path(join(where, n))}" for n in names]
    setup += [f"chmod {m} {path(join(where, n))}" for n, m in zip(names, modes, strict=True)]
    file = join(where, target)
    task = d.phrase(
        (
            "What are the permissions of {file}, in octal?",
            "Tell me the numeric (octal) mode of {file}.",
            "which permission bits does {file} have? give me the octal form",
        ),
        file=file,
    )
    use = d.recipe("permission_query", file=file)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(any_token((mode, "0" + mode)), no_token(*modes[1:])),
        answer=f"{file} has mode {{out}}.",
        slots={"file": file},
        wrong_answers=(f"mode {modes[1]}", f"{modes[2]}"),
        kind="question",
        recipes=(use,),
    )


@family("private_dir", "permissions", "a folder only its owner can use")
def private_dir(d: Draw) -> Instance:
    word = d.pick(vocab.WORDS)
    where = d.pick(
        (f"~/Documents/{word}", f"~/private-{word}", f"/srv/{d.service()}/keys", f"~/.{word}")
    )
    spoken = where
    files = [f"{s}.txt" for s in d.stems(d.num(2, 5), vocab.DOC_STEMS)]
    setup = [mkdir(where), f"chmod 755 {path(where)}"]
    setup += [
        f"echo secret > {path(join(where, n))} && chmod 644 {path(join(where, n))}" for n in files
    ]
    task = d.phrase(
        (
            "Lock down {dir}: only the owner may enter it (700), and its files should be "
            "readable and writable by the owner alone (600).",
            "Make {dir} private: mode 700 on the folder, 600 on every file in it.",
            "Nobody but me should see {dir}. Set the folder to 700 and its files to 600.",
        ),
        dir=spoken,
    )
    use = d.recipe("private_dir", dir=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(
            use.command,
            f"stat -c '%a %n' {path(where)} {path(where)}/*",
        ),
        check=all_of(mode_is(where, "700"), *(mode_is(join(where, n), "600") for n in files)),
        answer="Locked down: {out|lines}",
        slots={"dir": where},
        recipes=(use,),
    )


@family("file_owner", "permissions", "which user owns a file")
def file_owner(d: Draw) -> Instance:
    users = _users(d, 3)
    app = d.service()
    where = d.pick((f"/srv/{app}", f"/var/lib/{app}", "/srv/shared"))
    names = [f"{s}.{d.pick(('csv', 'db', 'txt', 'json'))}" for s in d.stems(3, vocab.DOC_STEMS)]
    setup = [add_user(lg, u, f) for lg, f, u in users] + [mkdir(where)]
    for n, (login, _, _) in zip(names, users, strict=True):
        setup += [f"echo x > {path(join(where, n))}", f"chown {login} {path(join(where, n))}"]
    file = join(where, names[0])
    owner = users[0][0]
    task = d.phrase(
        (
            "Who owns {file}?",
            "Which user is the owner of {file}?",
            "tell me the account that owns {file}",
        ),
        file=file,
    )
    use = d.recipe("file_owner", file=file)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(has(owner), lacks(users[1][0], users[2][0])),
        answer=f"{file} is owned by {{out}}.",
        slots={"file": file},
        wrong_answers=(users[1][0], "root"),
        kind="question",
        recipes=(use,),
    )
