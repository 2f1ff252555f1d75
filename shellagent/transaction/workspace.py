"""Where a session's upper layers live, which trees they cover, and who may use them.

overlayfs refuses an upper directory inside its own lower one, so the upper layers of an
overlaid home directory cannot live in the home's ``~/.local/state``: they go to
``/var/tmp/shellagent-UID/`` (on disk on every common distribution, unlike /tmp or the
runtime directory, which are often memory) unless ``SHELLAGENT_WORKSPACES_DIR`` says
otherwise. That directory is made 0700 and must belong to the user and not be a symlink (a
world-writable /var/tmp is the classic place for a planted link). When another user has
taken the name first, a private directory with an unpredictable name is made in /var/tmp
instead and remembered in the user's state directory, so nobody can stop a user's ``ask``
by squatting; only when no safe place exists does a session refuse to start.

A session directory is *locked* (an exclusive ``flock`` on the directory) for as long as a
sandbox works on it, and by apply, discard and undo: an apply never copies from, or empties,
upper layers a running sandbox still writes to. Kept change sets older than
``EXPIRE_AFTER_S`` are removed when a new session starts. Nothing piles up: the directory
goes with its last session, and ``sweep`` (the daemon's start and stop) removes what a
killed process left: sessions nobody holds that have no change (or no manifest), and the
trash of earlier discards. Kept change sets stay until applied, discarded or expired.

Layout, per session:
    <root>/<session>/manifest.json        the overlaid trees, the working directory, when
    <root>/<session>/<n>/upper/           writes to tree n
    <root>/<session>/<n>/work/            overlayfs's own scratch space
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from shellagent import paths
from shellagent.errors import SandboxUnavailable, ShellagentError
from shellagent.sandbox import Overlay

__all__ = [
    "SessionInUse",
    "Workspace",
    "expire_kept",
    "session_dir",
    "sweep",
    "workspaces_root",
]

EXPIRE_AFTER_S = 30 * 24 * 3600
DEFAULT_BASE = Path("/var/tmp")


class SessionInUse(ShellagentError):
    """Another process (a running task, an apply) holds the session."""

    exit_code = 1


def workspaces_root(base: Path = DEFAULT_BASE) -> Path:
    """The user's private directory for upper layers (see the module docstring)."""
    override = os.environ.get("SHELLAGENT_WORKSPACES_DIR")
    if override:
        root = Path(override)
        problem = _claim(root)
        if problem:
            raise SandboxUnavailable(
                f"cannot use {root} for the session's changes: {problem}",
                hint="set SHELLAGENT_WORKSPACES_DIR to a private directory on disk",
            )
        return root
    pointer = paths.state_dir() / "workspaces-root"
    with contextlib.suppress(OSError):
        remembered = Path(pointer.read_text().strip())
        if remembered.parent == base and _claim(remembered, create=False) is None:
            return remembered
    default = base / f"shellagent-{os.getuid()}"
    problem = _claim(default)
    if problem is None:
        return default
    # Someone else holds the usual name: a fresh directory nobody can have made before.
    try:
        fresh = Path(tempfile.mkdtemp(prefix=f"shellagent-{os.getuid()}-", dir=base))
        paths.ensure_private_dir(pointer.parent)
        temp = pointer.with_name(f".{pointer.name}.{os.getpid()}")
        temp.write_text(str(fresh))
        os.replace(temp, pointer)
    except OSError as exc:
        raise SandboxUnavailable(
            f"cannot keep the session's changes in {default} ({problem}) nor elsewhere in "
            f"{base}: {exc.strerror}",
            hint="set SHELLAGENT_WORKSPACES_DIR to a private directory on disk",
        ) from None
    return fresh


def _claim(root: Path, *, create: bool = True) -> str | None:
    """Make ``root`` (0700) if asked; why it is not a safe private directory, or None."""
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(root, 0o700)
        st = os.lstat(root)
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if st.st_uid != os.getuid():
        return "it belongs to another user"
    if st.st_mode & 0o077:
        try:
            os.chmod(root, 0o700, follow_symlinks=False)
        except (OSError, NotImplementedError):
            return "its permissions cannot be made private"
    return None


def session_dir(session: str) -> Path:
    if not session or "/" in session or session.startswith(".") or "\0" in session:
        from shellagent.errors import InputError

        raise InputError(f"not a session id: {session!r}", hint="`shellagent logs` lists them")
    return workspaces_root() / session


@dataclass(frozen=True)
class Tree:
    lower: Path  # the real directory
    upper: Path
    work: Path


class Workspace:
    """The overlays of one session: made by ``create``, found again by ``open``."""

    def __init__(
        self, session: str, trees: list[Tree], started: float, workdir: Path | None = None
    ) -> None:
        self.session = session
        self.trees = trees
        self.started = started
        self.workdir = workdir  # the task's working directory (resolved), when known
        self._lock_fd: int | None = None

    @property
    def directory(self) -> Path:
        return session_dir(self.session)

    @classmethod
    def create(cls, session: str, lowers: list[Path], workdir: Path | None = None) -> Workspace:
        """Overlays for ``lowers`` (nested ones are covered by their parent's), held
        (``hold``) by the caller until it releases them."""
        chosen: list[Path] = []
        for lower in sorted({p.resolve() for p in lowers}, key=lambda p: len(p.parts)):
            if not any(lower.is_relative_to(c) for c in chosen):
                chosen.append(lower)
        base = session_dir(session)
        try:
            base.mkdir(mode=0o700)
        except FileNotFoundError:  # the empty root went with another process's last session
            base = session_dir(session)
            base.mkdir(mode=0o700)
        trees = []
        for n, lower in enumerate(chosen):
            (base / str(n) / "upper").mkdir(parents=True, mode=0o700)
            (base / str(n) / "work").mkdir(mode=0o700)
            trees.append(Tree(lower, base / str(n) / "upper", base / str(n) / "work"))
        made = cls(session, trees, time.time(), workdir.resolve() if workdir else None)
        made.hold()
        made._write_manifest()
        return made

    @classmethod
    def open(cls, session: str) -> Workspace:
        base = session_dir(session)
        try:
            manifest = json.loads((base / "manifest.json").read_text())
        except (OSError, ValueError):
            from shellagent.errors import InputError

            raise InputError(
                f"no kept changes for session {session}",
                hint="`shellagent logs` lists sessions; changes are kept until applied or "
                "discarded",
            ) from None
        trees = [
            Tree(Path(t["lower"]), base / str(n) / "upper", base / str(n) / "work")
            for n, t in enumerate(manifest["trees"])
        ]
        workdir = manifest.get("workdir")
        return cls(session, trees, float(manifest["started"]), Path(workdir) if workdir else None)

    def _write_manifest(self) -> None:
        data = {
            "trees": [{"lower": str(t.lower)} for t in self.trees],
            "started": self.started,
            "workdir": str(self.workdir) if self.workdir else None,
        }
        (self.directory / "manifest.json").write_text(json.dumps(data))

    # -- who uses it ---------------------------------------------------------------------

    @property
    def held(self) -> bool:
        return self._lock_fd is not None

    def hold(self) -> None:
        """Lock the session for this process (a sandbox on it, an apply, a discard);
        ``SessionInUse`` when another holds it. Holding it twice is holding it once."""
        if self._lock_fd is not None:
            return
        directory = self.directory
        try:
            fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as exc:
            from shellagent.errors import InputError

            raise InputError(
                f"no kept changes for session {self.session} ({exc.strerror})",
                hint="`shellagent logs` lists sessions",
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            mine, now = os.fstat(fd), os.lstat(directory)
            if (mine.st_dev, mine.st_ino) != (now.st_dev, now.st_ino):
                raise FileNotFoundError  # removed (applied, discarded) while we waited
        except BlockingIOError:
            os.close(fd)
            raise SessionInUse(
                f"session {self.session} is in use (a task is still working on it, or "
                "another apply, discard or undo runs)",
                hint="wait until it has ended, then try again",
            ) from None
        except OSError:
            os.close(fd)
            from shellagent.errors import InputError

            raise InputError(
                f"no kept changes for session {self.session}",
                hint="`shellagent logs` lists sessions",
            ) from None
        self._lock_fd = fd

    def release(self) -> None:
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def __del__(self) -> None:
        self.release()

    def overlays(self, named: tuple[Path, ...] = ()) -> tuple[Overlay, ...]:
        """What the sandbox profile mounts; ``named``: places that run code later which the
        user's request names (left writable on the copy, ``Overlay.named``)."""
        return tuple(
            Overlay(t.lower, t.upper, t.work, tuple(n for n in named if n.is_relative_to(t.lower)))
            for t in self.trees
        )

    def reset(self) -> None:
        """Forget every change (discard, or after an apply): empty upper layers. The old
        ones are renamed aside at once and removed with the session (``remove``), or at
        the next reset."""
        for old in self.directory.glob("trash-*"):
            _rmtree(old)
        for n, tree in enumerate(self.trees):
            trash = self.directory / f"trash-{n}"
            os.mkdir(trash, 0o700)
            for d in (tree.upper, tree.work):
                os.rename(d, trash / d.name)
                d.mkdir(mode=0o700)

    def remove(self) -> None:
        """Remove the session's directory, and the root with it when it was the last."""
        directory = self.directory
        _rmtree(directory)
        self.release()
        if not os.environ.get("SHELLAGENT_WORKSPACES_DIR"):  # the user's own place stays
            with contextlib.suppress(OSError):
                os.rmdir(directory.parent)  # only when empty

    def stored_bytes(self) -> int:
        """Disk space the upper layers take (allocated blocks, so a sparse file counts
        for what it really holds and ``fallocate`` for what it reserved)."""
        total = 0
        for tree in self.trees:
            for dirpath, dirnames, filenames in os.walk(tree.upper):
                for name in (*dirnames, *filenames):
                    with contextlib.suppress(OSError):
                        total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
        return total


def expire_kept(max_age_s: float = EXPIRE_AFTER_S) -> list[str]:
    """Remove kept change sets older than ``max_age_s`` that nobody holds; their ids."""
    root = workspaces_root()
    gone = []
    now = time.time()
    for entry in os.scandir(root):
        if not entry.is_dir(follow_symlinks=False):
            continue
        try:
            manifest = json.loads((Path(entry.path) / "manifest.json").read_text())
            started = float(manifest["started"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if now - started < max_age_s:
            continue
        old = Workspace(entry.name, [], started)
        try:
            old.hold()
        except ShellagentError:
            continue
        old.remove()
        gone.append(entry.name)
    return gone


def sweep() -> list[str]:
    """Remove what killed processes left in the user's directory of upper layers: each
    session nobody holds whose upper layers hold nothing (or that has no manifest), and
    the trash of earlier discards; the directory itself when that empties it. Kept change
    sets (a manifest, changes) stay. The ids of the sessions removed."""
    root = workspaces_root()
    gone = []
    for entry in list(os.scandir(root)):
        if not entry.is_dir(follow_symlinks=False):
            continue
        old = Workspace(entry.name, [], 0.0)
        try:
            old.hold()
        except ShellagentError:
            continue  # in use
        try:
            base = Path(entry.path)
            for trash in base.glob("trash-*"):
                _rmtree(trash)
            try:
                trees = json.loads((base / "manifest.json").read_text())["trees"]
                empty = all(not any((base / str(n) / "upper").iterdir()) for n in range(len(trees)))
            except (OSError, ValueError, KeyError, TypeError):
                empty = True  # half made: no manifest, or one that does not parse
            if empty:
                old.remove()
                gone.append(entry.name)
        finally:
            old.release()
    if not os.environ.get("SHELLAGENT_WORKSPACES_DIR"):
        with contextlib.suppress(OSError):
            os.rmdir(root)
    return gone


def _rmtree(path: Path) -> None:
    """Remove a tree even where overlayfs left a directory without permissions (its work
    directory's ``work/`` is mode 000): open every directory up first."""
    if not path.exists():
        return
    for dirpath, dirnames, _ in os.walk(path):
        for name in dirnames:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(dirpath, name), 0o700, follow_symlinks=False)
    shutil.rmtree(path, ignore_errors=True)
