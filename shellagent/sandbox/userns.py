"""A user namespace that maps every id, for the ephemeral profile when the host user is root.

bwrap's own ``--unshare-user`` maps a single uid and gid. Task-set setups need more: they
``chown nobody`` a file, or write below host directories owned by ``postgres`` or the
``mail`` group, and every unmapped id shows up as 65534 that root inside cannot touch.
Only a privileged user may map the whole range, so this is used when shellagent runs as
root (CI, evaluation machines); an ordinary user keeps the single-id mapping.

The namespace is created by a short-lived ``unshare --user`` process, its maps written from
here, and its fd handed to ``bwrap --userns``; the process is then ended (the fd keeps the
namespace alive). Capabilities granted inside it apply only to that namespace, and every
writable mount of the ephemeral profile is a tmpfs or a tmp overlay.
"""

from __future__ import annotations

import os
import subprocess
import time

FULL_RANGE = "0 0 4294967295\n"


def full_map_userns() -> int | None:
    """An fd of a fresh user namespace mapping all ids to themselves, or None if not root."""
    if os.getuid() != 0:
        return None
    holder = subprocess.Popen(["unshare", "--user", "--", "sleep", "60"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        mine = os.stat("/proc/self/ns/user").st_ino
        deadline = time.monotonic() + 5
        while os.stat(f"/proc/{holder.pid}/ns/user").st_ino == mine:
            if time.monotonic() > deadline or holder.poll() is not None:
                return None
            time.sleep(0.001)
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{holder.pid}/{name}", "w") as f:
                f.write(FULL_RANGE)
        return os.open(f"/proc/{holder.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    finally:
        holder.kill()
        holder.wait()
