"""Paths a model's own command reads that exist nowhere: invented, never proposed.

A small model writing commands itself fills them with paths it has never seen
(``/opt/yarrow/logs/current.log``, ``~/code/saffron``) and repeats them until it gives up.
Before such a command is shown or run, the paths it reads are looked up in the session's
shell (confined); one that is not there sends the command back to the model with what the
working directory does hold, so the next try can use a real name. Only the operands of
commands known to read them are looked up (read-only commands, and file tools such as
``cd``, ``cp``, ``tar``); paths the command writes (the policy's ``writes``), or that sit
under one it writes, are not: a copy into a new folder is fine, and a script may take a
path it is about to make.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from shellagent.errors import ShellagentError

if TYPE_CHECKING:
    from shellagent.policy import Evaluation
    from shellagent.sandbox import Shell

__all__ = ["invented_paths", "listing_hint"]

_GLOB = set("*?[{$`")
# Programs whose operands that are not written are read: an invented one is an error. Any
# other (a script, an interpreter) may take a path it is about to make.
READS_OPERANDS = frozenset(
    {"cd", "pushd", "cp", "mv", "rsync", "ln", "tar", "zip", "unzip", "gzip", "gunzip", "xz"}
    | {"bzip2", "chmod", "chown", "chgrp", "touch", "du", "stat", "file", "diff", "cmp"}
)
LOOKED_UP = 12  # at most this many paths are looked up per command


def _read_paths(evaluation: Evaluation) -> list[str]:
    written = [w.rstrip("/") for s in evaluation.segments for w in s.writes]
    found: list[str] = []
    from shellagent.policy.programs import INTERPRETERS

    for segment in evaluation.segments:
        if segment.program in INTERPRETERS or not (
            segment.read_only or segment.program in READS_OPERANDS
        ):
            continue
        for word in segment.argv[1:]:
            if (
                not word
                or word.startswith("-")
                or "://" in word
                or "/" not in word
                or _GLOB & set(word)
                or "=" in word.split("/", 1)[0]
            ):
                continue
            path = word.rstrip("/") or "/"
            if any(path == w or path.startswith(w + "/") for w in written if w):
                continue
            found.append(word)
    return list(dict.fromkeys(found))[:LOOKED_UP]


def invented_paths(shell: Shell, evaluation: Evaluation) -> list[str]:
    """The paths ``evaluation``'s command reads that do not exist in ``shell`` (as the
    command wrote them); [] when all exist, or when they cannot be looked up."""
    paths = _read_paths(evaluation)
    if not paths:
        return []
    quoted = " ".join(shlex.quote(p) for p in paths)
    look = f'for p in {quoted}; do [ -e "$p" ] || [ -L "$p" ] || printf \'%s\\n\' "$p"; done'
    try:
        result = shell.run(look, timeout=10, confined=True)
    except ShellagentError:
        return []
    if result.timed_out or result.exit_code != 0:
        return []
    missing = set(result.output.splitlines())
    return [p for p in paths if p in missing]


def listing_hint(shell: Shell, limit: int = 30) -> str:
    """What the working directory holds, one line (for the model's next try)."""
    try:
        result = shell.run(f"ls -Ap | head -n {limit}", timeout=10, confined=True)
    except ShellagentError:
        return ""
    names = [n for n in result.output.splitlines() if n]
    return ", ".join(names)
