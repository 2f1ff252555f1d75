"""Which changes need the user to name them before they land, and why.

The places come from ``shellagent/protected.py`` (the policy and the sandbox use the same
list). A change's path is the *real* path (the overlay's lower directories are resolved),
so every place is built from the resolved home directory, and a path that reaches the home
directory another way (a bind mount, a second symlink) is recognised by the
``(st_dev, st_ino)`` of its parent directories. The same holds for the directories on PATH
(the login shell's, ``loginpath.py``) and shellagent's own directories.

What needs a look at the disk is looked at here, once per directory: whether a top-level
folder of the home directory is an install tree (``protected.install_marker``, seen through
``exists`` and ``listdir``, which may be a change set's merged view: a tree the session made
counts), and the files the shell startup files name.

Tiers (``Reason.tier``):

- ``never``: shellagent's own settings and data, and anything that is not a regular file,
  a directory or a symlink (a fifo, a socket, a device): never applied;
- ``startup``, ``config``, ``git``, ``workspace``, ``path``, ``secret``, ``link``: held back
  until the user names the path (``shellagent apply SESSION --include PATH``); ``-y`` never
  applies them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shellagent import paths, protected
from shellagent.sandbox import is_secret_name, secret_paths

__all__ = ["Guard", "Reason"]

INCLUDABLE = frozenset({"startup", "config", "git", "workspace", "path", "secret", "link"})


@dataclass(frozen=True)
class Reason:
    path: Path
    tier: str
    why: str

    @property
    def includable(self) -> bool:
        return self.tier in INCLUDABLE

    def text(self, home: Path | None = None) -> str:
        return f"{short(self.path, home)}: {self.why}"


def short(path: Path, home: Path | None = None) -> str:
    base = protected.real_home(home)
    text = str(path)
    return "~" + text[len(str(base)) :] if path.is_relative_to(base) else text


def _ident(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _parent(text: str) -> str:
    return text[: text.rfind("/")] or "/"


@dataclass(frozen=True)
class _Facts:
    own: bool = False
    on_path: bool = False
    hidden: bool = False
    gitroot: Path | None = None  # the nearest directory that looks like a repository
    home_rel: str | None = None  # relative to the home directory ("" for home itself)
    plain: bool = False  # only a name can make something in it held back (see reason)
    installed: str = ""  # why everything in it runs later (it is in an install tree)


class Guard:
    """Classifies real paths; caches what it learns about directories."""

    def __init__(
        self,
        home: Path | None = None,
        *,
        exists: Callable[[Path], bool] | None = None,
        listdir: Callable[[Path], list[str]] | None = None,
    ):
        self.home = protected.real_home(home)
        self.home_id = _ident(self.home)
        self.path_dirs = protected.path_dirs(self.home)
        self.path_ids = {i for d in self.path_dirs if (i := _ident(d)) is not None}
        own = [Path(os.path.realpath(d)) for d in paths.own_dirs()]
        self.own = own
        self.own_ids = {i for d in own if (i := _ident(d)) is not None}
        self.hidden = [Path(os.path.realpath(p)) for p in secret_paths(self.home)]
        self.own_set = frozenset(self.own)
        self.path_set = frozenset(self.path_dirs)
        self.hidden_set = frozenset(self.hidden)
        self.named_set = frozenset(protected.startup_named(self.home))
        self._dirs: dict[Path, tuple[int, int] | None] = {}
        self._exists = exists or os.path.lexists
        self._listdir = listdir
        self._lookalike: dict[Path, bool] = {}
        self._known: dict[str, _Facts] = {}

    def _dir_id(self, path: Path) -> tuple[int, int] | None:
        if path not in self._dirs:
            self._dirs[path] = _ident(path)
        return self._dirs[path]

    def _facts(self, text: str) -> _Facts:
        """What holds for everything in the directory ``text`` (computed once per
        directory, keyed by its string: a change set may hold 100,000 paths in a few
        hundred directories)."""
        known = self._known.get(text)
        if known is not None:
            return known
        d = Path(text)
        up = self._facts(_parent(text)) if text != "/" else _Facts()
        ident = self._dir_id(d)
        if d == self.home or (ident is not None and ident == self.home_id):
            home_rel: str | None = ""
        elif up.home_rel is not None:
            home_rel = f"{up.home_rel}/{d.name}" if up.home_rel else d.name
        else:
            home_rel = None
        own = up.own or d in self.own_set or ident in self.own_ids
        on_path = up.on_path or d in self.path_set or ident in self.path_ids
        hidden = up.hidden or d in self.hidden_set
        gitroot = d if self.is_lookalike(d) else up.gitroot
        installed = up.installed or self._installed(d, home_rel)
        plain = not (own or on_path or hidden or gitroot or installed) and (
            protected.plain_below(home_rel, d.parts)
        )
        facts = _Facts(own, on_path, hidden, gitroot, home_rel, plain, installed)
        self._known[text] = facts
        return facts

    def _installed(self, d: Path, home_rel: str | None) -> str:
        """Why everything in ``d`` runs later when it is a top-level folder of the home
        directory that is an install tree; else ``""``."""
        if not home_rel or home_rel.startswith(".") or "/" in home_rel:
            return ""
        marker = protected.install_marker(d, self._exists, self._listdir)
        if marker is None:
            return ""
        return f"~/{home_rel} is an install tree (it holds {marker}): its programs run later"

    def is_lookalike(self, directory: Path) -> bool:
        if directory not in self._lookalike:
            self._lookalike[directory] = protected.is_gitdir_lookalike(directory, self._exists)
        return self._lookalike[directory]

    def reason(
        self,
        path: Path,
        *,
        file_type: str | None = None,
        mode: int | None = None,
        deleting: bool = False,
    ) -> Reason | None:
        """Why ``path`` (a real path) must be named before it lands, or None; ``file_type``
        and ``mode`` are what the change makes there, when known; ``deleting``: the change
        removes it."""
        f = self._facts(_parent(str(path)))
        if (
            f.plain
            and not protected.name_only(path.name)
            and path not in self.own_set
            and path not in self.path_set
            and path not in self.named_set
        ):  # the common case, by far: only the name can matter
            if path in self.hidden_set or is_secret_name(path.name):
                return Reason(path, "secret", "a secret")
            return None
        if f.own or path in self.own_set:
            return Reason(path, "never", "shellagent's own settings and data")
        if path == self.home:
            rel: str | None = ""
        elif f.home_rel is not None:
            rel = f"{f.home_rel}/{path.name}" if f.home_rel else path.name
        else:
            rel = None
        found = protected.classify(
            rel, path.parts, file_type=file_type, mode=mode, deleting=deleting
        )
        if found is not None and found.tier in ("git", "workspace", "startup"):
            return Reason(path, found.tier, found.why)
        if f.installed:
            return Reason(path, "startup", f.installed)
        if rel and "/" not in rel and (file_type == "dir" or os.path.isdir(path)):
            installed = self._installed(path, rel)  # the install tree's folder itself
            if installed:
                return Reason(path, "startup", installed)
        if path in self.named_set:
            return Reason(path, "startup", "your shell startup files name it: runs at login")
        if f.gitroot is not None and protected.git_code(path.relative_to(f.gitroot).parts):
            why = f"git's own settings and code ({f.gitroot} is a repository)"
            return Reason(path, "git", why)
        if f.on_path or path in self.path_set:
            return Reason(path, "path", "a directory on PATH: commands you run are found there")
        if f.hidden or path in self.hidden_set or is_secret_name(path.name):
            return Reason(path, "secret", "a secret")
        if found is not None:
            return Reason(path, found.tier, found.why)
        return None

    def link_reason(self, link: Path, target: str) -> Reason | None:
        """Why a symlink at ``link`` pointing to ``target`` needs naming: it points at a
        place that would need naming itself (a later write through it lands there)."""
        aim = Path(os.path.normpath(link.parent / target))
        candidates = [aim]
        try:
            real = Path(os.path.realpath(aim))
        except OSError:
            real = aim
        if real != aim:
            candidates.append(real)
        for where in candidates:
            why = self.reason(where)
            if why is not None:
                return Reason(link, "link", f"a symlink to {short(where, self.home)} ({why.why})")
        return None
