"""Landing a change set on the real files, exactly as shown, and taking it back.

``apply`` never re-runs a command: it moves the previewed files into place, outside the
sandbox, with the user's own rights.

- It first refuses, without touching anything, a change set that touches a path the
  sandbox protects (keys, git's code paths, startup files, ``.envrc`` …) or that
  conflicts: a real file that changed since the session first saw it (its fingerprint is
  taken when the change first appears in a change set, see ``Baseline``).
- Each file lands atomically: the new content is written next to its destination and
  fsynced (or renamed there, on the same file system), the old file is kept in the undo
  store (a hard link, or a fsynced copy across file systems), and one ``rename`` replaces
  it. A crash leaves every file either old or new, never half written; the journal says
  how far the apply got, and the next start reports it.
- What it replaced or deleted stays in the undo store (``undo_dir()``, 0700, capped in
  size, oldest dropped first) for ``undo``, which restores it only if the files still are
  what the apply wrote.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shellagent import paths
from shellagent.errors import ShellagentError, UsageError
from shellagent.sandbox import protect, secrets
from shellagent.transaction.changeset import Change, ChangeSet, file_digest
from shellagent.transaction.workspace import Workspace

__all__ = [
    "ApplyRefused",
    "ApplyResult",
    "Baseline",
    "apply",
    "interrupted",
    "undo",
    "undo_dir",
    "undoable",
]

UNDO_CAP_BYTES = 2 << 30
BATCH = 256


class ApplyRefused(ShellagentError):
    """Nothing was applied: the reasons name each path."""

    exit_code = 1


def undo_dir() -> Path:
    return paths.ensure_private_dir(paths.state_dir() / "undo")


# -- fingerprints and the baseline ---------------------------------------------------------


def fingerprint(path: Path) -> dict[str, Any] | None:
    """What a real path is now: type, size, mtime, content hash (None: it does not exist)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    kind = "dir" if stat.S_ISDIR(st.st_mode) else "link" if stat.S_ISLNK(st.st_mode) else "file"
    data: dict[str, Any] = {"type": kind, "mode": stat.S_IMODE(st.st_mode)}
    if kind == "file":
        data["size"] = st.st_size
        data["sha256"] = file_digest(path)
    elif kind == "link":
        data["target"] = os.readlink(path)
    return data


class Baseline:
    """The real files as the session first saw them change, kept beside its upper layers."""

    def __init__(self, workspace: Workspace) -> None:
        self.path = workspace.directory / "baseline.json"
        try:
            self.seen: dict[str, Any] = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.seen = {}

    def note(self, changes: ChangeSet) -> None:
        """Fingerprint the real side of every change not seen before."""
        added = False
        for c in changes:
            for real in filter(None, (c.path, c.renamed_from)):
                if str(real) not in self.seen:
                    self.seen[str(real)] = fingerprint(real)
                    added = True
        if added:
            self.path.write_text(json.dumps(self.seen))

    def conflicts(self, changes: ChangeSet) -> list[str]:
        found = []
        for c in changes:
            for real in filter(None, (c.path, c.renamed_from)):
                if str(real) not in self.seen:
                    continue
                if fingerprint(real) != self.seen[str(real)]:
                    found.append(f"{real} changed on your machine since the session began")
        return found


def protected_reasons(changes: ChangeSet, home: Path | None = None) -> list[str]:
    """Every change that touches a place the sandbox protects."""
    home = home or Path.home()
    hidden = [p.resolve() for p in secrets.secret_paths(home)] + paths.own_dirs()
    startup = [p for p, _ in protect.startup_places(home)]
    git_names = {n.rstrip("/") for n in (*protect.GIT_PROTECTED, *protect.GIT_MUST_NOT_APPEAR)}
    workspace_names = {n.rstrip("/") for n in protect.WORKSPACE_PROTECTED}
    found = []
    for c in changes:
        for p in filter(None, (c.path, c.renamed_from)):
            why = None
            parts = p.parts
            if ".git" in parts:
                inside = parts[parts.index(".git") + 1 :]
                if not inside or inside[0] in git_names or "/".join(inside[:3]) in git_names:
                    why = "git's own settings and code"
            if any(name in workspace_names for name in parts):
                why = "an editor or environment hook"
            if secrets.is_secret_name(p.name) or any(_within(p, h) for h in hidden):
                why = "a secret"
            if any(_within(p, s) for s in startup):
                why = "a startup file or a directory on PATH"
            if why:
                found.append(f"{p}: {why}")
    return found


def _within(path: Path, top: Path) -> bool:
    return path == top or top in path.parents


# -- apply -----------------------------------------------------------------------------


@dataclass
class ApplyResult:
    record: Path
    applied: int
    bytes: int
    seconds: float
    notes: list[str] = field(default_factory=list)


def _order(changes: ChangeSet) -> list[Change]:
    """Directories made top-down first, then files, then deletions bottom-up."""
    made_dirs = sorted(
        (c for c in changes if c.kind == "created" and c.file_type == "dir"),
        key=lambda c: len(c.path.parts),
    )
    files = [
        c
        for c in changes
        if c.kind in ("created", "modified", "renamed", "mode") and c not in made_dirs
    ]
    gone = sorted((c for c in changes if c.kind == "deleted"), key=lambda c: -len(c.path.parts))
    return [*made_dirs, *files, *gone]


def apply(workspace: Workspace, changes: ChangeSet, *, home: Path | None = None) -> ApplyResult:
    """Land ``changes`` (computed from ``workspace``); see the module docstring."""
    start = time.monotonic()
    refused = protected_reasons(changes, home)
    if refused:
        raise ApplyRefused(
            "nothing was applied: the changes touch protected paths: " + "; ".join(refused[:5]),
            hint="discard them, or make such changes yourself outside shellagent",
        )
    conflicts = Baseline(workspace).conflicts(changes)
    if conflicts:
        raise ApplyRefused(
            "nothing was applied: " + "; ".join(conflicts[:5]),
            hint="look at those files, then discard the session's changes or run it again",
        )
    record = undo_dir() / f"{workspace.session}-{int(time.time() * 1000)}"
    (record / "files").mkdir(parents=True, mode=0o700)
    ops = _order(changes)
    journal = (record / "journal.jsonl").open("a")
    _log(journal, {"begin": workspace.session, "total": len(ops)}, sync=True)
    done_bytes = 0
    pending: list[tuple[int, Change, dict[str, Any]]] = []
    committed = 0
    try:
        for i, change in enumerate(ops):
            entry = _prepare(change, record, i)
            pending.append((i, change, entry))
            if len(pending) >= BATCH:
                done_bytes += _commit(pending, journal)
                committed += len(pending)
                pending = []
        done_bytes += _commit(pending, journal)
        committed += len(pending)
        pending = []
    except OSError as exc:
        for _, _, entry in pending:  # staged, never renamed into place
            if "temp" in entry:
                with contextlib.suppress(OSError):
                    os.unlink(entry["temp"])
        where = f" ({exc.filename})" if exc.filename else ""
        raise ShellagentError(
            f"the apply stopped: {exc.strerror}{where}; {committed} of {len(ops)} changes "
            "were applied, each file is either as before or as shown",
            hint=f"free the problem, then `shellagent apply {workspace.session}` for the rest "
            f"or `shellagent undo {workspace.session}` to take back what landed",
        ) from None
    finally:
        journal.close()
    _log_path(record, {"end": workspace.session, "at": time.time()})
    workspace.reset()
    _trim_undo_store(keep=record)
    return ApplyResult(record, len(ops), done_bytes, time.monotonic() - start)


def _log(journal: Any, entry: dict[str, Any], *, sync: bool = False) -> None:
    journal.write(json.dumps(entry) + "\n")
    if sync:
        journal.flush()
        os.fsync(journal.fileno())


def _log_path(record: Path, entry: dict[str, Any]) -> None:
    with (record / "journal.jsonl").open("a") as journal:
        _log(journal, entry, sync=True)


def _prepare(change: Change, record: Path, i: int) -> dict[str, Any]:
    """Stage one change: new content next to its destination, the old one in the store."""
    entry: dict[str, Any] = {
        "i": i,
        "kind": change.kind,
        "path": str(change.path),
        "type": change.file_type,
    }
    if change.renamed_from is not None:
        entry["from"] = str(change.renamed_from)
    if change.kind == "mode":
        entry["old_modes"] = {str(change.path): change.mode_before}
        return entry
    olds = [p for p in (change.path, change.renamed_from) if p is not None and os.path.lexists(p)]
    for n, old in enumerate(olds):
        if os.path.isdir(old) and not os.path.islink(old):
            entry.setdefault("old_modes", {})[str(old)] = stat.S_IMODE(os.lstat(old).st_mode)
            continue
        kept = record / "files" / f"{i}-{n}"
        _keep(old, kept)
        entry.setdefault("backups", {})[str(old)] = str(kept)
    if change.kind in ("created", "modified", "renamed") and change.file_type != "dir":
        assert change.source is not None
        temp = change.path.with_name(f".{change.path.name}.shellagent-{i}")
        try:
            _stage(change, temp)
        except OSError:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise
        entry["temp"] = str(temp)
    return entry


def _keep(old: Path, kept: Path) -> None:
    """A copy of ``old`` in the undo store: a hard link, else a fsynced copy."""
    if os.path.islink(old):
        os.symlink(os.readlink(old), kept)
        return
    try:
        os.link(old, kept)
    except OSError:
        shutil.copy2(old, kept)
        _fsync(kept)


def _stage(change: Change, temp: Path) -> None:
    assert change.source is not None
    temp.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        temp.unlink()
    if change.file_type == "symlink":
        os.symlink(change.link_target or os.readlink(change.source), temp)
        return
    try:  # the same file system: no copy, the upper layer's file itself moves in
        os.link(change.source, temp)
    except OSError:
        shutil.copyfile(change.source, temp)
    if change.mode_after is not None:
        os.chmod(temp, change.mode_after)
    _fsync(temp)


def _mkdir(path: Path, mode: int) -> None:
    """Make a directory with exactly ``mode``: mkdir's goes through the process umask (the
    daemon's is 077), which would make every directory it applies private."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        return
    os.chmod(path, mode)


def _commit(pending: list[tuple[int, Change, dict[str, Any]]], journal: Any) -> int:
    """Journal the batch (fsynced), then make each change with one rename or syscall."""
    for _, _, entry in pending:
        _log(journal, {"staged": entry})
    journal.flush()
    os.fsync(journal.fileno())
    total = 0
    dirs: set[Path] = set()
    for i, change, entry in pending:
        path = change.path
        if change.kind == "created" and change.file_type == "dir":
            _mkdir(path, change.mode_after or 0o755)
        elif change.kind == "deleted":
            if change.file_type == "dir":
                with contextlib.suppress(OSError):
                    path.rmdir()
            else:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        elif change.kind == "mode":
            os.chmod(path, change.mode_after if change.mode_after is not None else 0o644)
        else:
            os.replace(entry["temp"], path)
            if change.kind == "renamed" and change.renamed_from is not None:
                with contextlib.suppress(FileNotFoundError):
                    change.renamed_from.unlink()
                dirs.add(change.renamed_from.parent)
            total += change.size_after
        dirs.add(path.parent)
        after = fingerprint(path) if change.kind != "deleted" else None
        _log(journal, {"done": i, "after": after})
    for d in dirs:
        _fsync_dir(d)
    journal.flush()
    os.fsync(journal.fileno())
    return total


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        _fsync(path)


# -- the undo store ------------------------------------------------------------------------


@dataclass
class Record:
    path: Path
    session: str
    at: float
    staged: dict[int, dict[str, Any]]
    done: dict[int, dict[str, Any] | None]
    total: int
    finished: bool
    undone: bool

    @property
    def size(self) -> int:
        return sum(f.stat().st_size for f in (self.path / "files").glob("*") if f.is_file())


def _read(record: Path) -> Record | None:
    staged: dict[int, dict[str, Any]] = {}
    done: dict[int, dict[str, Any] | None] = {}
    session, total, finished, undone = "", 0, False, False
    try:
        lines = (record / "journal.jsonl").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            break  # a torn last line of an interrupted apply
        if "begin" in entry:
            session, total = entry["begin"], entry["total"]
        elif "staged" in entry:
            staged[entry["staged"]["i"]] = entry["staged"]
        elif "done" in entry:
            done[entry["done"]] = entry.get("after")
        elif "end" in entry:
            finished = True
        elif "undone" in entry:
            undone = True
    return Record(record, session, record.stat().st_mtime, staged, done, total, finished, undone)


def undoable() -> list[Record]:
    """Applies that can be undone, newest first."""
    found = [r for d in undo_dir().iterdir() if d.is_dir() and (r := _read(d)) and not r.undone]
    return sorted(found, key=lambda r: r.at, reverse=True)


def interrupted() -> list[Record]:
    """Applies that never finished (the process died): report them at start."""
    return [r for r in undoable() if not r.finished]


def undo(session: str | None = None) -> Record:
    """Take back the newest apply (of ``session``): refused if the files changed since."""
    candidates = [r for r in undoable() if session is None or r.session == session]
    if not candidates:
        what = f"of session {session} " if session else ""
        raise UsageError(
            f"nothing {what}to undo", hint="`shellagent undo --list` shows what can be"
        )
    record = candidates[0]
    if not record.finished:
        _settle(record)
    changed = []
    for i, after in record.done.items():
        path = Path(record.staged[i]["path"])
        if fingerprint(path) != after:
            changed.append(str(path))
    if changed:
        raise ApplyRefused(
            "nothing was undone: these files changed after the apply: " + ", ".join(changed[:5]),
            hint="undo those by hand, or keep the current state",
        )
    for i in sorted(record.done, reverse=True):
        _restore(record.staged[i])
    _log_path(record.path, {"undone": time.time()})
    return record


def _settle(record: Record) -> None:
    """After an apply that died: which staged changes landed (their temp file was renamed
    into place, the path is gone …) though the journal had no time to say so."""
    for i, entry in record.staged.items():
        if i in record.done:
            continue
        path = Path(entry["path"])
        temp = entry.get("temp")
        if temp is not None:
            if os.path.lexists(temp):
                with contextlib.suppress(OSError):
                    os.unlink(temp)  # staged, never landed
                continue
            landed = True
        elif entry["kind"] == "deleted":
            landed = not os.path.lexists(path)
        elif entry["kind"] == "mode":
            old = entry.get("old_modes", {}).get(str(path))
            landed = os.path.exists(path) and stat.S_IMODE(os.lstat(path).st_mode) != old
        else:
            landed = os.path.lexists(path)
        if landed:
            record.done[i] = fingerprint(path) if entry["kind"] != "deleted" else None


def _restore(entry: dict[str, Any]) -> None:
    path = Path(entry["path"])
    backups = entry.get("backups", {})
    if entry["kind"] == "created" or (entry["kind"] == "renamed" and str(path) not in backups):
        if entry["type"] == "dir":
            with contextlib.suppress(OSError):
                path.rmdir()
        else:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    if entry["kind"] == "deleted" and entry["type"] == "dir":
        mode = entry.get("old_modes", {}).get(str(path), 0o755)
        _mkdir(path, mode)
    for original, kept in backups.items():
        target = Path(original)
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = target.with_name(f".{target.name}.shellagent-undo")
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        if os.path.islink(kept):
            os.symlink(os.readlink(kept), temp)
        else:
            shutil.copy2(kept, temp)
            _fsync(temp)
        os.replace(temp, target)
    for original, mode in entry.get("old_modes", {}).items():
        with contextlib.suppress(OSError):
            os.chmod(original, mode)


def _trim_undo_store(keep: Path, cap: int = UNDO_CAP_BYTES) -> None:
    records = sorted(
        (r for d in undo_dir().iterdir() if d.is_dir() and (r := _read(d))), key=lambda r: r.at
    )
    total = sum(r.size for r in records)
    for r in records:
        if total <= cap or r.path == keep:
            break
        total -= r.size
        shutil.rmtree(r.path, ignore_errors=True)
