"""A home directory with everyday files, and sessions that see it through overlays."""

from __future__ import annotations

import dataclasses
import os
import stat
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shellagent.sandbox import Sandbox, get_profile
from shellagent.transaction import Workspace


@pytest.fixture
def home(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = outside_tmp / "home"
    files = {
        "Documents/notes/a.txt": "alpha\n",
        "Documents/notes/b.txt": "beta\n",
        "Documents/notes/c.txt": "gamma\n",
        "Documents/report.md": "# Report\nline\n",
        "Downloads/big.bin": "x" * 70_000,
        ".bashrc": "# user bashrc\n",
        ".ssh/id_rsa": "PRIVATE-KEY\n",
    }
    for rel, text in files.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    (home / "Documents" / "link").symlink_to("report.md")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SHELLAGENT_WORKSPACES_DIR", str(outside_tmp / "workspaces"))
    return home


@pytest.fixture
def open_session(home: Path) -> Iterator[Callable[[], tuple[Workspace, Sandbox]]]:
    """A fresh overlay session over the home directory, cwd ~/Documents."""
    opened: list[Sandbox] = []

    def make() -> tuple[Workspace, Sandbox]:
        ws = Workspace.create(f"t-{uuid.uuid4().hex[:8]}", [home])
        profile = dataclasses.replace(
            get_profile("default", cwd=home / "Documents"), writable=(), overlays=ws.overlays()
        )
        session = Sandbox(profile, timeout=10)
        opened.append(session)
        return ws, session

    yield make
    for s in opened:
        s.close()


def tree(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry below ``root``: (type, mode, content or link target)."""
    found: dict[str, tuple[str, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = os.lstat(p)
            rel = str(p.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", 0, os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                found[rel] = ("dir", stat.S_IMODE(st.st_mode), "")
            else:
                found[rel] = ("file", stat.S_IMODE(st.st_mode), p.read_bytes().hex())
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink()]
    return found
