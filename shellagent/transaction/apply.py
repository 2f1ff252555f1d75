"""Landing a change set on the real files, exactly as shown, and taking it back.

``apply`` never re-runs a command: it copies the previewed files into place, outside the
sandbox, with the user's own rights.

- It holds the session (``Workspace.hold``): a session a running task still works on is
  refused, and nothing writes to the upper layers while they are copied.
- It first refuses, without touching anything, a change set that holds back a change
  (``guard.py``: places that run code later, settings in the home directory, git's code
  paths, secrets, symlinks to any of these) the user did not name with ``include``, that
  holds something that is neither a regular file, a directory nor a symlink, or that
  conflicts: a real file that changed since the session first saw it (its fingerprint is
  taken when the change first appears in a change set, see ``Baseline``).
- Each file lands atomically: its content is *copied* (never linked: the upper layer's
  inode must not become the real file) into a new file with an unpredictable name in the
  destination directory, with set-id and sticky bits dropped and its modification time
  kept (a symlink's and a new directory's too); the old file is kept in the
  undo store; once the batch is durable (``syncfs``) one ``rename`` replaces each file.
  Every directory is reached by fds opened without following symlinks (``safefs.py``).
  A crash leaves every file either old or new, never half written; the journal says
  exactly which changes landed, and the next start reports it.
- What it replaced or deleted stays in the undo store (``undo_dir()``, 0700, capped in
  size, oldest dropped first) for ``undo``, which restores it only if the files still are
  what the apply wrote.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import stat
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Required, TextIO, TypedDict

from shellagent import paths
from shellagent.errors import ShellagentError, UsageError
from shellagent.transaction import safefs
from shellagent.transaction.changeset import Change, ChangeSet, file_digest, open_regular
from shellagent.transaction.guard import Reason, short
from shellagent.transaction.workspace import Workspace

__all__ = [
    "ApplyRefused",
    "ApplyResult",
    "ApplyStopped",
    "Baseline",
    "apply",
    "held_back",
    "interrupted",
    "undo",
    "undo_dir",
    "undoable",
]

UNDO_CAP_BYTES = 2 << 30
BATCH = 1024
KEEP_MODE = 0o777  # set-id and sticky bits never land


class ApplyRefused(ShellagentError):
    """Nothing was applied: the reasons name each path."""

    exit_code = 1


class ApplyStopped(ShellagentError):
    """The apply stopped midway: ``landed`` says exactly which changes are in place."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None, landed: list[str], total: int):
        super().__init__(message, hint=hint)
        self.landed = landed
        self.total = total


def undo_dir() -> Path:
    return paths.ensure_private_dir(paths.state_dir() / "undo")


@contextlib.contextmanager
def _store_lock() -> Iterator[None]:
    """Applies and undos one at a time (they share the undo store and may share files)."""
    fd = os.open(undo_dir(), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


# -- fingerprints and the baseline ---------------------------------------------------------


class Fingerprint(TypedDict, total=False):
    """What a real path is (``fingerprint``), as the baseline and the journal keep it."""

    type: Required[Literal["dir", "link", "file", "special"]]
    mode: Required[int]
    size: int  # a file's
    sha256: str | None  # a file's content (None: it could not be read)
    target: str  # a link's


# One change as staged, in the journal: enough to land it, and to take it back.
Staged = TypedDict(
    "Staged",
    {
        "i": Required[int],
        "kind": Required[str],
        "path": Required[str],
        "type": Required[str],
        "from": str,  # a rename's old path
        "after": Fingerprint,  # what lands
        "old_modes": dict[str, int | None],  # directories' (and a mode change's) modes
        "backups": dict[str, str],  # real path -> its copy in the undo store
        "temp": str,  # the new content, staged beside its destination
    },
    total=False,
)


def fingerprint(path: Path) -> Fingerprint | None:
    """What a real path is now: type, size, mode, content hash (None: it does not exist).
    Never opens what is not a regular file."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    kind: Literal["dir", "link", "file", "special"]
    if stat.S_ISDIR(st.st_mode):
        kind = "dir"
    elif stat.S_ISLNK(st.st_mode):
        kind = "link"
    elif stat.S_ISREG(st.st_mode):
        kind = "file"
    else:
        kind = "special"
    data: Fingerprint = {"type": kind, "mode": stat.S_IMODE(st.st_mode)}
    if kind == "file":
        data["size"] = st.st_size
        try:
            data["sha256"] = file_digest(path)
        except OSError:
            data["sha256"] = None
    elif kind == "link":
        data["target"] = os.readlink(path)
    return data


class Baseline:
    """The real files as the session first saw them change, kept beside its upper layers."""

    def __init__(self, workspace: Workspace) -> None:
        self.path = workspace.directory / "baseline.json"
        try:
            self.seen: dict[str, Fingerprint | None] = json.loads(self.path.read_text())
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
            self.save()

    def save(self) -> None:
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        temp.write_text(json.dumps(self.seen))
        os.replace(temp, self.path)

    def conflicts(self, changes: ChangeSet) -> list[str]:
        found = []
        for c in changes:
            for real in filter(None, (c.path, c.renamed_from)):
                if str(real) not in self.seen:
                    continue
                if fingerprint(real) != self.seen[str(real)]:
                    found.append(f"{real} changed on your machine since the session began")
        return found


# -- what is held back ---------------------------------------------------------------------


def held_back(
    changes: ChangeSet, include: Iterable[Path] = (), home: Path | None = None
) -> list[Reason]:
    """Every change that must not land as things stand: those that need naming and were
    not named in ``include``, and those that never land (own directories, special files)."""
    guard = changes.guard(home)
    named = {_real(p) for p in include}
    needed = _parents_of(named, changes)
    found: list[Reason] = []
    for c in changes:
        reasons: list[Reason] = []
        for where in filter(None, (c.path, c.renamed_from)):
            made = where == c.path and c.kind != "deleted"
            why = guard.reason(
                where,
                file_type=c.file_type if made else None,
                mode=c.mode_after if made else None,
                deleting=c.kind == "deleted" or where != c.path,
            )
            if why is not None:
                reasons.append(why)
            with contextlib.suppress(OSError):
                st = os.lstat(where)
                if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)) and not (
                    stat.S_ISLNK(st.st_mode)
                ):
                    reasons.append(
                        Reason(where, "never", "not a regular file, directory or symlink")
                    )
        if c.file_type == "special":
            reasons.append(Reason(c.path, "never", "not a regular file, directory or symlink"))
        if c.file_type == "symlink" and c.kind != "deleted" and c.link_target is not None:
            link = guard.link_reason(c.path, c.link_target)
            if link is not None:
                reasons.append(link)
        for r in reasons:
            if r.includable and _named(c, r, named, needed):
                continue
            found.append(r)
    return found


def _named(c: Change, r: Reason, named: set[Path], needed: set[Path]) -> bool:
    """The user named this change: its path (or the path the reason is about), a new
    directory a named path needs, or, for a deletion, a directory it is in."""
    if r.path in named or c.path in named or c.path in needed:
        return True
    return c.kind == "deleted" and any(p in named for p in c.path.parents)


def _real(path: Path) -> Path:
    """A path the user named, as the change set spells it: the parent resolved."""
    path = Path(os.path.abspath(os.path.expanduser(path)))
    try:
        return Path(os.path.realpath(path.parent)) / path.name
    except OSError:
        return path


def _parents_of(named: set[Path], changes: ChangeSet) -> set[Path]:
    """Directories the change set creates that a named path needs to exist."""
    made = {c.path for c in changes if c.kind == "created" and c.file_type == "dir"}
    return {p for n in named for p in n.parents if p in made}


def _refusal(reasons: list[Reason], session: str, home: Path | None) -> ApplyRefused:
    never = [r for r in reasons if not r.includable]
    listed = "; ".join(r.text(home) for r in (never or reasons)[:8])
    more = f" (and {len(reasons) - 8} more)" if len(reasons) > 8 else ""
    if never:
        return ApplyRefused(
            f"nothing was applied: the changes touch what is never applied: {listed}{more}",
            hint=f"`shellagent apply {session} --discard` drops them",
        )
    names = " ".join(f"--include {_quote(short(r.path, home))}" for r in reasons[:3])
    return ApplyRefused(
        "nothing was applied: these changes need you to name them, they are not applied "
        f"with -y: {listed}{more}",
        hint=f"look at them (`shellagent apply {session} --diff`), then "
        f"`shellagent apply {session} {names}`, or `--discard`",
    )


def _quote(text: str) -> str:
    import shlex

    return (
        text if text.startswith("~/") and shlex.quote(text[2:]) == text[2:] else shlex.quote(text)
    )


# -- apply -----------------------------------------------------------------------------


@dataclass
class ApplyResult:
    record: Path
    applied: int
    bytes: int
    seconds: float
    notes: list[str] = field(default_factory=list)


def _order(changes: ChangeSet) -> tuple[list[Change], int]:
    """Deletions of what a new entry takes the place of first (bottom-up), then new
    directories top-down, then files, then the other deletions bottom-up."""
    made_dirs = sorted(
        (c for c in changes if c.kind == "created" and c.file_type == "dir"),
        key=lambda c: len(c.path.parts),
    )
    files = [
        c
        for c in changes
        if c.kind in ("created", "modified", "renamed", "mode") and c.file_type != "dir"
    ]
    files += [c for c in changes if c.kind == "mode" and c.file_type == "dir"]
    taken = {c.path for c in changes if c.kind in ("created", "renamed")}
    gone = sorted((c for c in changes if c.kind == "deleted"), key=lambda c: -len(c.path.parts))
    early = [c for c in gone if any(p in taken for p in (c.path, *c.path.parents))]
    late = [c for c in gone if c not in early]
    return [*early, *made_dirs, *files, *late], len(early)


def apply(
    workspace: Workspace,
    changes: ChangeSet,
    *,
    home: Path | None = None,
    include: Iterable[Path] = (),
) -> ApplyResult:
    """Land ``changes`` (computed from ``workspace``); see the module docstring."""
    start = time.monotonic()
    workspace.hold()
    refused = held_back(changes, include, home)
    if refused:
        raise _refusal(refused, workspace.session, home)
    conflicts = Baseline(workspace).conflicts(changes)
    if conflicts:
        raise ApplyRefused(
            "nothing was applied: " + "; ".join(conflicts[:5]),
            hint="look at those files, then discard the session's changes or run it again",
        )
    with _store_lock(), safefs.DirWalker() as walker:
        record = undo_dir() / f"{workspace.session}-{int(time.time() * 1000)}"
        (record / "files").mkdir(parents=True, mode=0o700)
        files_fd = os.open(record / "files", safefs.DIR_FLAGS)
        store = (files_fd, record / "files")
        ops, clear_first = _order(changes)
        journal = (record / "journal.jsonl").open("a")
        _log(journal, {"begin": workspace.session, "total": len(ops)}, sync=True)
        landed: list[tuple[Change, Fingerprint | None]] = []
        pending: list[tuple[int, Change, Staged]] = []
        done_bytes = 0
        try:
            for i, change in enumerate(ops):
                if i == clear_first and pending:  # the way must be clear before staging
                    done_bytes += _commit(pending, journal, walker, files_fd, landed)
                    pending = []
                pending.append((i, change, _prepare(change, walker, store, i)))
                if len(pending) >= BATCH:
                    done_bytes += _commit(pending, journal, walker, files_fd, landed)
                    pending = []
            done_bytes += _commit(pending, journal, walker, files_fd, landed)
            pending = []
        except OSError as exc:
            raise _stopped(exc, workspace, ops, pending, walker, landed) from None
        finally:
            journal.close()
            os.close(files_fd)
        _keep_dir_times(changes, walker)
    _log_path(record, {"end": workspace.session, "at": time.time()})
    workspace.reset()
    _trim_undo_store(keep=record)
    return ApplyResult(record, len(ops), done_bytes, time.monotonic() - start)


def _keep_dir_times(changes: ChangeSet, walker: safefs.DirWalker) -> None:
    """New directories get the times they have in the upper layer (their contents, landed
    after them, changed them), deepest first; best effort: a time is not worth a failure."""
    made = [c for c in changes if c.kind == "created" and c.file_type == "dir"]
    for change in sorted(made, key=lambda c: -len(c.path.parts)):
        upper = _upper_of(changes, change.path)
        if upper is None:
            continue
        with contextlib.suppress(OSError):
            st = os.lstat(upper)
            fd, name = walker.parent(change.path)
            os.utime(name, ns=(st.st_atime_ns, st.st_mtime_ns), dir_fd=fd, follow_symlinks=False)


def _upper_of(changes: ChangeSet, path: Path) -> Path | None:
    """Where ``path`` (a real path) is in the upper layers the change set was read from."""
    for tree in changes.trees:
        if path == tree.lower or tree.lower in path.parents:
            return tree.upper / path.relative_to(tree.lower)
    return None


def _stopped(
    exc: OSError,
    workspace: Workspace,
    ops: list[Change],
    pending: list[tuple[int, Change, Staged]],
    walker: safefs.DirWalker,
    landed: list[tuple[Change, Fingerprint | None]],
) -> ApplyStopped:
    """Clean the staged files that never landed, note the landed ones in the baseline (so
    applying the rest later is not refused by what this apply did), say exactly what is in
    place."""
    for _, _, entry in pending:
        if "temp" in entry:
            with contextlib.suppress(OSError, ValueError):
                fd, _ = walker.parent(Path(entry["temp"]))
                os.unlink(Path(entry["temp"]).name, dir_fd=fd)
    baseline = Baseline(workspace)
    for change, after in landed:
        baseline.seen[str(change.path)] = after
        if change.renamed_from is not None:
            baseline.seen[str(change.renamed_from)] = None
    with contextlib.suppress(OSError):
        baseline.save()
    where = f" ({exc.filename})" if exc.filename else ""
    names = ", ".join(short(c.path) for c, _ in landed[:5])
    more = f" and {len(landed) - 5} more" if len(landed) > 5 else ""
    what = f": {names}{more}" if landed else ""
    return ApplyStopped(
        f"the apply stopped: {exc.strerror}{where}; {len(landed)} of {len(ops)} changes "
        f"landed{what}; every other file is as before",
        hint=f"fix the problem, then `shellagent apply {workspace.session}` for the rest, "
        f"or `shellagent undo {workspace.session}` to take back what landed",
        landed=[str(c.path) for c, _ in landed],
        total=len(ops),
    )


def _log(journal: TextIO, entry: Mapping[str, object], *, sync: bool = False) -> None:
    journal.write(json.dumps(entry) + "\n")
    if sync:
        journal.flush()
        os.fsync(journal.fileno())


def _log_path(record: Path, entry: Mapping[str, object]) -> None:
    with (record / "journal.jsonl").open("a") as journal:
        _log(journal, entry, sync=True)


def _prepare(change: Change, walker: safefs.DirWalker, store: tuple[int, Path], i: int) -> Staged:
    """Stage one change: new content next to its destination, the old one in the store.
    A new directory is made here already (empty, it changes nothing a reader sees), so
    what goes into it can be staged."""
    files_fd, files_dir = store
    entry: Staged = {
        "i": i,
        "kind": change.kind,
        "path": str(change.path),
        "type": change.file_type,
    }
    if change.renamed_from is not None:
        entry["from"] = str(change.renamed_from)
    if change.kind == "created" and change.file_type == "dir":
        fd, name = walker.parent(change.path)
        mode = (change.mode_after or 0o755) & KEEP_MODE
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, mode, dir_fd=fd)
        safefs.chmod_at(fd, name, mode)  # mkdir's mode went through the umask
        entry["after"] = {"type": "dir", "mode": mode}
        return entry
    if change.kind == "mode":
        entry["old_modes"] = {str(change.path): change.mode_before}
        return entry
    for n, old in enumerate(p for p in (change.path, change.renamed_from) if p is not None):
        fd, name = walker.parent(old)
        try:
            st = os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(st.st_mode):
            entry.setdefault("old_modes", {})[str(old)] = stat.S_IMODE(st.st_mode)
            continue
        kept = f"{i}-{n}"
        _keep(fd, name, st, files_fd, kept)
        entry.setdefault("backups", {})[str(old)] = str(files_dir / kept)
    if change.kind in ("created", "modified", "renamed") and change.file_type != "dir":
        assert change.source is not None
        fd, name = walker.parent(change.path)
        if change.file_type == "symlink":
            temp = safefs.temp_name(name)
            os.symlink(change.link_target or os.readlink(change.source), temp, dir_fd=fd)
            with contextlib.suppress(OSError):  # the link's own times, as made
                st = os.lstat(change.source)
                times = (st.st_atime_ns, st.st_mtime_ns)
                os.utime(temp, ns=times, dir_fd=fd, follow_symlinks=False)
            entry["after"] = {"type": "link", "mode": 0o777, "target": os.readlink(temp, dir_fd=fd)}
        else:
            mode = (change.mode_after if change.mode_after is not None else 0o644) & KEEP_MODE
            temp, size, digest = safefs.copy_into(change.source, fd, name, mode)
            entry["after"] = {"type": "file", "mode": mode, "size": size, "sha256": digest}
        entry["temp"] = str(change.path.parent / temp)
    return entry


def _keep(fd: int, name: str, st: os.stat_result, files_fd: int, kept: str) -> None:
    """A copy of the old ``name`` (in ``fd``) in the undo store: a hard link, else a copy."""
    if stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(name, dir_fd=fd), kept, dir_fd=files_fd)
        return
    try:
        os.link(name, kept, src_dir_fd=fd, dst_dir_fd=files_fd, follow_symlinks=False)
    except OSError:
        src = open_regular(name, dir_fd=fd)
        try:
            dst = os.open(
                kept, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600, dir_fd=files_fd
            )
            try:
                while chunk := os.read(src, safefs.CHUNK):
                    os.write(dst, chunk)
                os.fchmod(dst, stat.S_IMODE(st.st_mode) & KEEP_MODE)
                os.fsync(dst)
            finally:
                os.close(dst)
        finally:
            os.close(src)


def _commit(
    pending: list[tuple[int, Change, Staged]],
    journal: TextIO,
    walker: safefs.DirWalker,
    files_fd: int,
    landed: list[tuple[Change, Fingerprint | None]],
) -> int:
    """Make the staged files durable and journal the batch, then make each change with
    one rename or syscall, journalling each as it lands."""
    if not pending:
        return 0
    for _, _, entry in pending:
        _log(journal, {"staged": entry})
    journal.flush()
    touched = [files_fd, journal.fileno()]
    for _, change, _ in pending:
        with contextlib.suppress(OSError):
            touched.append(walker.open_dir(change.path.parent))
    synced = safefs.sync_fs(touched)
    if os.fstat(journal.fileno()).st_dev not in synced:
        os.fsync(journal.fileno())
    total = 0
    for i, change, entry in pending:
        fd, name = walker.parent(change.path)
        after: Fingerprint | None = entry.get("after")
        if change.kind == "created" and change.file_type == "dir":
            pass  # made when staged
        elif change.kind == "deleted":
            walker.forget(change.path)
            if change.file_type == "dir":
                with contextlib.suppress(OSError):
                    os.rmdir(name, dir_fd=fd)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=fd)
            after = None
        elif change.kind == "mode":
            mode = (change.mode_after if change.mode_after is not None else 0o644) & KEEP_MODE
            safefs.chmod_at(fd, name, mode)
            after = fingerprint(change.path)
        else:
            walker.forget(change.path)
            os.replace(Path(entry["temp"]).name, name, src_dir_fd=fd, dst_dir_fd=fd)
            if change.kind == "renamed" and change.renamed_from is not None:
                ofd, oname = walker.parent(change.renamed_from)
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(oname, dir_fd=ofd)
            total += change.size_after
        _log(journal, {"done": i, "after": after})
        journal.flush()  # no fsync: the batch's end makes it durable; this says how far
        landed.append((change, after))
    journal.flush()
    touched = [files_fd]
    for _, change, _ in pending:
        for d in {change.path.parent, *(p.parent for p in [change.renamed_from] if p)}:
            with contextlib.suppress(OSError):
                touched.append(walker.open_dir(d))
    safefs.sync_dirs(touched)
    os.fsync(journal.fileno())
    return total


# -- the undo store ------------------------------------------------------------------------


@dataclass
class Record:
    path: Path
    session: str
    at: float
    staged: dict[int, Staged]
    done: dict[int, Fingerprint | None]
    total: int
    finished: bool
    undone: bool

    @property
    def size(self) -> int:
        return sum(f.stat().st_size for f in (self.path / "files").glob("*") if f.is_file())


def _read(record: Path) -> Record | None:
    staged: dict[int, Staged] = {}
    done: dict[int, Fingerprint | None] = {}
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
    held = _hold_if_kept(record.session)
    try:
        with _store_lock(), safefs.DirWalker() as walker:
            if not record.finished:
                _settle(record, walker)
            changed = []
            for i, after in record.done.items():
                path = Path(record.staged[i]["path"])
                if fingerprint(path) != after:
                    changed.append(str(path))
            if changed:
                raise ApplyRefused(
                    "nothing was undone: these files changed after the apply: "
                    + ", ".join(changed[:5]),
                    hint="undo those by hand, or keep the current state",
                )
            for i in sorted(record.done, reverse=True):
                _restore(record.staged[i], walker)
            _log_path(record.path, {"undone": time.time()})
    finally:
        if held is not None:
            held.release()
    return record


def _hold_if_kept(session: str) -> Workspace | None:
    """The session's kept changes, held while an undo of it runs (None: none are kept)."""
    try:
        workspace = Workspace.open(session)
    except ShellagentError:
        return None
    try:
        workspace.hold()
    except UsageError:
        return None  # removed meanwhile
    return workspace


def _settle(record: Record, walker: safefs.DirWalker) -> None:
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
                    fd, name = walker.parent(Path(temp))
                    os.unlink(name, dir_fd=fd)  # staged, never landed
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


def _restore(entry: Staged, walker: safefs.DirWalker) -> None:
    path = Path(entry["path"])
    backups = entry.get("backups", {})
    if entry["kind"] == "created" or (entry["kind"] == "renamed" and str(path) not in backups):
        with contextlib.suppress(OSError):
            fd, name = walker.parent(path)
            walker.forget(path)
            if entry["type"] == "dir":
                os.rmdir(name, dir_fd=fd)
            else:
                os.unlink(name, dir_fd=fd)
    if entry["kind"] == "deleted" and entry["type"] == "dir":
        mode = entry.get("old_modes", {}).get(str(path))
        fd, name = _make_parents(path, walker)
        _mkdir_at(fd, name, 0o755 if mode is None else mode)
    for original, kept in backups.items():
        target = Path(original)
        fd, name = _make_parents(target, walker)
        walker.forget(target)
        if os.path.islink(kept):
            temp = safefs.temp_name(name)
            os.symlink(os.readlink(kept), temp, dir_fd=fd)
        else:
            st = os.lstat(kept)
            temp, _, _ = safefs.copy_into(Path(kept), fd, name, stat.S_IMODE(st.st_mode))
            tfd = os.open(temp, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            try:
                os.utime(tfd, ns=(st.st_atime_ns, st.st_mtime_ns))
                os.fsync(tfd)
            finally:
                os.close(tfd)
        os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
    for original, mode in entry.get("old_modes", {}).items():
        if mode is None:  # a mode change from a mode that was never known
            continue
        with contextlib.suppress(OSError):
            fd, name = walker.parent(Path(original))
            safefs.chmod_at(fd, name, mode)


def _make_parents(path: Path, walker: safefs.DirWalker) -> tuple[int, str]:
    """(fd of the parent, name) of ``path``, making missing parents (0755) on the way."""
    missing = []
    parent = path.parent
    while not os.path.lexists(parent):
        missing.append(parent)
        parent = parent.parent
    for d in reversed(missing):
        fd, name = walker.parent(d)
        _mkdir_at(fd, name, 0o755)
    return walker.parent(path)


def _mkdir_at(fd: int, name: str, mode: int) -> None:
    """Make ``name`` in ``fd`` with exactly ``mode`` (mkdir's goes through the process umask,
    the daemon's 077, which would make every directory it restores private)."""
    try:
        os.mkdir(name, mode, dir_fd=fd)
    except FileExistsError:
        return
    safefs.chmod_at(fd, name, mode)


def _trim_undo_store(keep: Path, cap: int = UNDO_CAP_BYTES) -> None:
    """Drop the oldest records while the store holds more than ``cap`` bytes; by sizes and
    times alone (no journal is read: the store may hold many large ones)."""
    records: list[tuple[float, int, Path]] = []
    for d in undo_dir().iterdir():
        try:
            at = d.stat().st_mtime
            size = sum(e.stat(follow_symlinks=False).st_size for e in os.scandir(d / "files"))
        except OSError:
            continue
        records.append((at, size, d))
    records.sort()
    total = sum(size for _, size, _ in records)
    for _, size, path in records:
        if total <= cap or path == keep:
            break
        total -= size
        shutil.rmtree(path, ignore_errors=True)
