"""The user namespace of a throwaway root run by root: many ids, none of them host root.

bwrap's own ``--unshare-user`` maps a single uid and gid. Task-set setups need more: they
``chown nobody`` a file, or write below host directories owned by ``postgres`` or the
``mail`` group, and every unmapped id shows up as 65534 that root inside cannot touch.
Only a privileged user may map a range, so this is used when shellagent runs as root (CI,
evaluation machines); an ordinary user keeps bwrap's single-id mapping.

Two mappings:

``shifted`` (the default where the kernel has idmapped mounts): ids 0-65535 inside are
    host ids ``HOST_BASE`` to ``HOST_BASE + 65535``, ids no host user has. Root inside is
    an unprivileged stranger to the host kernel: the sysctl check, the RLIMIT_NPROC
    exemption of host root and every file permission see uid ``HOST_BASE``. The lower
    layers are shown through id-shifted read-only views (``idmap.py``), so host root's
    files are still root's inside and task setups can edit them in place.
``identity`` (the fallback, or ``SHELLAGENT_IDMAP=off``): every id maps to itself, so
    root inside is host root, held in by read-only kernel tunables, tmpfs-only writable
    mounts and dropped capabilities.

The namespace is created by a ``unshare --user`` process, its maps are written from here,
and bwrap is started inside it by ``nsenter`` as uid 0 of that namespace, so no namespace
fd is ever handed to a command in the sandbox. The holder is needed only until nsenter has
joined (milliseconds); it sleeps ``HOLDER_S`` at most, so a daemon that is killed leaves
nothing behind, and is ended with the session otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass

from shellagent.errors import SandboxUnavailable

# ids 0-65535 inside the sandbox are these host ids; below 2^31 (some tools treat ids as
# signed), above every range useradd, systemd-nspawn or /etc/subuid hand out by default.
HOST_BASE = 0x7FF00000
SHIFTED_COUNT = 65536
IDENTITY_MAP = "0 0 4294967295\n"
SHIFTED_MAP = f"0 {HOST_BASE} {SHIFTED_COUNT}\n"
TOOLS_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
HOLDER_S = 60  # longer than a sandbox may take to start (shell.STARTUP_TIMEOUT_S)


def host_id(inside: int) -> int:
    """The host uid (or gid) of ``inside`` under the shifted mapping."""
    return HOST_BASE + inside


@dataclass
class Namespace:
    """A prepared user namespace, alive while its holder process sleeps."""

    holder: subprocess.Popen[bytes]
    shifted: bool

    @property
    def path(self) -> str:
        return f"/proc/{self.holder.pid}/ns/user"

    def launcher(self) -> list[str]:
        """The argv prefix that starts the next program as uid 0 inside the namespace."""
        nsenter = shutil.which("nsenter", path=TOOLS_PATH) or "nsenter"
        return [nsenter, f"--user={self.path}", "--setuid=0", "--setgid=0", "--"]

    def open_fd(self) -> int:
        return os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)

    def release(self) -> None:
        if self.holder.poll() is None:
            self.holder.kill()
        self.holder.wait()


def prepare(*, shifted: bool) -> Namespace | None:
    """A fresh user namespace with the shifted or the identity map; None when not root.

    Raises ``SandboxUnavailable`` (with the fix) when it cannot be made."""
    if os.getuid() != 0:
        return None
    missing = [
        tool for tool in ("unshare", "nsenter") if shutil.which(tool, path=TOOLS_PATH) is None
    ]
    if missing:
        raise SandboxUnavailable(
            f"{' and '.join(missing)} not found: needed for a throwaway root run by root",
            hint="install util-linux (sudo apt-get install util-linux)",
        )
    holder = subprocess.Popen(
        ["unshare", "--user", "--", "sleep", str(HOLDER_S)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={"PATH": TOOLS_PATH},
    )
    made = Namespace(holder, shifted)
    try:
        mine = os.stat("/proc/self/ns/user").st_ino
        deadline = time.monotonic() + 5
        while os.stat(made.path).st_ino == mine:
            if time.monotonic() > deadline or holder.poll() is not None:
                raise OSError("unshare --user did not make a user namespace")
            time.sleep(0.001)
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{holder.pid}/{name}", "w") as f:
                f.write(SHIFTED_MAP if shifted else IDENTITY_MAP)
    except OSError as exc:
        made.release()
        raise SandboxUnavailable(
            f"could not prepare the user namespace of a throwaway root: {exc}",
            hint="run `shellagent doctor`; user namespaces may be disabled",
        ) from exc
    return made
