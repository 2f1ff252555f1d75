"""Git inspection: authors, counts, changed files, branches, tags and commits.

Repositories are built by the setup with fixed author and commit dates, so their commit
hashes, and everything the gold commands print, are the same on every run.
"""

from __future__ import annotations

from shellagent.taskgen import vocab
from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import (
    all_of,
    has,
    join,
    lacks,
    mkdir,
    no_token,
    number,
    path,
    q,
    token,
    write,
)

MESSAGES = (
    "add {f}", "fix typo in {f}", "update {f}", "refactor {f}", "document {f}",
    "tidy {f}", "speed up {f}", "handle errors in {f}",
)  # fmt: skip

Commit = tuple[str, str, dict[str, str]]  # author full name, message, files written


def _repo_dir(d: Draw) -> str:
    app = d.service()
    return d.pick((f"~/projects/{app}", f"/srv/{app}", f"/opt/{app}/src", f"~/code/{app}"))


def _email(full: str) -> str:
    return full.lower().replace(" ", ".") + "@example.org"


def _commit(where: str, n: int, author: str, message: str) -> str:
    stamp = f"2024-{1 + n // 28:02d}-{1 + n % 28:02d}T10:{n % 60:02d}:00+00:00"
    env = (
        f"GIT_AUTHOR_NAME={q(author)} GIT_AUTHOR_EMAIL={q(_email(author))} "
        f"GIT_COMMITTER_NAME={q(author)} GIT_COMMITTER_EMAIL={q(_email(author))} "
        f"GIT_AUTHOR_DATE={stamp} GIT_COMMITTER_DATE={stamp}"
    )
    return f"cd {path(where)} && git add -A && {env} git commit -qm {q(message)}"


def _build(where: str, commits: list[Commit]) -> list[str]:
    setup = [mkdir(where), f"git -C {path(where)} init -q -b main"]
    for n, (author, message, files) in enumerate(commits):
        for name, content in files.items():
            if "/" in name:
                setup.append(mkdir(join(where, name.rsplit("/", 1)[0])))
            setup.append(write(join(where, name), content))
        setup.append(_commit(where, n, author, message))
    return setup


def _history(d: Draw, k: int, authors: list[str]) -> list[Commit]:
    files = [f"{s}.{d.pick(('py', 'js', 'md', 'sh'))}" for s in d.stems(k + 2, vocab.CODE_STEMS)]
    commits: list[Commit] = []
    for i in range(k):
        touched = d.sample(files, d.num(1, 2)) if i else files[:2]
        message = d.pick(MESSAGES).format(f=touched[0])
        commits.append((d.pick(authors), message, {f: f"{f} v{i}" for f in touched}))
    return commits


@family("git_last_author", "git", "who made the latest commit")
def git_last_author(d: Draw) -> Instance:
    where = _repo_dir(d)
    authors = [full for _, full in d.people(3)]
    commits = _history(d, d.num(3, 8), authors[1:])
    commits[-1] = (authors[0], commits[-1][1], commits[-1][2])
    task = d.phrase(
        (
            "Who made the most recent commit in {repo}?",
            "Which author committed last to the repository at {repo}?",
            "who's responsible for the latest commit in {repo}?",
        ),
        repo=where,
    )
    use = d.recipe("git_last_author", repo=where)
    return Instance(
        task=task,
        setup=tuple(_build(where, commits)),
        gold=(use.command,),
        check=all_of(has(authors[0]), lacks(*authors[1:])),
        answer="The last commit was made by {out}.",
        slots={"repo": where},
        wrong_answers=tuple(authors[1:]),
        kind="question",
        recipes=(use,),
    )


@family("git_commit_count", "git", "how many commits a branch has")
def git_commit_count(d: Draw) -> Instance:
    where = _repo_dir(d)
    authors = [full for _, full in d.people(2)]
    n = d.num(2, 14)
    commits = _history(d, n, authors)
    task = d.phrase(
        (
            "How many commits are there on the main branch of {repo}?",
            "Count the commits in the history of {repo}.",
            "how many commits does {repo} have?",
        ),
        repo=where,
    )
    use = d.recipe("git_commit_count", repo=where)
    return Instance(
        task=task,
        setup=tuple(_build(where, commits)),
        gold=(use.command,),
        check=number(n),
        answer=f"{where} has {{out}} commits.",
        slots={"repo": where},
        wrong_answers=(f"{n + 1} commits", f"{n - 1} commits"),
        kind="question",
        recipes=(use,),
    )


@family("git_changed_files", "git", "which files the last commit changed")
def git_changed_files(d: Draw) -> Instance:
    where = _repo_dir(d)
    authors = [full for _, full in d.people(2)]
    names = [f"{s}.{d.pick(('py', 'js', 'md', 'css'))}" for s in d.stems(6, vocab.CODE_STEMS)]
    first = {n: f"{n} v1" for n in names[:4]}
    k = d.num(1, 3)
    last = {n: f"{n} v2" for n in d.sample(names[:4], k - 1) + [names[4]]}
    if d.chance(0.5):
        last[names[5]] = "new file"
    commits: list[Commit] = [(authors[0], "initial import", first), (authors[1], "update", last)]
    untouched = [n for n in names if n not in last]
    task = d.phrase(
        (
            "Which files did the last commit in {repo} change?",
            "What files were touched by the most recent commit of {repo}?",
        ),
        repo=where,
    )
    use = d.recipe("git_changed_files", repo=where)
    return Instance(
        task=task,
        setup=tuple(_build(where, commits)),
        gold=(use.command,),
        check=all_of(has(*last), lacks(*untouched)),
        answer="The last commit changed: {out|lines}.",
        slots={"repo": where},
        wrong_answers=(", ".join(untouched), ", ".join(names)),
        kind="question",
        recipes=(use,),
    )


BRANCHES = ("develop", "feature/login", "fix/typos", "release-2.1", "experiment", "hotfix-cart")


@family("git_current_branch", "git", "which branch is checked out")
def git_current_branch(d: Draw) -> Instance:
    where = _repo_dir(d)
    authors = [full for _, full in d.people(1)]
    others = d.sample(BRANCHES, d.num(1, 3))
    current = d.pick(others + ["main"])
    setup = _build(where, _history(d, 2, authors))
    setup += [f"git -C {path(where)} branch {q(b)}" for b in others]
    setup.append(f"git -C {path(where)} checkout -q {q(current)}")
    rest = [b for b in others + ["main"] if b != current]
    task = d.phrase(
        (
            "Which branch is {repo} on right now?",
            "What's the current git branch of {repo}?",
            "tell me which branch is checked out in {repo}",
        ),
        repo=where,
    )
    use = d.recipe("git_current_branch", repo=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(token(current), no_token(*rest)),
        answer=f"{where} is on branch {{out}}.",
        slots={"repo": where},
        wrong_answers=tuple(rest[:2]),
        kind="question",
        recipes=(use,),
    )


@family("git_commit_changes", "git", "commit the pending changes with a message")
def git_commit_changes(d: Draw) -> Instance:
    where = _repo_dir(d)
    authors = [full for _, full in d.people(1)]
    commits = _history(d, d.num(1, 4), authors)
    tracked = sorted({f for _, _, files in commits for f in files})
    setup = _build(where, commits)
    setup += [
        f"git -C {path(where)} config user.name {q(authors[0])}",
        f"git -C {path(where)} config user.email {q(_email(authors[0]))}",
    ]
    changed = d.pick(tracked)
    new = f"{d.pick(vocab.WORDS)}.md"
    setup += [f"echo 'edited' >> {path(join(where, changed))}", write(join(where, new), "notes")]
    message = d.pick(("Update docs", "Fix the build", "Add notes", "Tidy up before release"))
    task = d.phrase(
        (
            "Commit all the pending changes in {repo}, the new file {new} included, with the "
            "message '{msg}'.",
            'In {repo}, stage everything (including {new}) and commit it as "{msg}".',
        ),
        repo=where,
        new=new,
        msg=message,
    )
    git = f"git -C {path(where)}"
    use = d.recipe("git_commit_all", repo=where, message=message)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"{git} log -1 --format=%s"),
        check=all_of(
            f'[ -z "$({git} status --porcelain)" ]',
            f'[ "$({git} log -1 --format=%s)" = {q(message)} ]',
            f'[ "$({git} rev-list --count HEAD)" -eq {len(commits) + 1} ]',
            f"{git} ls-files --error-unmatch {q(new)} >/dev/null 2>&1",
        ),
        answer=f"Committed in {where} with the message: {{out}}",
        slots={"repo": where, "message": message},
        recipes=(use,),
    )


@family("git_tag", "git", "tag the current commit")
def git_tag(d: Draw) -> Instance:
    where = _repo_dir(d)
    authors = [full for _, full in d.people(1)]
    tag = f"v{d.num(0, 4)}.{d.num(0, 12)}.{d.num(0, 9)}"
    old = "v0.0.1"
    setup = _build(where, _history(d, d.num(2, 5), authors))
    setup.insert(-1, f"git -C {path(where)} tag {old}")
    task = d.phrase(
        (
            "Tag the current commit of {repo} as {tag}.",
            "Create the git tag {tag} on HEAD in {repo}.",
            "Mark the latest commit in {repo} with the tag {tag}.",
        ),
        repo=where,
        tag=tag,
    )
    git = f"git -C {path(where)}"
    tagged = f"$({git} rev-parse -q --verify '{tag}^{{commit}}')"
    use = d.recipe("git_tag", repo=where, tag=tag)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command, f"{git} tag --list"),
        check=f'[ "{tagged}" = "$({git} rev-parse HEAD)" ]',
        answer="Tagged. Tags now: {out|lines}.",
        slots={"repo": where, "tag": tag},
        recipes=(use,),
    )


@family("git_untracked", "git", "which files git does not track")
def git_untracked(d: Draw) -> Instance:
    where = _repo_dir(d)
    authors = [full for _, full in d.people(1)]
    commits = _history(d, d.num(1, 3), authors)
    tracked = sorted({f for _, _, files in commits for f in files})
    extra = [
        f"{w}.{d.pick(('txt', 'log', 'tmp', 'md'))}" for w in d.sample(vocab.WORDS, d.num(1, 3))
    ]
    setup = _build(where, commits) + [write(join(where, f), "scratch") for f in extra]
    task = d.phrase(
        (
            "Which files in {repo} are not tracked by git?",
            "What untracked files are lying around in the repository {repo}?",
        ),
        repo=where,
    )
    use = d.recipe("git_untracked", repo=where)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(has(*extra), lacks(*tracked)),
        answer="Untracked: {out|lines}.",
        slots={"repo": where},
        wrong_answers=(", ".join(tracked),),
        kind="question",
        recipes=(use,),
    )


@family("git_author_of_change", "git", "who wrote the commit whose message mentions a word")
def git_author_of_change(d: Draw) -> Instance:
    where = _repo_dir(d)
    authors = [full for _, full in d.people(3)]
    commits = _history(d, d.num(3, 6), authors[1:])
    topic = d.pick(("timezone", "unicode", "pagination", "retry", "caching", "logging"))
    at = d.num(0, len(commits) - 1)
    files = commits[at][2]
    commits[at] = (authors[0], f"fix {topic} bug in {next(iter(files))}", files)
    task = d.phrase(
        (
            "Who wrote the commit in {repo} that fixed the {topic} bug?",
            "In {repo}, which author's commit message mentions {topic}?",
        ),
        repo=where,
        topic=topic,
    )
    use = d.recipe("git_author_of_change", repo=where, pattern=topic)
    return Instance(
        task=task,
        setup=tuple(_build(where, commits)),
        gold=(use.command,),
        check=all_of(has(authors[0]), lacks(*authors[1:])),
        answer="{out}",
        slots={"repo": where, "topic": topic},
        wrong_answers=tuple(authors[1:]),
        kind="question",
        recipes=(use,),
    )
