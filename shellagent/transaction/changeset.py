"""The change set of a session: what its upper layers would do to the real files.

Read from overlayfs's upper directories: a file there is created (no such file below) or
modified (content, or only its mode); a 0/0 character device is a *whiteout* (the file or
directory below was deleted); a directory marked opaque (``user.overlay.opaque`` or
``trusted.overlay.opaque``) replaces the one below, so everything below that the upper
one does not hold again was deleted. overlayfs has no renames (``mv`` copies, then
deletes), so a deleted file and a created one with the same content are shown as a
rename. A file copied up without any change (``touch``) is not a change.

``Change.path`` is the real path; ``ChangeSet.render`` shows the set in 80 columns,
biggest first, deletions flagged; ``ChangeSet.diff`` gives unified diffs of small text
files.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from shellagent import protected
from shellagent.jsontypes import JsonObject
from shellagent.transaction.guard import Guard
from shellagent.transaction.workspace import Tree, Workspace

Kind = Literal["created", "modified", "deleted", "renamed", "mode"]
FileType = Literal["file", "dir", "symlink", "special"]
DIFF_MAX_BYTES = 64 * 1024
HASH_CHUNK = 1 << 20
OPAQUE = ("user.overlay.opaque", "trusted.overlay.opaque")


@dataclass(frozen=True)
class Change:
    path: Path  # the real path it is about
    kind: Kind
    file_type: FileType
    size_before: int = 0
    size_after: int = 0
    mode_before: int | None = None
    mode_after: int | None = None
    source: Path | None = None  # the new content in an upper layer (created, modified, renamed)
    renamed_from: Path | None = None
    link_target: str | None = None

    @property
    def weight(self) -> int:
        return max(self.size_before, self.size_after)

    def to_dict(self) -> JsonObject:
        data = asdict(self)
        for key in ("path", "source", "renamed_from"):
            data[key] = str(data[key]) if data[key] is not None else None
        return data


@dataclass(frozen=True)
class Flagged:
    """A change the summary lists first and never folds, with why."""

    change: Change
    notes: tuple[str, ...]
    held: bool  # applied only when the user names the path (or never)


@dataclass
class ChangeSet:
    changes: list[Change] = field(default_factory=list)
    workdir: Path | None = None  # the task's working directory (resolved), when known
    trees: tuple[Tree, ...] = ()  # the overlays it was read from
    stored_bytes: int = 0  # what the upper layers take on disk
    _flags: list[Flagged] | None = field(default=None, repr=False, compare=False)

    def __bool__(self) -> bool:
        return bool(self.changes)

    def __iter__(self) -> Iterator[Change]:
        return iter(self.changes)

    def count(self, kind: Kind) -> int:
        return sum(1 for c in self.changes if c.kind == kind)

    def summary(self) -> str:
        kinds: tuple[Kind, ...] = ("created", "modified", "deleted", "renamed", "mode")
        parts = [f"{n} {kind}" for kind in kinds if (n := self.count(kind))]
        return ", ".join(parts) if parts else "no changes"

    def to_dict(self) -> JsonObject:
        return {"summary": self.summary(), "changes": [c.to_dict() for c in self.changes]}

    def exists(self, path: Path) -> bool:
        """Whether ``path`` exists in the merged view the sandbox saw."""
        for tree in self.trees:
            if path == tree.lower or tree.lower in path.parents:
                upper = tree.upper / path.relative_to(tree.lower)
                try:
                    st = os.lstat(upper)
                except OSError:
                    break
                return not (stat.S_ISCHR(st.st_mode) and st.st_rdev == 0)
        return os.path.lexists(path)

    def listdir(self, path: Path) -> list[str]:
        """The names in directory ``path`` in the merged view the sandbox saw."""
        for tree in self.trees:
            if path == tree.lower or tree.lower in path.parents:
                upper = tree.upper / path.relative_to(tree.lower)
                try:
                    if not stat.S_ISDIR(os.lstat(upper).st_mode):
                        return []  # deleted, or replaced by a file
                except OSError:
                    return sorted(_names(path))  # untouched by the session
                names: set[str] = set()
                gone: set[str] = set()
                for entry in _scandir(upper):
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    whiteout = stat.S_ISCHR(st.st_mode) and st.st_rdev == 0
                    (gone if whiteout else names).add(entry.name)
                if not _is_opaque(upper):
                    names |= set(_names(path)) - gone
                return sorted(names)
        return sorted(_names(path))

    def guard(self, home: Path | None = None) -> Guard:
        return Guard(home, exists=self.exists, listdir=self.listdir)

    def flagged(self, home: Path | None = None, guard: Guard | None = None) -> list[Flagged]:
        """What matters first: places that run code later or hold settings, new
        executables and mode changes, symlinks (and where they point), deletions, what is
        not a regular file, and anything outside the task's working directory."""
        if home is None and guard is None and self._flags is not None:
            return self._flags
        remember = home is None and guard is None
        guard = guard or self.guard(home)
        out: list[Flagged] = []
        for c in self.changes:
            notes: list[str] = []
            held = False
            for where in filter(None, (c.path, c.renamed_from)):
                made = where == c.path and c.kind != "deleted"
                why = guard.reason(
                    where,
                    file_type=c.file_type if made else None,
                    mode=c.mode_after if made else None,
                    deleting=c.kind == "deleted" or where != c.path,
                )
                if why is not None:
                    notes.append(why.why + ("" if why.includable else ": never applied"))
                    held = True
            if c.file_type == "special":
                notes.append("not a regular file, directory or symlink: never applied")
                held = True
            if c.file_type == "symlink" and c.kind != "deleted" and c.link_target is not None:
                link = guard.link_reason(c.path, c.link_target)
                notes.append(f"symlink -> {c.link_target}")
                if link is not None:
                    notes.append(link.why)
                    held = True
            if c.kind == "deleted":
                notes.append("deleted")
            mode = c.mode_after or 0
            if c.kind == "mode":
                notes.append(f"mode {_mode(c.mode_before)} -> {_mode(c.mode_after)}")
            elif c.kind != "deleted" and c.file_type == "file" and mode & 0o111:
                before = c.mode_before or 0
                if c.kind in ("created", "renamed") or not before & 0o111:
                    notes.append(f"executable ({_mode(mode)})")
            if c.kind != "deleted" and mode & 0o7000:
                notes.append(f"set-id/sticky bits {_mode(mode & 0o7000)}: dropped on apply")
            if self.workdir is not None and not (
                c.path == self.workdir or self.workdir in c.path.parents
            ):
                notes.append("outside the working directory")
            if notes:
                out.append(Flagged(c, tuple(notes), held))
        if remember:
            self._flags = out
        return out

    def render(
        self,
        width: int = 80,
        limit: int = 20,
        home: Path | None = None,
        flagged: list[Flagged] | None = None,
    ) -> list[str]:
        """The summary: every flagged change first, one per line with why (never folded
        or cut), then the other changes biggest first in ``width`` columns, large created
        trees folded into their directory."""
        flagged = self.flagged(home) if flagged is None else flagged
        home = protected.real_home(home)
        lines = [f"{self.summary()}:"]
        held = [f for f in flagged if f.held]
        if held:
            lines.append(
                f"{len(held)} held back: applied only when you name them "
                "(shellagent apply SESSION --include PATH), never with -y"
            )
        order = sorted(flagged, key=lambda f: (not f.held, f.change.kind != "deleted"))
        for f in order:
            c = f.change
            what = _size(c.weight) if c.file_type == "file" else c.file_type
            mark = "!" if f.held or c.kind == "deleted" else "*"
            lines.append(f"{mark} {_LABEL[c.kind]:<4} {_short(c.path, home)}{_extra(c)}  {what}")
            lines.append(f"         {'; '.join(f.notes)}")
        shown = {id(f.change) for f in flagged}
        rows = _fold([c for c in self.changes if id(c) not in shown])
        rows.sort(key=lambda r: -r[2])
        for kind, path, size, extra in rows[:limit]:
            text = f"  {_LABEL[kind]:<4} {_short(path, home)}{extra}"
            size_text = _size(size)
            room = width - len(size_text) - 1
            if len(text) > room:
                text = text[: room - 1] + "…"
            lines.append(f"{text:<{room}} {size_text}")
        if len(rows) > limit:
            lines.append(f"  … and {len(rows) - limit} more (d shows everything)")
        return lines

    def diff(self, home: Path | None = None) -> str:
        """Unified diffs of the changed small text files, flagged changes first; other
        changes in one line each."""
        first = {id(f.change) for f in self.flagged(home)}
        ordered = sorted(self.changes, key=lambda c: id(c) not in first)
        out: list[str] = []
        for c in ordered:
            before = _text(c.renamed_from or c.path) if c.kind in ("modified", "renamed") else ""
            after = _text(c.source) if c.source is not None and c.kind != "deleted" else ""
            if c.kind == "deleted":
                before = _text(c.path) if c.file_type == "file" else None
                after = ""
            if c.kind == "mode":
                out.append(f"mode {c.path}: {_mode(c.mode_before)} -> {_mode(c.mode_after)}")
                continue
            if before is None or after is None or c.file_type != "file":
                extra = f" -> {c.link_target}" if c.link_target is not None else ""
                out.append(f"{c.kind} {c.path}{extra} ({c.file_type}, {_size(c.weight)})")
                continue
            label_a = str(c.renamed_from or c.path) if c.kind != "created" else "/dev/null"
            label_b = str(c.path) if c.kind != "deleted" else "/dev/null"
            out += difflib.unified_diff(
                before.splitlines(keepends=True),
                after.splitlines(keepends=True),
                fromfile=label_a,
                tofile=label_b,
            )
            if out and not out[-1].endswith("\n"):
                out[-1] += "\n"
        return "".join(line if line.endswith("\n") else line + "\n" for line in out)


def _names(path: Path) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _scandir(path: Path) -> list[os.DirEntry[str]]:
    try:
        return list(os.scandir(path))
    except OSError:
        return []


_LABEL = {"created": "new", "modified": "edit", "deleted": "DEL", "renamed": "mv", "mode": "mode"}


def _extra(c: Change) -> str:
    if c.kind == "renamed" and c.renamed_from is not None:
        return f" (from {_short(c.renamed_from)})"
    if c.file_type == "file" and c.kind != "deleted" and c.mode_after is not None:
        return f" ({_mode(c.mode_after)})"
    return ""


def compute(workspace: Workspace) -> ChangeSet:
    changes: list[Change] = []
    stored = [0]
    for tree in workspace.trees:
        changes += _walk(tree, Path("."), stored)
    return ChangeSet(
        _infer_renames(changes),
        workdir=workspace.workdir,
        trees=tuple(workspace.trees),
        stored_bytes=stored[0],
    )


def _walk(tree: Tree, rel: Path, stored: list[int]) -> list[Change]:
    found: list[Change] = []
    upper_dir = tree.upper / rel
    try:
        entries = sorted(os.scandir(upper_dir), key=lambda e: e.name)
    except OSError:
        return found
    for entry in entries:
        upper = Path(entry.path)
        real = tree.lower / rel / entry.name
        st = entry.stat(follow_symlinks=False)
        stored[0] += st.st_blocks * 512
        before = _lstat(real)
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
            if before is not None:
                found += _deleted(real, before)
            continue
        if stat.S_ISDIR(st.st_mode):
            if before is None or not stat.S_ISDIR(before.st_mode):
                if before is not None:
                    found += _deleted(real, before)
                found.append(Change(real, "created", "dir", mode_after=_perm(st)))
                found += _created_below(upper, real, stored)
                continue
            if _is_opaque(upper):
                kept = {e.name for e in os.scandir(upper)}
                for gone in sorted(os.scandir(real), key=lambda e: e.name):
                    if gone.name not in kept:
                        found += _deleted(Path(gone.path), gone.stat(follow_symlinks=False))
            if _perm(st) != _perm(before):
                found.append(
                    Change(real, "mode", "dir", mode_before=_perm(before), mode_after=_perm(st))
                )
            found += _walk(tree, rel / entry.name, stored)
            continue
        kind_of = _type_of(st)
        target = os.readlink(upper) if kind_of == "symlink" else None
        if before is None or stat.S_ISDIR(before.st_mode):
            if before is not None:  # a directory replaced by a file or link
                found += _deleted(real, before)
            found.append(
                Change(
                    real,
                    "created",
                    kind_of,
                    size_after=st.st_size,
                    mode_after=_perm(st),
                    source=upper,
                    link_target=target,
                )
            )
            continue
        same_type = stat.S_IFMT(before.st_mode) == stat.S_IFMT(st.st_mode)
        if kind_of == "symlink":
            same_content = same_type and os.readlink(real) == target
        else:  # never opens what is not a regular file (a fifo would block)
            same_content = same_type and kind_of == "file" and _same_bytes(real, upper)
        if same_content and _perm(st) == _perm(before):
            continue  # copied up without a change (touch, open for writing)
        found.append(
            Change(
                real,
                "mode" if same_content else "modified",
                kind_of,
                size_before=before.st_size,
                size_after=st.st_size,
                mode_before=_perm(before),
                mode_after=_perm(st),
                source=upper,
                link_target=target,
            )
        )
    return found


def _created_below(upper_dir: Path, real_dir: Path, stored: list[int]) -> list[Change]:
    found: list[Change] = []
    for dirpath, dirnames, filenames in os.walk(upper_dir):
        here = Path(dirpath)
        target = real_dir / here.relative_to(upper_dir)
        for name in sorted(dirnames):
            st = os.lstat(here / name)
            stored[0] += st.st_blocks * 512
            if stat.S_ISLNK(st.st_mode):
                filenames.append(name)
                continue
            found.append(Change(target / name, "created", "dir", mode_after=_perm(st)))
        for name in sorted(filenames):
            st = os.lstat(here / name)
            if name not in dirnames:
                stored[0] += st.st_blocks * 512
            if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
                continue  # a whiteout of nothing
            kind_of = _type_of(st)
            found.append(
                Change(
                    target / name,
                    "created",
                    kind_of,
                    size_after=st.st_size,
                    mode_after=_perm(st),
                    source=here / name,
                    link_target=os.readlink(here / name) if kind_of == "symlink" else None,
                )
            )
        dirnames[:] = [d for d in dirnames if not (here / d).is_symlink()]
    return found


def _deleted(real: Path, st: os.stat_result) -> list[Change]:
    if not stat.S_ISDIR(st.st_mode):
        kind_of = _type_of(st)
        return [Change(real, "deleted", kind_of, size_before=st.st_size, mode_before=_perm(st))]
    found: list[Change] = []
    for dirpath, dirnames, filenames in os.walk(real, topdown=False):
        here = Path(dirpath)
        for name in sorted(filenames) + [d for d in dirnames if (here / d).is_symlink()]:
            s = os.lstat(here / name)
            inner = _type_of(s)
            found.append(
                Change(here / name, "deleted", inner, size_before=s.st_size, mode_before=_perm(s))
            )
        if here != real:
            found.append(Change(here, "deleted", "dir", mode_before=_perm(os.lstat(here))))
    found.append(Change(real, "deleted", "dir", mode_before=_perm(st)))
    return found


def _infer_renames(changes: list[Change]) -> list[Change]:
    """A deleted file and a created one with the same size and bytes: a rename."""
    deleted: dict[int, list[Change]] = {}
    for c in changes:
        if c.kind == "deleted" and c.file_type == "file":
            deleted.setdefault(c.size_before, []).append(c)
    if not deleted:
        return changes
    result: list[Change] = []
    used: set[Path] = set()
    for c in changes:
        if c.kind == "created" and c.file_type == "file" and c.source is not None:
            match = next(
                (
                    d
                    for d in deleted.get(c.size_after, [])
                    if d.path not in used and _same_bytes(d.path, c.source)
                ),
                None,
            )
            if match is not None:
                used.add(match.path)
                result.append(
                    Change(
                        c.path,
                        "renamed",
                        "file",
                        size_before=match.size_before,
                        size_after=c.size_after,
                        mode_before=match.mode_before,
                        mode_after=c.mode_after,
                        source=c.source,
                        renamed_from=match.path,
                    )
                )
                continue
        result.append(c)
    return [c for c in result if not (c.kind == "deleted" and c.path in used)]


def _fold(changes: list[Change]) -> list[tuple[str, Path, int, str]]:
    """Display rows: a created or deleted directory stands for everything below it."""
    rows: list[tuple[str, Path, int, str]] = []
    folded: dict[Path, list[int]] = {}
    dirs = {
        c.path: c.kind for c in changes if c.file_type == "dir" and c.kind in ("created", "deleted")
    }
    for c in changes:
        top = next((p for p in c.path.parents if dirs.get(p) == c.kind), None)
        if top is not None:
            counts = folded.setdefault(top, [0, 0])
            counts[0] += c.file_type != "dir"
            counts[1] += c.weight
            continue
        if c.path in dirs:
            folded.setdefault(c.path, [0, 0])
            continue
        extra = ""
        if c.kind == "renamed" and c.renamed_from is not None:
            extra = f" (from {_short(c.renamed_from)})"
        elif c.kind == "mode":
            extra = f" ({_mode(c.mode_before)} -> {_mode(c.mode_after)})"
        rows.append((c.kind, c.path, c.weight, extra))
    for path, (files, size) in folded.items():
        rows.append((dirs[path], path, size, f"/ ({files} file{'s' if files != 1 else ''})"))
    return rows


def _type_of(st: os.stat_result) -> FileType:
    """By ``S_IS*``: anything but a regular file, a directory or a symlink is special."""
    if stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISLNK(st.st_mode):
        return "symlink"
    return "special"


def open_regular(path: Path | str, dir_fd: int | None = None) -> int:
    """A read-only fd of ``path`` if it is a regular file: never follows a symlink, never
    blocks on a fifo or a device (``O_NONBLOCK``, then ``fstat``). OSError otherwise."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(21, "not a regular file", str(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _perm(st: os.stat_result) -> int:
    return stat.S_IMODE(st.st_mode)


def _mode(mode: int | None) -> str:
    return "-" if mode is None else f"{mode:04o}"


def _is_opaque(directory: Path) -> bool:
    for name in OPAQUE:
        try:
            if os.getxattr(directory, name, follow_symlinks=False) == b"y":
                return True
        except OSError:
            continue
    return False


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        fa_fd = open_regular(a)
        try:
            fb_fd = open_regular(b)
        except OSError:
            os.close(fa_fd)
            raise
        if os.fstat(fa_fd).st_size != os.fstat(fb_fd).st_size:
            os.close(fa_fd)
            os.close(fb_fd)
            return False
        with open(fa_fd, "rb") as fa, open(fb_fd, "rb") as fb:
            while True:
                x, y = fa.read(HASH_CHUNK), fb.read(HASH_CHUNK)
                if x != y:
                    return False
                if not x:
                    return True
    except OSError:
        return False


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(open_regular(path), "rb") as f:
        while chunk := f.read(HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _text(path: Path | None) -> str | None:
    """The file's text if it is small UTF-8 without NUL bytes, else None."""
    if path is None:
        return ""
    try:
        with open(open_regular(path), "rb") as f:
            data = f.read(DIFF_MAX_BYTES + 1)
    except OSError:
        return None
    if len(data) > DIFF_MAX_BYTES:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode()
    except UnicodeDecodeError:
        return None


def _short(path: Path, home: Path | None = None) -> str:
    home = home or Path.home()
    text = str(path)
    return "~" + text[len(str(home)) :] if path.is_relative_to(home) else text


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"
