"""The host's Unix sockets with a path, hidden from the ``default`` profile's sandbox.

The sandbox's ``/tmp``, ``/var/tmp``, ``/run`` and ``/dev`` are its own, which takes away
most of the host's services (D-Bus, the daemon's own socket, X11, Docker, databases under
``/run``). But a socket file elsewhere (``/srv/app.sock``, ``/var/lib/mysql/mysql.sock``,
``/var/snap/lxd/common/lxd/unix.socket``, one in a project directory) stays reachable
through the read-only bind of ``/``: a read-only mount does not stop ``connect``, and
Landlock (ABI 7) has no right for it. So every socket bound with a path in the host's
network namespace when the sandbox starts (``/proc/net/unix``) gets ``/dev/null`` bound
over it. Sockets inside an overlaid tree need nothing: a socket seen through overlayfs is
another inode, and a connect to it is refused.

What this leaves: a socket bound on the host after the sandbox started, one bound with a
relative path, and one bound in another network namespace (a container's) in a directory
the host can see. A socket that goes away between the plan and bwrap's start is handled by
the sandbox (``shell.py``): bwrap made an empty file there, which is removed at once, or it
failed on it, and the sandbox starts again without it. Commands the policy allowed as
read-only, and every command of a recipe trial, cannot open a Unix socket at all
(``seccomp.py``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PROC_NET_UNIX = "/proc/net/unix"
# Directories every default sandbox replaces with its own: their sockets are out of reach.
REPLACED = (Path("/tmp"), Path("/var/tmp"), Path("/run"), Path("/dev"), Path("/proc"))


def bound_paths(table: str = PROC_NET_UNIX) -> list[str]:
    """The absolute paths Unix sockets of this network namespace are bound to (abstract
    ones start with ``@``; unnamed ones have none; relative ones cannot be found)."""
    try:
        with open(table, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()[1:]
    except OSError:
        return []
    found = []
    for line in lines:
        # Num RefCount Protocol Flags Type St Inode Path (a path may hold spaces)
        fields = line.split(None, 7)
        if len(fields) == 8 and fields[7].startswith("/"):
            found.append(fields[7])
    return found


def host_sockets(overlaid: list[Path], shown: list[Path], table: str = PROC_NET_UNIX) -> list[Path]:
    """The socket files of ``bound_paths`` that a sandbox would see: still there, not in
    an ``overlaid`` tree, and not below a replaced directory unless below one of ``shown``
    (a grant or working directory under /tmp is bound back in). Each is checked to be a
    socket, so a forged line in the table (a path may hold a newline) cannot make anything
    else hidden."""
    out: dict[Path, None] = {}
    for raw in bound_paths(table):
        try:
            if not stat.S_ISSOCK(os.lstat(raw).st_mode):
                continue
        except (OSError, ValueError):
            continue
        real = Path(os.path.realpath(raw))
        if _below(real, overlaid) or (_below(real, REPLACED) and not _below(real, shown)):
            continue
        if all(_searchable(d) for d in reversed(real.parents)):
            out[real] = None
    return list(out)


def _searchable(directory: Path) -> bool:
    """Whether bwrap, in the sandbox's user namespace, can pass through ``directory``: only
    this user's ids are mapped there, so host root's override of permissions holds only for
    root's own files, and everyone else goes by the mode bits. A socket it cannot reach is
    left alone (a command cannot reach it either; bwrap would fail on it)."""
    try:
        st = os.stat(directory)
    except OSError:
        return False
    uid = os.getuid()
    if uid == 0 and st.st_uid == 0 and st.st_gid == 0:
        return True
    if st.st_uid == uid:
        return bool(st.st_mode & stat.S_IXUSR)
    if st.st_gid == os.getgid() or st.st_gid in os.getgroups():
        return bool(st.st_mode & stat.S_IXGRP)
    return bool(st.st_mode & stat.S_IXOTH)


def _below(path: Path, trees: list[Path] | tuple[Path, ...]) -> bool:
    return any(path.is_relative_to(tree) for tree in trees)
