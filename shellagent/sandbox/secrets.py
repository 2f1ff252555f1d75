"""What the sandbox hides: credentials, histories and session stores, by path, by name and
by content.

The table is ``shellagent/credentials.py`` (the policy asks before reading the same
places). Four sources, all masked (an empty read-only tmpfs over a directory, /dev/null
over a file) in the ``default`` profile:

- ``HOME_SECRETS``: places in the home directory, exact or glob (``snap/*/common/.mozilla``);
- ``SYSTEM_SECRETS``: places outside it (``/etc/shadow``, SSH host keys);
- files whose *name* looks like a credential (``.env``, ``prod.env``, ``id_ed25519``,
  ``terraform.tfstate`` …, matched case-insensitively) found by a bounded scan of the
  workspace, the write grants and the home directory, ``node_modules``-style folders
  included; also any file there that is a hard link to a masked file;
- tools' settings files in the home directory whose *content* holds a credential
  (``content_scan``, ``credentials.holds_secret``): a bounded walk of ``~/.config`` and the
  ``~/.TOOL`` folders and files, each file's verdict remembered by its inode, size and
  time so that a later scan reads only what changed.

A user adds paths in config.toml (``[sandbox] hide = ["~/work/customer-data"]``). A file
created after the sandbox started is not masked by name: the scan runs at start.
"""

from __future__ import annotations

import glob
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from shellagent.credentials import (
    HOME_SECRETS,
    NOT_SECRET_SUFFIXES,
    SECRET_FILE_PATTERNS,
    SYSTEM_SECRETS,
    content_candidate,
    holds_secret,
    is_secret_name,
)

__all__ = [
    "HOME_SECRETS",
    "NOT_SECRET_SUFFIXES",
    "SECRET_FILE_PATTERNS",
    "SYSTEM_SECRETS",
    "Scan",
    "content_scan",
    "home_secrets",
    "inodes_of",
    "is_secret_name",
    "scan",
    "secret_paths",
    "system_secrets",
]

# Big trees of other people's files: scanned once and cached by their mtime, so a session
# in a project with a node_modules or a .venv does not wait for them every time.
VENDOR_DIRS = frozenset(
    {"node_modules", ".venv", "venv", "target", ".tox", ".cache", "site-packages", "vendor"}
)
SKIP_DIRS = frozenset({"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"})
SCAN_DEPTH = 8
SCAN_LIMIT = 60_000  # entries looked at per scan
SCAN_BUDGET_S = 0.25  # and no longer than this; the scan says when it stopped early
HOME_SCAN_DEPTH = 4


def home_secrets(home: Path) -> list[Path]:
    """The places of ``HOME_SECRETS`` that exist (a dangling symlink counts)."""
    base = os.fspath(home)
    found: list[Path] = []
    for rel in HOME_SECRETS:
        path = os.path.join(base, rel)
        if any(ch in rel for ch in "*?["):
            if os.path.isdir(os.path.join(base, rel.split("/", 1)[0])):  # ~/snap, ~/.var
                found += [Path(p) for p in glob.glob(glob.escape(base) + "/" + rel)]
        elif os.path.lexists(path):
            found.append(Path(path))
    return found


def system_secrets() -> list[Path]:
    found: list[Path] = []
    for pattern in SYSTEM_SECRETS:
        if any(ch in pattern for ch in "*?["):
            found += [Path(p) for p in glob.glob(pattern)]
        elif os.path.lexists(pattern):
            found.append(Path(pattern))
    return found


def secret_paths(home: Path, extra: list[Path] | None = None) -> list[Path]:
    """Every fixed place to mask that exists: the home's, the system's, the user's list."""
    return home_secrets(home) + system_secrets() + list(extra or [])


@dataclass
class Scan:
    secrets: list[Path] = field(default_factory=list)
    repos: list[Path] = field(default_factory=list)  # .git directories (or files) found
    complete: bool = True


def scan(
    root: Path,
    *,
    depth: int = SCAN_DEPTH,
    masked_inodes: set[tuple[int, int]] | None = None,
    deadline: float | None = None,
    masked: frozenset[Path] = frozenset(),
    vendor: Callable[[Path], Scan] | None = None,
) -> Scan:
    """Secret-looking files, hard links to masked files, and nested ``.git`` under ``root``.

    Bounded by ``depth``, ``SCAN_LIMIT`` entries and a deadline; symlinks are not followed;
    directories in ``masked`` (hidden already) are not entered; a ``VENDOR_DIRS`` directory
    is handed to ``vendor`` (a cached scan of its own) when one is given.
    """
    result = Scan()
    deadline = deadline if deadline is not None else time.monotonic() + SCAN_BUDGET_S
    masked_inodes = masked_inodes or set()
    seen = 0
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        here, level = stack.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            name = entry.name
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir():
                    if Path(entry.path) in masked or name in SKIP_DIRS:
                        continue
                    if vendor is not None and name in VENDOR_DIRS:
                        inner = vendor(Path(entry.path))
                        result.secrets += inner.secrets
                        result.repos += inner.repos
                        continue
                    if name == ".git":
                        result.repos.append(Path(entry.path))
                    elif level + 1 < depth:
                        stack.append((Path(entry.path), level + 1))
                    continue
                if name == ".git":
                    result.repos.append(Path(entry.path))  # a gitdir: file
                    continue
                if is_secret_name(name):
                    result.secrets.append(Path(entry.path))
                elif masked_inodes:
                    st = entry.stat(follow_symlinks=False)
                    if st.st_nlink > 1 and (st.st_dev, st.st_ino) in masked_inodes:
                        result.secrets.append(Path(entry.path))
            except OSError:
                continue
        if seen > SCAN_LIMIT or time.monotonic() > deadline:
            result.complete = False
            break
    return result


INODE_LIMIT = 2000  # files looked at inside masked directories
# The directories whose files are worth a hard-link check: keys, not browser caches.
KEY_STORES = (".ssh", ".gnupg", ".aws", ".password-store", ".config/gcloud", ".kube", ".docker")


def inodes_of(files: list[Path]) -> set[tuple[int, int]]:
    """(device, inode) of the masked files that have other names (hard links), looking at
    the files among ``files`` and, bounded, those below the directories."""
    found: set[tuple[int, int]] = set()
    budget = INODE_LIMIT

    def note(st: os.stat_result) -> None:
        if st.st_nlink > 1:
            found.add((st.st_dev, st.st_ino))

    for path in files:
        try:
            if path.is_dir() and not path.is_symlink():
                for dirpath, _, names in os.walk(path):
                    for name in names[:budget]:
                        note(os.lstat(os.path.join(dirpath, name)))
                    budget -= len(names)
                    if budget <= 0:
                        break
            elif path.is_file():
                note(path.stat())
        except OSError:
            continue
    return found


# -- settings files that hold a credential, by content -------------------------------------

CONTENT_DEPTH = 3  # levels below ~/.config/TOOL or ~/.TOOL
CONTENT_ENTRIES = 20_000  # directory entries looked at per scan
CONTENT_READS = 400  # files read per scan (a verdict remembered is not a read)
CONTENT_BUDGET_S = 0.2  # and no longer than this; the rest waits for the next scan
# Folders of caches and application data inside a tool's folder: not settings.
CONTENT_SKIP_DIRS = frozenset(
    {
        *VENDOR_DIRS,
        *SKIP_DIRS,
        ".git",
        "Cache",
        "cache",
        "caches",
        "Code Cache",
        "GPUCache",
        "CachedData",
        "CachedExtensionVSIXs",
        "Crashpad",
        "logs",
        "log",
        "extensions",
        "plugins",
        "blob_storage",
        "Service Worker",
        "shm",
        "tmp",
    }
)

# (inode, modification time ns, size, 1 if it holds a credential) of each file looked at
Verdicts = dict[str, list[int]]


@dataclass
class ContentScan:
    secrets: list[Path] = field(default_factory=list)
    verdicts: Verdicts = field(default_factory=dict)
    read: int = 0  # files read this time
    complete: bool = True


def content_scan(
    home: Path,
    *,
    masked: frozenset[Path] = frozenset(),
    known: Verdicts | None = None,
    deadline: float | None = None,
) -> ContentScan:
    """Settings files in ``home`` that hold a credential (``credentials.holds_secret``):
    ``~/.TOOL`` files and, ``CONTENT_DEPTH`` levels deep, ``~/.config/TOOL`` and
    ``~/.TOOL`` folders (not caches, data or installed trees, not what ``masked`` hides
    already, symlinks not followed). ``known`` holds earlier verdicts: a file whose inode,
    size and time are unchanged is not read again. Bounded by ``CONTENT_ENTRIES`` entries,
    ``CONTENT_READS`` reads and a deadline; ``complete`` says whether it got through."""
    result = ContentScan()
    known = known or {}
    deadline = deadline if deadline is not None else time.monotonic() + CONTENT_BUDGET_S
    base = os.fspath(home)
    config = os.path.join(base, ".config")
    hidden = {os.fspath(p) for p in masked}
    try:
        top = sorted(os.scandir(base), key=lambda e: e.name, reverse=True)
    except OSError:
        return result
    # (path, level): a ~/.TOOL entry is level 0, ~/.config's folders too (it is level -1)
    stack = [(e.path, 0) for e in top if e.name.startswith(".") and e.name != ".config"]
    stack.append((config, -1))
    seen = 0
    while stack:
        here, level = stack.pop()
        if here in hidden:
            continue
        if level == 0 and not os.path.isdir(here):
            _judge(base, here, known, result)  # a ~/.TOOL file
            continue
        if os.path.islink(here) or not content_candidate(base, here + "/x"):
            continue  # ~/.cache, ~/.local …
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir():
                    if level + 1 <= CONTENT_DEPTH and entry.name not in CONTENT_SKIP_DIRS:
                        stack.append((entry.path, level + 1))
                    continue
            except OSError:
                continue
            _judge(base, entry.path, known, result)
        if seen > CONTENT_ENTRIES or result.read >= CONTENT_READS or time.monotonic() > deadline:
            result.complete = not stack
            break
    return result


def _judge(home: str, path: str, known: Verdicts, result: ContentScan) -> None:
    """Look at one file: its remembered verdict, or a read within the scan's budget."""
    if not content_candidate(home, path) or is_secret_name(os.path.basename(path)):
        return  # not settings, or masked by its name already
    try:
        st = os.lstat(path)
    except OSError:
        return
    stamp = [st.st_ino, st.st_mtime_ns, st.st_size]
    before = known.get(path)
    if isinstance(before, list) and len(before) == 4 and before[:3] == stamp:
        verdict = before[3]
    elif result.read >= CONTENT_READS:
        result.complete = False
        return
    else:
        result.read += 1
        verdict = int(holds_secret(path))
    result.verdicts[path] = [*stamp, verdict]
    if verdict:
        result.secrets.append(Path(path))
