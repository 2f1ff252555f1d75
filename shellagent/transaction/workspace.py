"""Where a session's upper layers live, and which trees they cover.

overlayfs refuses an upper directory inside its own lower one, so the upper layers of an
overlaid home directory cannot live in the home's ``~/.local/state``: they go to
``/var/tmp/shellagent-UID/`` (on disk on every common distribution, unlike /tmp or the
runtime directory, which are often memory) unless ``SHELLAGENT_WORKSPACES_DIR`` says
otherwise. That directory is made 0700 and must belong to the user and not be a symlink (a
world-writable /var/tmp is the classic place for a planted link).

Layout, per session:
    <root>/<session>/manifest.json        the overlaid trees and when the session began
    <root>/<session>/<n>/upper/           writes to tree n
    <root>/<session>/<n>/work/            overlayfs's own scratch space
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from shellagent.errors import SandboxUnavailable
from shellagent.sandbox.profiles import Overlay

__all__ = ["Workspace", "session_dir", "workspaces_root"]


def workspaces_root() -> Path:
    override = os.environ.get("SHELLAGENT_WORKSPACES_DIR")
    root = Path(override) if override else Path(f"/var/tmp/shellagent-{os.getuid()}")
    try:
        root.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(root)
    except OSError as exc:
        raise SandboxUnavailable(
            f"cannot use {root} for the session's changes: {exc.strerror}",
            hint="set SHELLAGENT_WORKSPACES_DIR to a private directory on disk",
        ) from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise SandboxUnavailable(
            f"{root} is not a directory of yours: refusing to keep session changes there",
            hint="remove it, or set SHELLAGENT_WORKSPACES_DIR to a private directory",
        )
    if st.st_mode & 0o077:
        root.chmod(0o700)
    return root


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

    def __init__(self, session: str, trees: list[Tree], started: float) -> None:
        self.session = session
        self.trees = trees
        self.started = started

    @property
    def directory(self) -> Path:
        return session_dir(self.session)

    @classmethod
    def create(cls, session: str, lowers: list[Path]) -> Workspace:
        """Overlays for ``lowers`` (nested ones are covered by their parent's)."""
        chosen: list[Path] = []
        for lower in sorted({p.resolve() for p in lowers}, key=lambda p: len(p.parts)):
            if not any(lower.is_relative_to(c) for c in chosen):
                chosen.append(lower)
        base = session_dir(session)
        base.mkdir(mode=0o700)
        trees = []
        for n, lower in enumerate(chosen):
            (base / str(n) / "upper").mkdir(parents=True, mode=0o700)
            (base / str(n) / "work").mkdir(mode=0o700)
            trees.append(Tree(lower, base / str(n) / "upper", base / str(n) / "work"))
        made = cls(session, trees, time.time())
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
        return cls(session, trees, float(manifest["started"]))

    def _write_manifest(self) -> None:
        data = {"trees": [{"lower": str(t.lower)} for t in self.trees], "started": self.started}
        (self.directory / "manifest.json").write_text(json.dumps(data))

    def overlays(self) -> tuple[Overlay, ...]:
        """What the sandbox profile mounts."""
        return tuple(Overlay(t.lower, t.upper, t.work) for t in self.trees)

    def reset(self) -> None:
        """Forget every change (discard, or after an apply): empty upper layers."""
        for tree in self.trees:
            for d in (tree.upper, tree.work):
                _rmtree(d)
                d.mkdir(mode=0o700)

    def remove(self) -> None:
        _rmtree(self.directory)


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
