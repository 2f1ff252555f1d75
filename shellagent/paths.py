"""Where shellagent keeps things, from platformdirs, each overridable for tests.

config: policy.toml, config.toml      data: transcripts, models
state:  jobs                          runtime: the daemon's socket and lock, env serve's token
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import stat
from pathlib import Path

from shellagent.errors import EnvironmentProblem

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


def runtime_dir(*, create: bool = True) -> Path:
    """$XDG_RUNTIME_DIR/shellagent, else /run/user/UID/shellagent, else a private /tmp dir.

    Computed here rather than by platformdirs, which warns when XDG_RUNTIME_DIR is unset
    (cron, CI, ssh without a login session); stdlib only, so ``ask`` can use it.

    A base directory counts only when it is the user's own and nobody else can write it (the
    XDG spec's rule: ``su`` and ``sudo -E`` keep another user's XDG_RUNTIME_DIR). Without
    one, the place is ``/tmp/shellagent-UID``, made 0700 here so that the daemon, ``ask``
    and ``env serve`` all find the same directory; when another user took that name first
    (or it is a link, or not a directory) it is a fresh ``mkdtemp`` directory remembered in
    the user's state directory (``_tmp_runtime_dir``). ``SHELLAGENT_RUNTIME_DIR`` is taken
    as given: whoever writes there checks it with ``private_runtime_dir``.

    ``create=False`` makes nothing: the directory in use if there is one, else where it
    would be (for the places a sandbox hides, which must not litter /tmp).
    """
    override = os.environ.get("SHELLAGENT_RUNTIME_DIR")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and _users_own(Path(xdg)):
        return Path(xdg) / APP
    run_user = RUN_USER / str(os.getuid())
    if _users_own(run_user):
        return run_user / APP
    return _tmp_runtime_dir(TMP_BASE, create=create)


RUN_USER = Path("/run/user")  # pam_systemd's per-user runtime directories
TMP_BASE = Path("/tmp")


def _users_own(base: Path) -> bool:
    """Whether ``base`` is a directory of this user's that nobody else can write."""
    try:
        st = os.stat(base)
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == os.getuid()
        and not st.st_mode & 0o022
        and os.access(base, os.W_OK | os.X_OK)
    )


def _tmp_runtime_dir(base: Path, *, create: bool = True) -> Path:
    """``base/shellagent-UID`` if it is (or can be made) a private directory of ours, else
    the private directory the state directory's pointer names, made on first need.

    The pointer is per host (a home shared over NFS has one /tmp per machine) and is read
    and written under a lock, so ``ask`` and the daemon it starts agree on one directory.
    If nothing works the usual name is returned: whoever writes there then refuses with
    the reason (``private_runtime_dir``), and ``ask`` will not trust it.
    """
    default = base / f"{APP}-{os.getuid()}"
    if not create and not os.path.lexists(default):
        return default
    if claim_private_dir(default, create=create) is None:
        return default
    prefix = f"{APP}-{os.getuid()}-"
    state = _state_dir_stdlib()
    pointer = state / f"runtime-dir.{socket.gethostname()}"
    if not create:
        return _remembered(pointer, base, prefix) or default
    try:
        ensure_private_dir(state)
        lock_fd = os.open(
            state / "runtime-dir.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )
    except OSError:
        return default
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        remembered = _remembered(pointer, base, prefix)
        if remembered is not None:
            return remembered
        import tempfile  # here: only this rare path needs it, and ``ask`` starts light

        fresh = Path(tempfile.mkdtemp(prefix=prefix, dir=base))  # 0700, a name nobody had
        temp = pointer.with_name(f".{pointer.name}.{os.getpid()}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(f"{fresh}\n")
        os.replace(temp, pointer)
        return fresh
    except OSError:
        return default
    finally:
        os.close(lock_fd)


def _remembered(pointer: Path, base: Path, prefix: str) -> Path | None:
    """The directory ``pointer`` names, if it is one of ours made as ``_tmp_runtime_dir``
    makes them (in ``base``, named ``prefix…``) and still a private directory of ours."""
    found = _read_pointer(pointer)
    if found is None or found.parent != base or not found.name.startswith(prefix):
        return None
    return found if claim_private_dir(found, create=False) is None else None


def _read_pointer(pointer: Path) -> Path | None:
    """The directory a pointer file names, if the file is a regular file of ours."""
    try:
        fd = os.open(pointer, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd) as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return None
        text = f.read(4096).strip()
    return Path(text) if text.startswith("/") else None


def _state_dir_stdlib() -> Path:
    """``state_dir()`` without platformdirs (its rule on Linux: $XDG_STATE_HOME, else
    ~/.local/state), for ``ask``'s start-up path."""
    override = os.environ.get("SHELLAGENT_STATE_DIR")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_STATE_HOME", "").strip()
    return Path(xdg or os.path.expanduser("~/.local/state")) / APP


def claim_private_dir(path: Path, *, create: bool = True) -> str | None:
    """Make ``path`` (0700) if asked and missing; why it is not a private directory of this
    user's, or None. A directory of ours that others may write is made 0700 (only its owner
    can loosen it, so nobody else made it so); the files in it are checked by whoever uses
    them."""
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(path, 0o700)
        st = os.lstat(path)
    except OSError as exc:
        return (exc.strerror or str(exc)).lower()
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if st.st_uid != os.getuid():
        return f"it belongs to uid {st.st_uid}, not to you"
    if stat.S_IMODE(st.st_mode) & 0o077:
        try:
            os.chmod(path, 0o700, follow_symlinks=False)
        except (OSError, NotImplementedError):
            return "its permissions cannot be made private"
    return None


def private_runtime_dir(path: Path | None = None) -> Path:
    """``path`` (default ``runtime_dir()``), made if missing and checked before anything is
    written in it: a real directory of this user's, 0700; otherwise an
    ``EnvironmentProblem`` that says why, in one line with the fix."""
    path = path or runtime_dir()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    problem = claim_private_dir(path)
    if problem is not None:
        raise EnvironmentProblem(
            f"cannot use {path} for shellagent's runtime files: {problem}",
            hint="set XDG_RUNTIME_DIR or SHELLAGENT_RUNTIME_DIR to a directory only you can write",
        )
    return path


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
    return [config_dir(), data_dir(), state_dir(), cache_dir(), runtime_dir(create=False)]


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) with mode 0700 and tighten it if it exists."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)
    return path
