"""Sort the paths a command touches into the classes rules speak of.

Classes: ``root`` (``/`` itself), ``home`` (the home directory itself), ``wide-glob`` (a
glob over a whole directory such as ``*``, ``~/*``, ``/*``), ``protected`` (the places that
run code later, ``shellagent/protected.py``: shell startup files, ``~/.ssh``, ``~/.gnupg``,
git's code paths, ``.envrc``, autostart entries, code in caches, Python modules in the home
directory, the home's install trees, the login shell's PATH …, and shellagent's own
config), ``secret``
(private keys and credential files), ``system`` (``/etc``, ``/usr``, ``/boot`` …),
``device`` (block devices and memory), ``workspace``, ``user`` (under home), ``tmp``,
``other``, and ``dynamic`` when the path is not known before the command runs. Paths are
resolved lexically against the shell's cwd. The looks at the disk are the home
directory's real path (once), so a ``$HOME`` that is a symlink is recognised both ways,
and, for a path in the home directory, whether its top-level folder is an install tree and
which folders the login shell's PATH holds (each remembered for a few seconds).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shellagent import protected

PATH_CLASSES = (
    "root",
    "home",
    "wide-glob",
    "protected",
    "secret",
    "system",
    "device",
    "workspace",
    "user",
    "tmp",
    "other",
    "dynamic",
    "harmless-device",
)

# ``protected`` is the shared list of places that run code later (``shellagent/protected.py``:
# the sandbox binds the same places read-only and the apply refuses them), plus
# shellagent's own settings.
_OWN = (".config/shellagent",)
_SECRET = (
    ".ssh/id_",
    ".ssh/identity",
    ".gnupg",
    ".aws/credentials",
    ".netrc",
    ".git-credentials",
    ".docker/config.json",
    ".kube/config",
    ".pgpass",
    ".config/gh/hosts.yml",
    ".password-store",
    ".local/share/keyrings",
    ".config/shellagent",
)
_SYSTEM = (
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/boot",
    "/opt",
    "/srv",
    "/root",
    "/var",
    "/sys",
    "/proc",
    "/snap",
    "/dev",
    "/efi",
    "/run",
)
_HARMLESS_DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/fd/",
    "/dev/random",
    "/dev/urandom",
    "/dev/full",
    "/dev/shm/",
    "/dev/pts/",
)
_DEVICE = re.compile(
    r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|loop|md|dm-|sr|disk/|mapper/|mem$|kmem$|port$|nbd)"
)
_PROC_SECRET = re.compile(
    r"^/proc/(self|thread-self|[0-9]+)(/task/[0-9]+)?/(environ|mem|maps|smaps|smaps_rollup|"
    r"pagemap|auxv|fd|fdinfo|map_files)(/|$)"
)
_WIDE_GLOB_TAIL = re.compile(r"^(\.?\*+|\.\*|\*\.\*|\.\[!.\]\*|\?\*)$")


@dataclass(frozen=True)
class Places:
    """The directories classification depends on."""

    home: str
    workspace: str | None = None
    cwd: str | None = None

    def resolve(self, path: str) -> str | None:
        if path.startswith("/"):
            return os.path.normpath(path).replace("//", "/")
        base = self.cwd or self.workspace
        if base is None:
            return None
        return os.path.normpath(os.path.join(base, path))

    def classify(self, path: str, *, dynamic: bool = False, glob: bool = False) -> frozenset[str]:
        classes: set[str] = set()
        if dynamic:
            classes.add("dynamic")
        if glob or dynamic:
            head, _, tail = path.rstrip("/").rpartition("/")
            if _WIDE_GLOB_TAIL.match(tail) and (
                dynamic or _is_wide(self, head if "/" in path else ".")
            ):
                classes.add("wide-glob")
        if dynamic:
            return frozenset(classes)
        resolved = self.resolve(path)
        if resolved is None:
            # Unknown cwd: only the name itself can be judged.
            if _protected_anywhere(path):
                classes.add("protected")
            return frozenset(classes | {"other"})
        classes |= _classes_of(resolved, self.home, self.workspace)
        return frozenset(classes)


def _protected_anywhere(path: str) -> bool:
    """git's code paths and the workspace's editor and environment hooks, in any tree."""
    parts = tuple(p for p in path.split("/") if p)
    return protected.classify(None, parts) is not None


def _is_wide(places: Places, head: str) -> bool:
    if head in ("", ".", "~", "/", ".."):
        return True
    resolved = places.resolve(head)
    return resolved in ("/", places.home, places.workspace) or resolved in _SYSTEM


def _under(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip("/") + "/")


def _classes_of(path: str, home: str, workspace: str | None) -> set[str]:
    classes: set[str] = set()
    if path == "/":
        return {"root", "system"}
    if path == home or home.startswith(path.rstrip("/") + "/"):
        classes.add("home")  # home itself, or a directory holding it (/home)
    if _protected_anywhere(path):
        classes.add("protected")
    real_home = protected.real_home(Path(home)).as_posix()
    for base in dict.fromkeys((home, real_home)):  # $HOME may be a symlink
        if not _under(path, base):
            continue
        rel = path[len(base) :].lstrip("/")
        own = any(rel == p or rel.startswith(p + "/") for p in _OWN)
        if own or protected.home_place(rel) is not None or _runs_later(base, rel):
            classes.add("protected")
        if any(rel.startswith(p) for p in _SECRET) and not rel.endswith(".pub"):
            classes.add("secret")
    if path in ("/etc/shadow", "/etc/gshadow", "/etc/sudoers") or path.startswith(
        "/etc/ssh/ssh_host"
    ):
        classes.add("secret")
    if _PROC_SECRET.match(path):
        classes.add("secret")  # another process's environment, memory, open files
    if workspace and _under(path, workspace):
        classes.add("workspace")
    elif _under(path, "/tmp") or _under(path, "/var/tmp") or _under(path, "/dev/shm"):
        classes.add("tmp")
    elif path.startswith(_HARMLESS_DEVICES) or path in _HARMLESS_DEVICES:
        classes.add("harmless-device")
    elif _under(path, home):  # before system prefixes: root's home is /root
        classes.add("user")
    elif any(_under(path, s) for s in _SYSTEM):
        classes.add("system")
        if _DEVICE.match(path):
            classes.add("device")
    else:
        classes.add("other")
    return classes


_REMEMBER_S = 5.0
_looked: dict[tuple[str, ...], tuple[float, object]] = {}


def _remembered(key: tuple[str, ...], compute: Callable[[], object]) -> object:
    """``compute()``, remembered under ``key`` for a few seconds (a policy check must stay
    within its budget; a session's commands are checked one after the other)."""
    now = time.monotonic()
    found = _looked.get(key)
    if found is None or now - found[0] > _REMEMBER_S:
        if len(_looked) > 256:
            _looked.clear()
        found = (now, compute())
        _looked[key] = found
    return found[1]


def _runs_later(home: str, rel: str) -> bool:
    """Whether ``rel`` (below ``home``) lies in an install tree of the home directory, in a
    directory on the login shell's PATH, or is a file the shell startup files name."""
    parts = rel.split("/")
    if not parts[0]:
        return False
    if parts[0].startswith("."):
        return _on_login_path(home, rel)
    top = os.path.join(home, parts[0])
    if len(parts) > 1 and _remembered(("tree", top), lambda: protected.install_marker(Path(top))):
        return True
    return _on_login_path(home, rel)


def _on_login_path(home: str, rel: str) -> bool:
    found = _remembered(("path", home), lambda: _login_places(Path(home)))
    dirs, named = found if isinstance(found, tuple) else ((), ())
    path = os.path.join(home, rel)
    return path in named or any(_under(path, d) for d in dirs)


def _login_places(home: Path) -> tuple[tuple[str, ...], frozenset[str]]:
    real = protected.real_home(home).as_posix()
    dirs = tuple(
        str(d) for d in protected.path_dirs(home) if _under(str(d), real) and str(d) != real
    )
    named = frozenset(str(p) for p in protected.startup_named(home))
    # the same places through $HOME as written, when it is a symlink
    spelled = str(home)
    if spelled != real:
        dirs += tuple(spelled + d[len(real) :] for d in dirs)
        named |= {spelled + p[len(real) :] for p in named if _under(p, real)}
    return dirs, named


def writable_program(path: str, places: Places, writable: list[str]) -> str:
    """Why running the program at ``path`` (resolved) cannot be judged by name, or ``""``."""
    for base in [
        *writable,
        *([places.workspace] if places.workspace else []),
        "/tmp",
        "/var/tmp",
        "/dev/shm",
    ]:
        if _under(path, base):
            return f"runs {path}, a program inside the writable directory {base}"
    if os.path.dirname(path) not in _BIN_DIRS:
        return f"runs {path}, a program outside the system program directories"
    return ""


_BIN_DIRS = frozenset(
    {"/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/usr/games"}
)


def home_of(home: Path | None) -> str:
    return str(home if home is not None else Path.home())
