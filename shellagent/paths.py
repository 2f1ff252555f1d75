"""Where shellagent keeps things, from platformdirs, each overridable for tests.

config: policy.toml, config.toml      data: transcripts, models
state:  jobs                          runtime: the daemon socket
"""

from __future__ import annotations

import os
from pathlib import Path

APP = "shellagent"


def _dir(kind: str) -> Path:
    """``SHELLAGENT_<KIND>_DIR`` if set, else platformdirs' user dir of that kind."""
    override = os.environ.get(f"SHELLAGENT_{kind.upper()}_DIR")
    if override:
        return Path(override)
    import platformdirs  # on first use only: ``ask`` needs nothing but runtime_dir()

    return Path(getattr(platformdirs, f"user_{kind}_dir")(APP))


def config_dir() -> Path:
    return _dir("config")


def data_dir() -> Path:
    return _dir("data")


def state_dir() -> Path:
    return _dir("state")


def cache_dir() -> Path:
    return _dir("cache")


def runtime_dir() -> Path:
    """$XDG_RUNTIME_DIR/shellagent, else /run/user/UID/shellagent, else a private /tmp dir.

    Computed here rather than by platformdirs, which warns when XDG_RUNTIME_DIR is unset
    (cron, CI, ssh without a login session); stdlib only, so ``ask`` can use it.
    """
    override = os.environ.get("SHELLAGENT_RUNTIME_DIR")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isdir(xdg):
        return Path(xdg) / APP
    run_user = Path(f"/run/user/{os.getuid()}")
    if run_user.is_dir() and os.access(run_user, os.W_OK):
        return run_user / APP
    return Path(f"/tmp/{APP}-{os.getuid()}")


def rootfs_dir() -> Path:
    """Frozen copies of the host's /etc and /var for throwaway roots (see sandbox/snapshot)."""
    override = os.environ.get("SHELLAGENT_ROOTFS_DIR")
    return Path(override) if override else cache_dir() / "rootfs"


def transcripts_dir() -> Path:
    return data_dir() / "transcripts"


def models_dir() -> Path:
    return data_dir() / "models"


def own_dirs() -> list[Path]:
    """shellagent's own directories: never visible inside a sandbox."""
    return [config_dir(), data_dir(), state_dir(), cache_dir(), runtime_dir()]


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) with mode 0700 and tighten it if it exists."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)
    return path
