"""Users and groups: who has which shell, home, uid and groups.

The sandbox masks the shadow files, so tools that rewrite them (``useradd``, ``usermod``,
``gpasswd``) cannot run there; these tasks ask about accounts, or change what ``chsh``
can. The setup writes the accounts straight into /etc/passwd and /etc/group.
"""

from __future__ import annotations

from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import (
    add_group,
    add_user,
    all_of,
    has,
    lacks,
    no_token,
    number,
    q,
    token,
)

SHELLS = (
    "/bin/bash",
    "/bin/sh",
    "/bin/zsh",
    "/usr/bin/fish",
    "/bin/dash",
    "/bin/ksh",
    "/usr/bin/tcsh",
)
GROUPS = (
    "developers", "media", "backup-ops", "webteam", "analysts", "auditors", "support",
    "printing", "finance", "ops-oncall", "designers", "interns", "dbadmins", "releasers",
)  # fmt: skip


def _accounts(d: Draw, k: int) -> list[tuple[str, str, int]]:
    base = d.num(30, 39) * 100
    return [(login, full, base + i) for i, (login, full) in enumerate(d.people(k))]


@family("user_shell", "users", "an account's login shell")
def user_shell(d: Draw) -> Instance:
    accounts = _accounts(d, 3)
    shells = d.sample(SHELLS, 3)
    setup = tuple(
        add_user(lg, uid, full, sh) for (lg, full, uid), sh in zip(accounts, shells, strict=True)
    )
    login, full, _ = accounts[0]
    task = d.phrase(
        (
            "What login shell does {login} have?",
            "Which shell does the account {login} ({full}) log in with?",
            "tell me {login}'s default shell",
        ),
        login=login,
        full=full,
    )
    use = d.recipe("user_shell", user=login)
    return Instance(
        task=task,
        setup=setup,
        gold=(use.command,),
        check=all_of(token(shells[0]), no_token(*shells[1:])),
        answer=f"{login} logs in with {{out}}.",
        slots={"user": login},
        wrong_answers=(shells[1], shells[2]),
        kind="question",
        recipes=(use,),
    )


@family("group_members", "users", "who is in a group")
def group_members(d: Draw) -> Instance:
    accounts = _accounts(d, d.num(4, 6))
    group = d.pick(GROUPS)
    k = d.num(1, len(accounts) - 2)
    members = [lg for lg, _, _ in accounts[:k]]
    outsiders = [lg for lg, _, _ in accounts[k:]]
    setup = tuple(add_user(lg, uid, full) for lg, full, uid in accounts) + (
        add_group(group, accounts[0][2] + 50, members),
    )
    task = d.phrase(
        (
            "Who is in the {group} group?",
            "List the members of the group {group}.",
            "which users belong to {group}?",
            "Which accounts on this machine are members of {group}?",
            "Tell me who has been added to the {group} group.",
        ),
        group=group,
    )
    use = d.recipe("group_members", group=group)
    return Instance(
        task=task,
        setup=setup,
        gold=(use.command,),
        check=all_of(has(*members), lacks(*outsiders)),
        answer=f"Members of {group}: {{out}}",
        slots={"group": group},
        wrong_answers=(", ".join(outsiders), ", ".join(members + outsiders)),
        kind="question",
        recipes=(use,),
    )


@family("users_with_shell", "users", "which accounts use a given shell")
def users_with_shell(d: Draw) -> Instance:
    accounts = _accounts(d, d.num(4, 6))
    shell = d.pick(("/bin/zsh", "/usr/bin/fish", "/bin/dash", "/bin/ksh", "/usr/bin/tcsh"))
    k = d.num(1, len(accounts) - 2)
    others = [s for s in SHELLS if s != shell]
    setup = tuple(
        add_user(lg, uid, full, shell if i < k else d.pick(others))
        for i, (lg, full, uid) in enumerate(accounts)
    )
    users = [lg for lg, _, _ in accounts[:k]]
    rest = [lg for lg, _, _ in accounts[k:]]
    task = d.phrase(
        (
            "Which accounts use {shell} as their login shell?",
            "Who logs in with {shell} on this machine?",
            "List the users whose shell is {shell}.",
            "Which users on this box have {shell} set as their shell?",
            "I'm about to remove {shell}. Who still uses it as a login shell?",
        ),
        shell=shell,
    )
    use = d.recipe("users_with_shell", shell=shell)
    return Instance(
        task=task,
        setup=setup,
        gold=(use.command,),
        check=all_of(has(*users), lacks(*rest)),
        answer=f"Accounts with {shell}: {{out|lines}}.",
        slots={"shell": shell},
        wrong_answers=(", ".join(rest), ", ".join(users + rest)),
        kind="question",
        recipes=(use,),
    )


@family("user_home", "users", "where an account's home directory is")
def user_home(d: Draw) -> Instance:
    accounts = _accounts(d, 3)
    base = d.pick(("/srv/home", "/data/users", "/home", "/var/lib"))
    homes = [f"{base}/{lg}" for lg, _, _ in accounts]
    lines = [
        f"{lg}:x:{uid}:{uid}:{full}:{home}:/bin/bash"
        for (lg, full, uid), home in zip(accounts, homes, strict=True)
    ]
    setup = tuple(f"echo {q(line)} >> /etc/passwd" for line in lines)
    login, full, _ = accounts[0]
    task = d.phrase(
        (
            "Where is {login}'s home directory?",
            "What home folder does the account {login} have?",
            "Which directory is home for {full} (user {login})?",
        ),
        login=login,
        full=full,
    )
    use = d.recipe("user_home", user=login)
    return Instance(
        task=task,
        setup=setup,
        gold=(use.command,),
        check=all_of(token(homes[0]), no_token(*homes[1:])),
        answer=f"{login}'s home is {{out}}.",
        slots={"user": login},
        wrong_answers=(homes[1], f"/home/{login}x"),
        kind="question",
        recipes=(use,),
    )


@family("user_uid", "users", "an account's numeric user id")
def user_uid(d: Draw) -> Instance:
    accounts = _accounts(d, 3)
    setup = tuple(add_user(lg, uid, full) for lg, full, uid in accounts)
    login, _, uid = accounts[0]
    task = d.phrase(
        (
            "What's the UID of {login}?",
            "Which numeric user id does {login} have?",
            "give me the uid of the account {login}",
        ),
        login=login,
    )
    use = d.recipe("user_uid", user=login)
    return Instance(
        task=task,
        setup=setup,
        gold=(use.command,),
        check=number(uid),
        answer=f"{login} has uid {{out}}.",
        slots={"user": login},
        wrong_answers=(f"uid {accounts[1][2]}", f"uid {uid + 100}"),
        kind="question",
        recipes=(use,),
    )


@family("user_groups", "users", "which groups an account belongs to")
def user_groups(d: Draw) -> Instance:
    accounts = _accounts(d, 2)
    (login, full, uid), (other, _, _) = accounts
    groups = d.sample(GROUPS, d.num(3, 5))
    k = d.num(1, len(groups) - 1)
    setup = tuple(add_user(lg, u, f) for lg, f, u in accounts)
    setup += tuple(
        add_group(g, uid + 10 + i, [login, other] if i < k else [other])
        for i, g in enumerate(groups)
    )
    task = d.phrase(
        (
            "Which groups is {login} in?",
            "List the groups the account {login} belongs to.",
            "what groups does {full} ({login}) have?",
        ),
        login=login,
        full=full,
    )
    use = d.recipe("user_groups", user=login)
    return Instance(
        task=task,
        setup=setup,
        gold=(use.command,),
        check=all_of(*(token(g) for g in groups[:k]), no_token(*groups[k:])),
        answer=f"{login} is in: {{out}}.",
        slots={"user": login},
        wrong_answers=(" ".join(groups[k:]), " ".join(groups)),
        kind="question",
        recipes=(use,),
    )


@family("change_shell", "users", "change an account's login shell")
def change_shell(d: Draw) -> Instance:
    accounts = _accounts(d, 2)
    (login, full, uid), (other, other_full, other_uid) = accounts
    old, new = d.sample(("/bin/bash", "/bin/sh", "/bin/zsh", "/usr/sbin/nologin"), 2)
    setup = (add_user(login, uid, full, old), add_user(other, other_uid, other_full, old))
    if new == "/usr/sbin/nologin":
        templates = (
            "Stop {login} from logging in by setting their shell to /usr/sbin/nologin.",
            "Disable interactive logins for {login} (shell /usr/sbin/nologin).",
        )
    else:
        templates = (
            "Change {login}'s login shell to {new}.",
            "{full} wants {new} as login shell. Set it for the account {login}.",
        )
    task = d.phrase(templates, login=login, new=new, full=full)
    field = "getent passwd {} | cut -d: -f7"
    use = d.recipe("change_shell", user=login, shell=new)
    return Instance(
        task=task,
        setup=setup,
        gold=(use.command, field.format(login)),
        check=all_of(
            f'[ "$({field.format(login)})" = {q(new)} ]',
            f'[ "$({field.format(other)})" = {q(old)} ]',
        ),
        answer=f"{login}'s shell is now {{out}}.",
        slots={"user": login, "shell": new},
        recipes=(use,),
    )
