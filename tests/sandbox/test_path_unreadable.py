"""An unreadable directory on PATH never ends a session (review 2, L6): with root's PATH
kept by ``runuser`` or ``sudo -u``, an unprivileged user cannot even look at
``/root/.cargo/bin``; the sandbox skips what it cannot see."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


@pytest.mark.skipif(os.getuid() != 0, reason="switches to the unprivileged user nobody")
def test_an_unreadable_directory_on_path_never_stops_a_session(
    as_nobody: Callable[..., list[dict[str, Any]]], tmp_path: Path
) -> None:
    locked = tmp_path / "rootonly"
    (locked / ".cargo" / "bin").mkdir(parents=True)
    locked.chmod(0o700)  # root's, like /root: nobody cannot stat what is inside
    path = f"{locked / '.cargo' / 'bin'}:/usr/bin:/bin"
    results = as_nobody(["echo ok"], caller_env={"PATH": path})
    assert results[0]["output"] == "ok\n"
