"""Where git runs, and why that matters: a repository's config names programs git runs.

Besides its options that run programs, git runs what a repository's config names without
being asked: ``core.fsmonitor`` for ``status``, diff and textconv drivers, ``gpg.program``.
The repository the session starts in is protected (the sandbox keeps its config read-only),
but one made during the session anywhere else is not, and the policy cannot see the disk.
So git is asked about wherever it would run but that directory (``cd sub && git status``,
``git -C sub …``), and there too when no repository was there at the start.

``git -C DIR`` moves git only when DIR is another directory: ``-C .``, ``-C ""``, a path
that resolves to the shell's directory, and ``-C "$PWD"`` (unless the line sets ``PWD``:
bash takes it from the directory it starts in, and the sandbox never carries it from one
command to the next) leave it where it is.
"""

from __future__ import annotations

import re

from shellagent.policy.pathclass import Places
from shellagent.policy.programs import Args
from shellagent.policy.words import Word

_PWD = re.compile(r'"?\$(?:PWD|\{PWD\})"?')
# PWD written anywhere but as $PWD / ${PWD}: an assignment, read PWD, declare PWD …
_SETS_PWD = re.compile(r"(?<![$\w{])PWD(?!\w)")


def moved(args: Args, places: Places, line: str) -> str:
    """The directory ``git -C`` moves git to, as written, when it is not the shell's own;
    "" when git stays where the shell is."""
    reading = args.reading
    if reading is None:
        value = args.values.get("-C")
        return value if value is not None and not _here(value, True, places, line) else ""
    for seen in reading.global_seen:
        if "-C" in (seen.forms or (seen.option,)) and seen.values:
            word = seen.values[0]
            if not _here(word.text, word.static, places, line):
                return word.text
    return ""


def here_words(args: Args, places: Places, line: str) -> list[Word]:
    """The ``-C "$PWD"`` values known to name the shell's directory: not words only known at
    run time, for the policy."""
    reading = args.reading
    if reading is None:
        return []
    return [
        seen.values[0]
        for seen in reading.global_seen
        if "-C" in (seen.forms or (seen.option,))
        and seen.values
        and not seen.values[0].static
        and _here(seen.values[0].text, False, places, line)
    ]


def _here(text: str, static: bool, places: Places, line: str) -> bool:
    if not static:
        # unquoted, a directory name with a blank or a glob character would split
        whole = text.startswith('"') or not any(c in (places.cwd or " ") for c in " \t\n*?[")
        return _PWD.fullmatch(text) is not None and whole and not _SETS_PWD.search(line)
    if text == "":
        return True  # git -C "": "the current working directory is left unchanged"
    if ".." in text.split("/"):
        return False  # sub/.. is the parent of where a symlink sub leads, for chdir
    resolved, here = places.resolve(text), places.resolve(".")
    return resolved is not None and resolved == here


def elsewhere(
    places: Places,
    workspace: str | None,
    starting_repo: bool | None,
    *,
    after_cd: bool,
    moved_to: str,
) -> str:
    """Why git may run programs a repository's config names: it runs somewhere other than
    the directory the session started in, or no repository was there at the start. ""
    when neither."""
    where = "after a cd in the same line" if after_cd else ""
    if not where and moved_to:
        where = f"in {moved_to} (git -C)"
    if not where and (workspace is None or places.cwd != workspace):
        where = f"in {places.cwd or 'an unknown directory'}"
    if not where and starting_repo is False:
        return (
            "no repository was in this directory when the session started: git would use "
            "one made during the session (a .git or a bare-repository look-alike), whose "
            "config can name programs (core.fsmonitor, diff drivers, gpg.program) that "
            "git runs"
        )
    if not where:
        return ""
    return (
        f"git runs {where}, not where the session started: a repository made during the "
        "session could name programs (core.fsmonitor, diff and textconv drivers, "
        "gpg.program) that git would run"
    )
