"""Every test gets its own shellagent directories: nothing touches the real ones."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def private_shellagent_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name in ("CONFIG", "DATA", "STATE", "CACHE", "RUNTIME"):
        monkeypatch.setenv(f"SHELLAGENT_{name}_DIR", str(tmp_path / f"sa-{name.lower()}"))
    yield tmp_path


REAL_HOME = Path.home()


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A scratch directory that is *not* under /tmp.

    The sandbox gives every command a private /tmp, so a fake home under pytest's tmp_path
    would simply be invisible inside and every probe of it would pass for the wrong reason.
    """
    base = Path(os.environ.get("SHELLAGENT_TEST_ROOT", REAL_HOME / ".cache/shellagent-tests"))
    base.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)
