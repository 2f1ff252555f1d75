"""Shell text for generated tasks: quoting, setup steps, and the pieces of success checks.

Everything a family puts into a command goes through ``q`` or ``path``; nothing is pasted
into shell text unquoted. ``path`` keeps a leading ``~/`` outside the quotes so the shell
still expands it.

Checks that read the agent's answer use the files named by ``$ANSWER`` and
``$LAST_OUTPUT`` (see ``shellagent.eval.runner``). Names are matched as fixed strings;
numbers, addresses and sizes as whole *tokens* (runs of letters, digits and ``._/~+-``,
trailing dots dropped), so ``12`` does not match inside ``app12.log`` or ``120``.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

ANSWER = '"$ANSWER"'
LAST_OUTPUT = '"$LAST_OUTPUT"'


def q(text: str) -> str:
    """One shell word holding ``text`` exactly."""
    return shlex.quote(text)


def path(p: str) -> str:
    """A path as a shell word; ``~/x y`` becomes ``~/'x y'`` so the tilde still expands."""
    if p == "~":
        return "~"
    if p.startswith("~/"):
        rest = p[2:]
        return "~/" + (shlex.quote(rest) if rest else "")
    return shlex.quote(p)


def join(*parts: str) -> str:
    """A path joined with ``/`` (for display and as a value, not quoted)."""
    return "/".join(p.rstrip("/") if i == 0 else p.strip("/") for i, p in enumerate(parts))


# -- setup steps ---------------------------------------------------------------------------


def mkdir(*dirs: str) -> str:
    return "mkdir -p " + " ".join(path(d) for d in dirs)


def write(file: str, *lines: str) -> str:
    """A file holding ``lines``, each ended by a newline."""
    return f"printf '%s\\n' {' '.join(q(line) for line in lines)} > {path(file)}"


def append(file: str, *lines: str) -> str:
    return f"printf '%s\\n' {' '.join(q(line) for line in lines)} >> {path(file)}"


def fill(file: str, size: int, word: str = "data") -> str:
    """A file of exactly ``size`` bytes of real (not sparse) data, repeating ``word``."""
    return f"yes {q(word)} | head -c {size} > {path(file)}"


def empty(file: str) -> str:
    return f": > {path(file)}"


def age(file: str, days: int, hours: int = 0) -> str:
    """Set a file's modification time ``days`` (and ``hours``) ago."""
    # Not "1 days 3 hours ago": GNU date applies "ago" to the last item only.
    when = f"{days} days ago" if not hours else f"{days * 24 + hours} hours ago"
    return f"touch -d {q(when)} {path(file)}"


def stamp(file: str, when: str) -> str:
    """Set a file's modification time to a fixed date ("2024-03-01 10:00")."""
    return f"touch -d {q(when)} {path(file)}"


# -- checks --------------------------------------------------------------------------------


def all_of(*parts: str) -> str:
    """Every part must succeed; parts holding ``||`` are grouped."""
    return " && ".join(f"{{ {p}; }}" if "||" in p else p for p in parts if p)


def _tokens(file: str) -> str:
    return f"tr -cs 'A-Za-z0-9._/~+-' '\\n' < {file} | sed 's/[.]*$//'"


def has(*values: str, file: str = ANSWER, icase: bool = False) -> str:
    """``file`` contains every value (fixed strings)."""
    flags = "-qiF" if icase else "-qF"
    return all_of(*(f"grep {flags} -- {q(v)} {file}" for v in values))


def lacks(*values: str, file: str = ANSWER, icase: bool = False) -> str:
    """``file`` contains none of the values."""
    flags = "-qiF" if icase else "-qF"
    return all_of(*(f"! grep {flags} -- {q(v)} {file}" for v in values))


def token(value: str, file: str = ANSWER) -> str:
    """``file`` holds ``value`` as a whole token (see the module docstring)."""
    return f"{_tokens(file)} | grep -qxF -- {q(value)}"


def any_token(values: Iterable[str], file: str = ANSWER) -> str:
    return f"{_tokens(file)} | grep -qxF {' '.join('-e ' + q(v) for v in values)}"


def no_token(*values: str, file: str = ANSWER) -> str:
    return all_of(*(f"! {{ {_tokens(file)} | grep -qxF -- {q(v)}; }}" for v in values))


def number(n: int, file: str = ANSWER) -> str:
    return token(str(n), file)


# Sizes: a number with an optional unit (B, K, KB, KiB, M, …, attached or the next token);
# a unit's multiple is tried as both 1024 and 1000; no unit means bytes.
_SIZE_AWK = r"""
function unit(u) {
    if (u ~ /^(b|byte|bytes)$/) return 1
    if (u ~ /^(k|kb|kib|kbytes)$/) return 1024
    if (u ~ /^(m|mb|mib|mbytes)$/) return 1048576
    if (u ~ /^(g|gb|gib|gbytes)$/) return 1073741824
    return 0
}
function near(x, m,   d) {
    if (m == 0) return
    if (x * m >= lo && x * m <= hi) ok = 1
    if (m > 1) {
        d = (m == 1024) ? 1000 : ((m == 1048576) ? 1000000 : 1000000000)
        if (x * d >= lo && x * d <= hi) ok = 1
    }
}
{ t = tolower($0); sub(/[.]+$/, "", t) }
pending != "" {
    if (unit(t)) { near(pending + 0, unit(t)); pending = ""; next }
    near(pending + 0, 1); pending = ""
}
t ~ /^[0-9]+([.][0-9]+)?$/ { pending = t; next }
t ~ /^[0-9]+([.][0-9]+)?[a-z]+$/ {
    n = t; sub(/[a-z]+$/, "", n); u = t; sub(/^[0-9.]+/, "", u); near(n + 0, unit(u))
}
END { if (pending != "") near(pending + 0, 1); exit !ok }
"""


def size_near(size: int, tolerance: float = 0.1, file: str = ANSWER) -> str:
    """``file`` states a size within ``tolerance`` of ``size`` bytes ("4.3M", "4.3 MB", …)."""
    lo, hi = int(size * (1 - tolerance)), int(size * (1 + tolerance))
    script = "\n".join(line.strip() for line in _SIZE_AWK.strip().splitlines())
    return f"tr -cs 'A-Za-z0-9.' '\\n' < {file} | awk -v lo={lo} -v hi={hi} {q(script)}"


def reported(has_: Iterable[str], lacks_: Iterable[str] = ()) -> str:
    """What was asked for is in the answer or in the last command's output (either one
    holding every wanted value and none of the unwanted ones): for "show me" tasks."""
    parts = [f'grep -qF -- {q(v)} "$1"' for v in has_]
    parts += [f'! grep -qF -- {q(v)} "$1"' for v in lacks_]
    body = " && ".join(parts)
    return f"_seen() {{ {body}; }}; _seen {ANSWER} || _seen {LAST_OUTPUT}"


def exists(p: str) -> str:
    return f"[ -e {path(p)} ]"


def missing(p: str) -> str:
    return f"[ ! -e {path(p)} ] && [ ! -L {path(p)} ]"


def is_file(p: str) -> str:
    return f"[ -f {path(p)} ]"


def is_dir(p: str) -> str:
    return f"[ -d {path(p)} ]"


def file_has(p: str, *values: str) -> str:
    return has(*values, file=path(p))


def file_is(p: str, *lines: str) -> str:
    """``p`` holds exactly ``lines`` (each ended by a newline)."""
    return f"printf '%s\\n' {' '.join(q(line) for line in lines)} | cmp -s - {path(p)}"


def mode_is(p: str, octal: str) -> str:
    return f'[ "$(stat -c %a {path(p)})" = {q(octal)} ]'


def same_content(a: str, b: str) -> str:
    return f"cmp -s {path(a)} {path(b)}"


def add_user(login: str, uid: int, full_name: str = "", shell: str = "/bin/bash") -> str:
    """An account and its own group, written straight into /etc/passwd and /etc/group.

    The sandbox masks the shadow files, so ``useradd`` cannot run there; the setup writes
    the two lines that ``getent``, ``id``, ``chown`` and ``stat`` read.
    """
    entry = f"{login}:x:{uid}:{uid}:{full_name}:/home/{login}:{shell}"
    return f"echo {q(entry)} >> /etc/passwd && echo {q(f'{login}:x:{uid}:')} >> /etc/group"


def add_group(name: str, gid: int, members: Iterable[str] = ()) -> str:
    return f"echo {q(f'{name}:x:{gid}:' + ','.join(members))} >> /etc/group"
