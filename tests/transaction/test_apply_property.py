"""Property: whatever an upper layer holds (files with any mode, directories, symlinks in and
out, hard links, fifos, whiteouts), the apply lands nothing outside the paths the change
set shows, nothing with a set-id or sticky bit, and nothing that is not a regular file, a
directory or a symlink; a refused apply changes nothing at all."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shellagent.transaction import Workspace, compute
from shellagent.transaction.apply import ApplyRefused, ApplyStopped, apply, held_back
from tests.conftest import REAL_HOME

NAMES = ("a", "d/b", "d/e/c", "n/x", ".bashrc", "r/.git/hooks/h", "out/z", "bin/t", "lnk/q")
KINDS = ("file", "dir", "symlink", "hardlink", "fifo", "whiteout")
SCRATCH = REAL_HOME / ".cache" / "shellagent-tests"
TARGETS = ("a", "../outside/secret", "/etc/passwd", "~/.bashrc", "d", "../../outside")

op = st.tuples(
    st.sampled_from(KINDS),
    st.sampled_from(NAMES),
    st.integers(min_value=0, max_value=0o7777),
    st.sampled_from(TARGETS),
    st.binary(max_size=64),
)


def snapshot(root: Path) -> dict[str, tuple[str, int, bytes]]:
    found: dict[str, tuple[str, int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            s = os.lstat(p)
            mode = stat.S_IMODE(s.st_mode)
            if stat.S_ISLNK(s.st_mode):
                found[str(p)] = ("link", 0, os.readlink(p).encode())
            elif stat.S_ISDIR(s.st_mode):
                found[str(p)] = ("dir", mode, b"")
            elif stat.S_ISREG(s.st_mode):
                found[str(p)] = ("file", mode, p.read_bytes())
            else:
                found[str(p)] = ("special", mode, b"")
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink()]
    return found


def build(upper: Path, home: Path, ops: list[tuple[str, str, int, str, bytes]]) -> None:
    made: list[Path] = []
    for kind, name, mode, target, data in ops:
        path = upper / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(path):
                continue
            if kind == "file":
                path.write_bytes(data)
                os.chmod(path, mode)
                made.append(path)
            elif kind == "dir":
                path.mkdir(mode=0o755)
                os.chmod(path, mode | 0o700)
            elif kind == "symlink":
                path.symlink_to(target.replace("~", str(home)))
            elif kind == "hardlink" and made:
                os.link(made[-1], path)
            elif kind == "fifo":
                os.mkfifo(path)
            elif kind == "whiteout" and os.getuid() == 0:
                os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(0, 0))
        except OSError:
            continue  # a parent is a file or a link: overlayfs could not hold it either


@pytest.mark.slow
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(op, min_size=1, max_size=8), name_everything=st.booleans())
def test_nothing_lands_outside_what_is_shown_nor_with_a_set_id_bit(
    ops: list[tuple[str, str, int, str, bytes]],
    name_everything: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    SCRATCH.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(dir=SCRATCH))
    try:
        home = base / "home"
        outside = base / "outside"
        for rel, text in {"a": "A", "d/b": "B", "n/x": "X", ".bashrc": "rc", "bin/t": "t"}.items():
            (home / rel).parent.mkdir(parents=True, exist_ok=True)
            (home / rel).write_text(text)
        (outside / "secret").parent.mkdir(parents=True)
        (outside / "secret").write_text("S")
        (home / "lnk").symlink_to(outside)
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("SHELLAGENT_WORKSPACES_DIR", str(base / "ws"))
        ws = Workspace.create("prop", [home], workdir=home)
        build(ws.trees[0].upper, home, ops)
        before = snapshot(base)
        changes = compute(ws)
        shown = {str(p) for c in changes for p in (c.path, c.renamed_from) if p is not None}
        include = [r.path for r in held_back(changes) if r.includable] if name_everything else []
        refused = False
        try:
            apply(ws, changes, include=include)
        except ApplyRefused:
            refused = True
        except ApplyStopped:
            pass  # a part landed, exactly reported: the properties below still hold
        after = snapshot(base)
        if refused:
            assert after == before
        changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
        real = {p for p in changed if not p.startswith(str(base / "ws"))}
        assert not [p for p in real if p.startswith(str(outside))], real
        for p in real:
            assert p in shown or any(s.startswith(p + "/") for s in shown), (p, shown)
        for p, (kind, mode, _) in after.items():
            if p.startswith(str(home)) and before.get(p) != after.get(p):
                assert kind != "special", p
                assert not mode & 0o7000, (p, oct(mode))
    finally:
        shutil.rmtree(base, ignore_errors=True)
