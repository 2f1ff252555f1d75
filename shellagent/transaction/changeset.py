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
from typing import Any, Literal

from shellagent.transaction.workspace import Tree, Workspace

Kind = Literal["created", "modified", "deleted", "renamed", "mode"]
FileType = Literal["file", "dir", "symlink"]
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

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("path", "source", "renamed_from"):
            data[key] = str(data[key]) if data[key] is not None else None
        return data


@dataclass
class ChangeSet:
    changes: list[Change] = field(default_factory=list)

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

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary(), "changes": [c.to_dict() for c in self.changes]}

    def render(self, width: int = 80, limit: int = 20, home: Path | None = None) -> list[str]:
        """One line per change (biggest first, deletions marked ``!``), in ``width``
        columns; large trees of created or deleted files are folded into their directory."""
        home = home or Path.home()
        rows = _fold(self.changes)
        rows.sort(key=lambda r: (r[0] != "deleted", -r[2]))
        lines = [f"{self.summary()}:"]
        for kind, path, size, extra in rows[:limit]:
            mark = "!" if kind == "deleted" else " "
            label = {
                "created": "new",
                "modified": "edit",
                "deleted": "DEL",
                "renamed": "mv",
                "mode": "mode",
            }[kind]
            text = f"{mark} {label:<4} {_short(path, home)}{extra}"
            size_text = _size(size)
            room = width - len(size_text) - 1
            if len(text) > room:
                text = text[: room - 1] + "…"
            lines.append(f"{text:<{room}} {size_text}")
        if len(rows) > limit:
            lines.append(f"  … and {len(rows) - limit} more (d shows everything)")
        return lines

    def diff(self, limit_bytes: int = DIFF_MAX_BYTES) -> str:
        """Unified diffs of the changed small text files; other changes in one line each."""
        out: list[str] = []
        for c in self.changes:
            before = _text(c.renamed_from or c.path) if c.kind in ("modified", "renamed") else ""
            after = _text(c.source) if c.source is not None and c.kind != "deleted" else ""
            if c.kind == "deleted":
                before = _text(c.path) if c.file_type == "file" else None
                after = ""
            if before is None or after is None or c.file_type != "file":
                out.append(f"{c.kind} {c.path} ({c.file_type}, {_size(c.weight)})")
                continue
            if c.kind == "mode":
                out.append(f"mode {c.path}: {_mode(c.mode_before)} -> {_mode(c.mode_after)}")
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


def compute(workspace: Workspace) -> ChangeSet:
    changes: list[Change] = []
    for tree in workspace.trees:
        changes += _walk(tree, Path("."))
    return ChangeSet(_infer_renames(changes))


def _walk(tree: Tree, rel: Path) -> list[Change]:
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
                found += _created_below(upper, real)
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
            found += _walk(tree, rel / entry.name)
            continue
        kind_of: FileType = "symlink" if stat.S_ISLNK(st.st_mode) else "file"
        target = os.readlink(upper) if kind_of == "symlink" else None
        if before is None:
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
        if stat.S_ISDIR(before.st_mode):
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
        same_content = same_type and (
            os.readlink(real) == target if kind_of == "symlink" else _same_bytes(real, upper)
        )
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


def _created_below(upper_dir: Path, real_dir: Path) -> list[Change]:
    found: list[Change] = []
    for dirpath, dirnames, filenames in os.walk(upper_dir):
        here = Path(dirpath)
        target = real_dir / here.relative_to(upper_dir)
        for name in sorted(dirnames):
            st = os.lstat(here / name)
            if stat.S_ISLNK(st.st_mode):
                filenames.append(name)
                continue
            found.append(Change(target / name, "created", "dir", mode_after=_perm(st)))
        for name in sorted(filenames):
            st = os.lstat(here / name)
            if stat.S_ISCHR(st.st_mode):
                continue  # a whiteout of nothing
            link = stat.S_ISLNK(st.st_mode)
            found.append(
                Change(
                    target / name,
                    "created",
                    "symlink" if link else "file",
                    size_after=st.st_size,
                    mode_after=_perm(st),
                    source=here / name,
                    link_target=os.readlink(here / name) if link else None,
                )
            )
        dirnames[:] = [d for d in dirnames if not (here / d).is_symlink()]
    return found


def _deleted(real: Path, st: os.stat_result) -> list[Change]:
    if not stat.S_ISDIR(st.st_mode):
        kind_of: FileType = "symlink" if stat.S_ISLNK(st.st_mode) else "file"
        return [Change(real, "deleted", kind_of, size_before=st.st_size, mode_before=_perm(st))]
    found: list[Change] = []
    for dirpath, dirnames, filenames in os.walk(real, topdown=False):
        here = Path(dirpath)
        for name in sorted(filenames) + [d for d in dirnames if (here / d).is_symlink()]:
            s = os.lstat(here / name)
            inner: FileType = "symlink" if stat.S_ISLNK(s.st_mode) else "file"
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
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
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
    with open(path, "rb") as f:
        while chunk := f.read(HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _text(path: Path | None) -> str | None:
    """The file's text if it is small UTF-8 without NUL bytes, else None."""
    if path is None:
        return ""
    try:
        if os.path.getsize(path) > DIFF_MAX_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
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
