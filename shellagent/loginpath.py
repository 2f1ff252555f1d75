"""The PATH of the user's login shell, and the home's paths its startup files name.

The process that applies a change set or starts a sandbox need not have the user's PATH: a
daemon started by systemd's user manager has systemd's, without the folders the user's
shell startup adds (conda's ``bin``, an SDK's ``bin``, ``~/.local/bin`` …). A program a
session writes into one of those runs the next time the user types its name, so the apply,
the sandbox and the policy protect the login shell's PATH (``protected.path_dirs``).

It is read by running the login shell once, as a terminal would start it
(``SHELL -l -i -c 'printf … "$PATH"'``: bash and zsh read their interactive startup files
too), with no terminal, stdin on ``/dev/null`` and a timeout, and cached: in memory, and in
shellagent's cache directory under a key made of the shell and the sizes and times of the
usual startup files (read again after an hour anyway: a startup file may source others).
When it cannot be read (no such shell, a shell that is not one, a timeout, a startup file
that ``exec``s something else), this process's PATH stands in and ``note`` says so.

``named`` holds the paths in the home directory that the home's shell startup files name
(``. ~/google-cloud-sdk/path.bash.inc``, conda's ``'/home/u/miniconda3/bin/conda' shell.bash
hook``, ``-I$HOME/perl5/lib/perl5``): read from the files' text (``~``, ``$HOME``,
``${HOME}`` and the home's own path), never by running them; a name built from another
variable is not seen.

Standard library only: the sandbox and ``ask`` import this.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import pwd
import re
import signal
import stat
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from shellagent import paths

__all__ = ["LoginPath", "login_path"]

TIMEOUT_S = 5.0
MAX_AGE_S = 3600.0
BEGIN, END = "__SHELLAGENT_PATH_BEGIN__", "__SHELLAGENT_PATH_END__"
# Shells that take ``-l -i -c``; others (csh, a nologin) are not run.
SHELLS = frozenset({"bash", "zsh", "fish", "sh", "dash", "ksh", "mksh", "yash", "oksh"})
# Whose sizes and times key the cache: the home's (relative) and the system's.
HOME_FILES = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_aliases",
    ".profile",
    ".bashrc.d",
    ".profile.d",
    ".zshenv",
    ".zprofile",
    ".zshrc",
    ".zlogin",
    ".zshrc.d",
    ".config/zsh",
    ".config/fish/config.fish",
    ".config/fish/conf.d",
    ".kshrc",
    ".mkshrc",
)
SYSTEM_FILES = (
    "/etc/profile",
    "/etc/profile.d",
    "/etc/bash.bashrc",
    "/etc/bashrc",
    "/etc/environment",
    "/etc/zshenv",
    "/etc/zprofile",
    "/etc/zshrc",
    "/etc/zsh",
    "/etc/fish/config.fish",
    "/etc/fish/conf.d",
)


# The home's startup files whose text is searched for ``named``, and folders of them.
SOURCED_FILES = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_aliases",
    ".bash_functions",
    ".profile",
    ".zshenv",
    ".zprofile",
    ".zshrc",
    ".zlogin",
    ".kshrc",
    ".mkshrc",
    ".config/fish/config.fish",
)
SOURCED_FOLDERS = (".bashrc.d", ".profile.d", ".zshrc.d", ".config/fish/conf.d", ".config/zsh")
READ_MAX = 256 * 1024  # of each file
FILES_MAX = 64


@dataclass(frozen=True)
class LoginPath:
    """The login shell's PATH (absolute entries, in order) and, when it could not be read,
    why (``dirs`` then holds this process's PATH); ``named``: the home's paths its startup
    files name (absolute, not resolved)."""

    dirs: tuple[str, ...]
    shell: str
    note: str = ""
    named: tuple[str, ...] = ()


_memory: dict[str, tuple[float, LoginPath]] = {}
_lock = threading.Lock()


def login_path(home: Path | None = None) -> LoginPath:
    """The PATH of the user's login shell started in ``home`` (``$HOME`` by default)."""
    home = home if home is not None else Path.home()
    shell = _shell()
    stamp = _stamp(home, shell)
    key = f"{os.getuid()}:{home}:{shell}:{stamp}"
    with _lock:
        found = _memory.get(key)
        if found is not None and time.time() - found[0] < MAX_AGE_S:
            return found[1]
        at, result = _from_disk(key)
        if result is None:
            read = _read(shell, home)
            at, result = time.time(), dataclasses.replace(read, named=named_in_startup(home))
            if not result.note:  # a failure is tried again next time
                _to_disk(key, at, result)
        _memory[key] = (at, result)
        return result


def _shell() -> str:
    """The login shell from the password database; ``$SHELL`` when that is no shell (an
    account whose login shell is ``nologin`` may still use one)."""
    try:
        shell = pwd.getpwuid(os.getuid()).pw_shell
    except KeyError:
        shell = ""
    if os.path.basename(shell) in SHELLS:
        return shell
    return os.environ.get("SHELL", "") or shell or "/bin/sh"


def _stamp(home: Path, shell: str) -> str:
    parts = []
    for name in (*(str(home / f) for f in HOME_FILES), *SYSTEM_FILES, shell):
        try:
            st = os.stat(name)
        except OSError:
            parts.append("-")
            continue
        parts.append(f"{st.st_mtime_ns:x}.{st.st_size:x}")
    return ",".join(parts)


def _process_path() -> tuple[str, ...]:
    return tuple(p for p in os.environ.get("PATH", "").split(":") if p.startswith("/"))


def _read(shell: str, home: Path) -> LoginPath:
    """Run the login shell once; this process's PATH, with a note, when that fails."""

    def fallback(why: str) -> LoginPath:
        return LoginPath(_process_path(), shell, f"{why}: using this process's PATH instead")

    if os.path.basename(shell) not in SHELLS or not os.access(shell, os.X_OK):
        return fallback(f"the login shell {shell} is not one shellagent can ask for its PATH")
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "SHELL": shell,
        "TERM": "dumb",
        **{k: os.environ[k] for k in ("USER", "LOGNAME", "LANG", "LC_ALL") if k in os.environ},
    }
    script = f"printf '\\n%s%s%s\\n' {BEGIN} \"$PATH\" {END}"
    if os.path.basename(shell) == "bash":
        # A login bash reads ~/.profile (or ~/.bash_profile), a terminal's bash ~/.bashrc,
        # and not every ~/.profile sources ~/.bashrc: both are asked.
        env["SHELLAGENT_PATH_SCRIPT"] = script
        script += '; exec "$BASH" -i -c "$SHELLAGENT_PATH_SCRIPT"'
    try:
        proc = subprocess.Popen(
            [shell, "-l", "-i", "-c", script],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=home if home.is_dir() else "/",
            start_new_session=True,  # no terminal to take over; its group is ours to end
        )
    except OSError as exc:
        return fallback(f"the login shell {shell} did not start ({exc.strerror})")
    try:
        out, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return fallback(f"the login shell {shell} took longer than {TIMEOUT_S:.0f} s to start")
    text = out.decode(errors="replace")
    found: list[str] = []
    for value in re.findall(f"{BEGIN}(.*?){END}", text):
        found += [p for p in value.split(":") if p.startswith("/")]
    if not found:
        return fallback(f"the login shell {shell} did not print its PATH")
    return LoginPath(tuple(dict.fromkeys(found)), shell)


def _cache_file() -> Path:
    return paths.cache_dir() / "login-path.json"


def _from_disk(key: str) -> tuple[float, LoginPath | None]:
    try:
        saved = json.loads(_cache_file().read_text())
        entry = saved[key]
        at = float(entry["at"])
        dirs = tuple(str(d) for d in entry["dirs"] if str(d).startswith("/"))
        named = tuple(str(d) for d in entry["named"] if str(d).startswith("/"))
        if time.time() - at < MAX_AGE_S:
            return at, LoginPath(dirs, str(entry["shell"]), named=named)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return 0.0, None


def _to_disk(key: str, at: float, result: LoginPath) -> None:
    cache = _cache_file()
    try:
        saved = json.loads(cache.read_text())
        if not isinstance(saved, dict):
            saved = {}
    except (OSError, ValueError):
        saved = {}
    saved = {k: v for k, v in saved.items() if isinstance(v, dict) and k != key}
    saved = dict(list(saved.items())[-15:])  # a few homes (tests, several users' roots)
    saved[key] = {
        "at": at,
        "dirs": list(result.dirs),
        "shell": result.shell,
        "named": list(result.named),
    }
    try:
        paths.ensure_private_dir(cache.parent)
        temp = cache.with_name(f".{cache.name}.{os.getpid()}")
        temp.write_text(json.dumps(saved))
        os.replace(temp, cache)
    except OSError:
        pass


def named_in_startup(home: Path) -> tuple[str, ...]:
    """The paths in ``home`` that its shell startup files name (see the module's text)."""
    texts: list[str] = []
    files = [home / f for f in SOURCED_FILES]
    for folder in SOURCED_FOLDERS:
        with contextlib.suppress(OSError):
            files += sorted((home / folder).iterdir())[:FILES_MAX]
    for path in files[:FILES_MAX]:
        try:  # never blocks on a fifo
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                texts.append(os.read(fd, READ_MAX).decode(errors="replace"))
        except OSError:
            pass
        finally:
            os.close(fd)
    bases = dict.fromkeys(["~", "$HOME", "${HOME}", str(home), os.path.realpath(home)])
    pattern = re.compile(
        "(?:" + "|".join(re.escape(b) for b in bases) + ")"
        r"((?:/[^/\s\"'`;:|&<>()$]+)+)"
    )
    found: list[str] = []
    for text in texts:
        for m in pattern.finditer(text):
            rel = m.group(1).rstrip("/")
            if rel and ".." not in rel.split("/"):
                found.append(str(home) + rel)
    return tuple(dict.fromkeys(found))
