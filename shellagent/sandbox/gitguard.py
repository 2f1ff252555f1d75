"""A repository made during a session: what git on the host would later run from it is
removed after each command.

A ``.git`` that exists when a session starts is protected by mounts (``protect.py``). One
that does not exist yet cannot be: a read-only placeholder would make ``git init`` fail.
Yet a ``.git`` made inside the sandbox (``git init && git config core.fsmonitor …``) would
run its hooks and config the next time the user, or a shell prompt that shows git status,
runs git in that directory on the host. So for each write grant without a ``.git`` at the
start, after every command, from outside the sandbox:

- a ``.git`` that is a file or a symlink (a ``gitdir:`` pointer elsewhere) is removed;
- in a ``.git`` directory: every hook except git's own ``*.sample`` files, ``commondir``,
  ``objects/info/alternates``, ``modules/`` and ``worktrees/`` are removed, and ``config``
  keeps only settings that describe the repository (``SAFE_KEYS``: format, branches,
  remotes' URLs, user name …), never one that names a program, a hook directory or a file
  to include.

Everything is done through directory file descriptors opened with ``O_NOFOLLOW`` from the
grant down, so a command racing with the sweep cannot send it outside the repository. A
repository made deeper than the grant's top level (``mkdir sub && git -C sub init``) is not
looked at: the policy asks before such writes, and a change set review shows them.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

SAFE_KEYS = re.compile(
    r"core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase"
    r"|precomposeunicode|symlinks|autocrlf|eol|safecrlf|quotepath|compression)"
    r"|extensions\.(objectformat|refstorage)|init\.defaultbranch|user\.(name|email)"
    r"|branch\..+\.(remote|merge|rebase)|remote\..+\.(url|pushurl|fetch|push|tagopt|prune)"
)
REMOVED_ENTRIES = ("commondir", "objects/info/alternates", "modules", "worktrees")
MAX_CONFIG_BYTES = 64 * 1024
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def signature(grant: Path) -> tuple[int, ...]:
    """Changes whenever anything the sweep looks at may have changed (cheap: a few lstats)."""
    marks: list[int] = []
    git = os.path.join(grant, ".git")  # not pathlib: this runs after every command
    try:  # .git itself by identity only: everyday git (index, objects) changes its mtime
        st = os.lstat(git)
        marks += [st.st_ino, st.st_mode]
    except OSError:
        return (-1,)
    for rel in ("config", "hooks", *REMOVED_ENTRIES):
        try:
            st = os.lstat(os.path.join(git, rel))
            marks += [st.st_ino, st.st_mtime_ns, st.st_size]
        except OSError:
            marks.append(-1)
    return tuple(marks)


def sweep(grant: Path) -> list[str]:
    """Neutralise ``grant/.git`` if a command made one; what was removed, for the user."""
    removed: list[str] = []
    try:
        grant_fd = os.open(grant, _DIR_FLAGS)
    except OSError:
        return removed
    try:
        try:
            st = os.lstat(".git", dir_fd=grant_fd)
        except FileNotFoundError:
            return removed
        if not stat.S_ISDIR(st.st_mode):  # a gitdir: file or a symlink
            os.unlink(".git", dir_fd=grant_fd)
            return [f"{grant}/.git"]
        git_fd = os.open(".git", _DIR_FLAGS, dir_fd=grant_fd)
        try:
            where = f"{grant}/.git"
            removed += [f"{where}/hooks/{name}" for name in _clear_hooks(git_fd)]
            removed += [f"{where}/{rel}" for rel in REMOVED_ENTRIES if _remove(git_fd, rel)]
            removed += [f"{where}/config ({key})" for key in _filter_config(git_fd)]
        finally:
            os.close(git_fd)
    except OSError:
        pass
    finally:
        os.close(grant_fd)
    return removed


def _clear_hooks(git_fd: int) -> list[str]:
    try:
        st = os.lstat("hooks", dir_fd=git_fd)
    except FileNotFoundError:
        return []
    if not stat.S_ISDIR(st.st_mode):
        os.unlink("hooks", dir_fd=git_fd)
        return ["(not a directory)"]
    hooks_fd = os.open("hooks", _DIR_FLAGS, dir_fd=git_fd)
    gone = []
    try:
        for name in os.listdir(hooks_fd):
            if name.endswith(".sample"):
                continue
            _remove(hooks_fd, name)
            gone.append(name)
    finally:
        os.close(hooks_fd)
    return gone


def _remove(dir_fd: int, rel: str) -> bool:
    """Remove ``rel`` below ``dir_fd`` without following a symlink on the way."""
    *parents, name = rel.split("/")
    fds = [dir_fd]
    try:
        for part in parents:
            fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))
        st = os.lstat(name, dir_fd=fds[-1])
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(name, dir_fd=fds[-1])
        else:
            os.unlink(name, dir_fd=fds[-1])
        return True
    except OSError:
        return False
    finally:
        for fd in fds[1:]:
            os.close(fd)


def _filter_config(git_fd: int) -> list[str]:
    """Rewrite ``config`` with only ``SAFE_KEYS``; the keys that were dropped."""
    try:
        fd = os.open("config", os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=git_fd)
    except FileNotFoundError:
        return []
    except OSError:  # a symlink, a fifo …
        os.unlink("config", dir_fd=git_fd)
        return ["not a file"]
    with os.fdopen(fd, "rb") as f:
        text = f.read(MAX_CONFIG_BYTES + 1)
    entries = _parse(text) if len(text) <= MAX_CONFIG_BYTES else None
    if entries is None:
        os.unlink("config", dir_fd=git_fd)
        return ["unreadable or too large: all"]
    dropped = [key for key, _ in entries if not SAFE_KEYS.fullmatch(key)]
    if not dropped:
        return []
    kept = _render([(k, v) for k, v in entries if SAFE_KEYS.fullmatch(k)])
    tmp = ".config.sweep"
    out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644, dir_fd=git_fd)
    with os.fdopen(out, "w", encoding="utf-8") as f:
        f.write(kept)
    os.replace(tmp, "config", src_dir_fd=git_fd, dst_dir_fd=git_fd)
    return sorted(set(dropped))


def _parse(text: bytes) -> list[tuple[str, str]] | None:
    """(key, value) pairs as git reads them, includes not followed; None if git cannot."""
    git = shutil.which("git")
    if git is None:
        return None
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}
    try:
        proc = subprocess.run(
            [git, "config", "--file", "-", "--no-includes", "-z", "--list"],
            input=text,
            capture_output=True,
            env=env,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    pairs = []
    for record in proc.stdout.split(b"\0"):
        if record:
            key, _, value = record.decode("utf-8", "replace").partition("\n")
            pairs.append((key, value))
    return pairs


def _render(entries: list[tuple[str, str]]) -> str:
    """A config file holding ``entries`` (keys as ``git config --list`` prints them)."""
    lines: list[str] = []
    section_of_last = None
    for key, value in entries:
        section, _, rest = key.partition(".")
        subsection, _, name = rest.rpartition(".")
        header = f"[{section}]" if not subsection else f"[{section} {_quote(subsection)}]"
        if header != section_of_last:
            lines.append(header)
            section_of_last = header
        lines.append(f"\t{name} = {_quote(value)}")
    return "\n".join(lines) + "\n" if lines else ""


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'
