"""Shared by the benchmarks that start ``ask`` or the daemon: a private set of directories."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def private_env() -> tuple[Path, dict[str, str]]:
    """A fresh base directory and an environment whose shellagent config, data, state, cache
    and runtime directories all live under it, so a run never touches the user's own."""
    base = Path(tempfile.mkdtemp(prefix="sa-bench-"))
    env = dict(os.environ)
    for name in ("CONFIG", "DATA", "STATE", "CACHE", "RUNTIME"):
        env[f"SHELLAGENT_{name}_DIR"] = str(base / name.lower())
    return base, env
