"""The places where what is written runs code later: one list for the policy, the sandbox
and the apply.

A write to one of these places is not an ordinary edit: a shell sources it at the next
login, a desktop starts it, Python imports it, git runs it. Three walls use this module
and a test holds them equal:

- the policy's ``protected`` path class (``policy/pathclass.py``): such writes are denied;
- the sandbox (``sandbox/protect.py``, ``sandbox/mounts.py``): such places below a writable
  tree are bound read-only;
- the apply (``transaction/apply.py``): a change set that touches one is refused by
  default; the user applies such a change only by naming its path
  (``shellagent apply SESSION --include PATH``), never with ``-y``.

The apply holds back a wider class as well (``classify``): every top-level dot entry of
the home directory, which covers everything below ``~/.config`` and ``~/.local``, except
known data directories (``DATA``): programs read their settings there, and many settings
name programs to run.

Every place is built from the *resolved* home directory (``real_home``): with ``$HOME``
reached through a symlink (``/home -> var/home`` on Fedora Silverblue) the real paths of the
change set are what must match. Patterns are relative to the home directory; a trailing
``/`` marks a directory (everything below it is the place too) and ``*`` matches within one
path component. Standard library only: ``ask`` imports nothing heavy.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = [
    "DATA",
    "GIT_CODE",
    "GIT_MUST_NOT_APPEAR",
    "STARTUP",
    "WORKSPACE_HOOKS",
    "Guarded",
    "classify",
    "expand",
    "git_code",
    "is_gitdir_lookalike",
    "name_only",
    "path_dirs",
    "plain_below",
    "real_home",
    "startup_match",
]

# Runs code later: shell and session startup, services, plugins, interpreters' startup
# hooks, tools' settings that name a program, git's own config and hooks, keys.
STARTUP = (
    # shells (and the files their default startup files source)
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".bash_functions",
    ".bashrc.d/",
    ".bash_completion",
    ".bash_completion.d/",
    ".local/share/bash-completion/",
    ".profile",
    ".profile.d/",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".zshrc.d/",
    ".zsh/",
    ".oh-my-zsh/",
    ".zcompdump*",
    "*.zwc",
    ".config/zsh/",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    ".yashrc",
    ".xonshrc",
    ".config/fish/",
    ".local/share/fish/",
    ".config/nushell/",
    ".config/xonsh/",
    ".config/elvish/",
    ".config/powershell/",
    ".inputrc",
    ".editrc",
    ".fzf.*",
    ".lessfilter",
    ".selected_editor",
    ".config/user-dirs.dirs",
    # the login and the desktop session
    ".xprofile",
    ".xsession",
    ".xsessionrc",
    ".xinitrc",
    ".xserverrc",
    ".xsession.d/",
    ".xbindkeysrc",
    ".pam_environment",
    ".config/environment.d/",
    ".config/autostart/",
    ".config/autostart-scripts/",
    ".config/*/autostart*",
    ".config/*/*/autostart*",
    ".config/plasma-workspace/",
    ".kde/Autostart/",
    ".kde/env/",
    ".kde4/Autostart/",
    ".kde4/env/",
    ".config/systemd/",
    ".local/share/systemd/",
    ".local/share/dbus-1/",
    ".local/share/applications/",
    ".local/share/kservices5/",
    ".local/share/kservices6/",
    ".local/share/kio/",
    ".local/share/nautilus/",
    ".local/share/nautilus-python/",
    ".local/share/gnome-shell/",
    ".local/share/plasma/",
    "Desktop/*.desktop",
    # programs found on PATH in the home directory
    "bin/",
    ".local/bin/",
    "go/bin/",
    ".cargo/bin/",
    # interpreters' startup hooks and user packages
    ".local/lib/",
    ".pythonrc",
    ".pythonrc.py",
    ".pythonstartup",
    ".ipython/",
    ".jupyter/",
    ".config/ipython/",
    ".config/pip/",
    ".pip/",
    ".pydistutils.cfg",
    ".condarc",
    ".pyenv/",
    ".node_modules/",
    ".node_libraries/",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".bunfig.toml",
    ".nvm/",
    ".cargo/config",
    ".cargo/config.toml",
    ".cargo/env",
    ".rustup/settings.toml",
    ".rustup/toolchains/",
    ".config/go/",
    ".gemrc",
    ".irbrc",
    ".pryrc",
    ".bundle/",
    ".rbenv/",
    ".mavenrc",
    ".gradle/init.d/",
    ".gradle/init.gradle",
    ".gradle/init.gradle.kts",
    ".gradle/gradle.properties",
    ".sdkman/",
    ".asdf/",
    ".config/mise/",
    ".local/share/mise/",
    # editors, debuggers, terminals, mail
    ".vimrc",
    ".gvimrc",
    ".exrc",
    ".vim/",
    ".config/nvim/",
    ".local/share/nvim/",
    ".emacs",
    ".emacs.el",
    ".emacs.d/",
    ".config/emacs/",
    ".nanorc",
    ".config/nano/",
    ".config/helix/",
    ".config/micro/",
    ".config/kak/",
    ".vscode/",
    ".config/Code/User/",
    ".gdbinit",
    ".gdbinit.d/",
    ".config/gdb/",
    ".lldbinit",
    ".pdbrc",
    ".pdbrc.py",
    ".tmux.conf",
    ".tmux/",
    ".config/tmux/",
    ".screenrc",
    ".mailcap",
    ".muttrc",
    ".mutt/",
    ".neomuttrc",
    ".config/mutt/",
    ".config/neomutt/",
    # git, direnv, containers, keys
    ".gitconfig",
    ".config/git/",
    ".envrc",
    ".config/direnv/",
    ".config/containers/",
    ".ssh/",
    ".gnupg/",
)

# Inside any tree: editor and environment hooks of a workspace (path components).
WORKSPACE_HOOKS = (".vscode/", ".idea/", ".devcontainer/", ".envrc")
# Inside a .git directory (or a bare repository): what git runs or obeys.
GIT_CODE = ("config", "hooks/", "info/", "modules/", "worktrees/")
# Files git acts on merely because they exist.
GIT_MUST_NOT_APPEAR = ("commondir", "objects/info/alternates")

# Top-level dot entries of the home directory that hold data, not settings.
DATA = (
    ".cache/",
    ".local/state/",
    ".local/share/Trash/",
    ".local/share/fonts/",
    ".local/share/icons/",
    ".local/share/recently-used.xbel",
)


@lru_cache(maxsize=8)
def _resolved(home: str) -> str:
    try:
        return os.path.realpath(home)
    except OSError:
        return os.path.abspath(home)


def real_home(home: Path | None = None) -> Path:
    """The home directory with every symlink resolved (``$HOME`` may be a link)."""
    return Path(_resolved(str(home if home is not None else Path.home())))


def _parts(pattern: str) -> tuple[str, ...]:
    return tuple(p for p in pattern.rstrip("/").split("/") if p)


_COMPILED = tuple((_parts(p), p.endswith("/"), p) for p in STARTUP)
_DATA = tuple((_parts(p), p) for p in DATA)


def _magic(component: str) -> bool:
    return any(c in component for c in "*?[")


# Patterns by their first component (a change set may hold 100,000 paths): a path is only
# tried against the patterns that can match its first component.
_BY_FIRST: dict[str, list[tuple[tuple[str, ...], bool, str]]] = {}
_FIRST_MAGIC: list[tuple[tuple[str, ...], bool, str]] = []
for _entry in _COMPILED:
    if _magic(_entry[0][0]):
        _FIRST_MAGIC.append(_entry)
    else:
        _BY_FIRST.setdefault(_entry[0][0], []).append(_entry)


def startup_match(rel: str) -> str | None:
    """The STARTUP pattern ``rel`` (relative to the home directory) is, or is below."""
    return _startup_match(_parts(rel))


def _startup_match(parts: tuple[str, ...]) -> str | None:
    if not parts:
        return None
    candidates = _BY_FIRST.get(parts[0], []) + _FIRST_MAGIC
    for pattern, is_dir, text in candidates:
        n = len(pattern)
        if len(parts) < n or (len(parts) > n and not is_dir):
            continue
        if all(
            parts[i] == pattern[i] or fnmatch.fnmatchcase(parts[i], pattern[i]) for i in range(n)
        ):
            return text
    return None


def _is_data(parts: tuple[str, ...]) -> bool:
    for pattern, text in _DATA:
        n = len(pattern)
        if parts[:n] == pattern and (len(parts) == n or text.endswith("/")):
            return True
    return False


def expand(home: Path) -> list[tuple[Path, bool]]:
    """(path, is a directory) of every STARTUP place under ``home`` (resolved first):
    the literal ones whether they exist or not, the patterned ones as they exist now."""
    base = real_home(home)
    found: list[tuple[Path, bool]] = []
    for pattern, is_dir, _ in _COMPILED:
        if not any(_magic(p) for p in pattern):
            found.append((base.joinpath(*pattern), is_dir))
            continue
        paths = [base]
        for component in pattern:
            nxt: list[Path] = []
            for here in paths:
                if not _magic(component):
                    nxt.append(here / component)
                    continue
                try:
                    names = sorted(os.listdir(here))
                except OSError:
                    continue
                nxt += [here / n for n in names if fnmatch.fnmatchcase(n, component)]
            paths = nxt
        found += [(p, is_dir) for p in paths if os.path.lexists(p)]
    return found


def path_dirs(home: Path) -> list[Path]:
    """Directories commands are looked up in: the caller's PATH, ~/bin and ~/.local/bin,
    each resolved where it can be (an unreadable one is kept as written, never an error)."""
    found = [Path(p) for p in os.environ.get("PATH", "").split(":") if p.startswith("/")]
    base = real_home(home)
    found += [base / "bin", base / ".local" / "bin"]
    out: list[Path] = []
    for p in found:
        try:
            real = Path(os.path.realpath(p))
        except OSError:
            real = p
        out.append(real)
    return list(dict.fromkeys(out))


def is_gitdir_lookalike(directory: Path, exists: Callable[[Path], bool] = os.path.lexists) -> bool:
    """A directory git would take for a repository: ``HEAD``, ``objects/`` and ``refs/``
    (a bare repository, or a ``.git`` under another name)."""
    return all(exists(directory / n) for n in ("HEAD", "objects", "refs"))


@dataclass(frozen=True)
class Guarded:
    """Why a path needs the user to name it before it is applied."""

    tier: str  # "startup", "config", "git", "workspace", "path"
    why: str


_HOOKS = frozenset(h.rstrip("/") for h in WORKSPACE_HOOKS)
_GIT_NAMES = frozenset(n.rstrip("/") for n in (*GIT_CODE, *GIT_MUST_NOT_APPEAR))


def classify(rel_to_home: str | None, parts_anywhere: tuple[str, ...]) -> Guarded | None:
    """Why a path must not be applied unless named: ``rel_to_home`` is the path relative
    to the (resolved) home directory, None when it is outside it; ``parts_anywhere`` its
    components (for workspace hooks and git's directories, wherever they are)."""
    if ".git" in parts_anywhere:
        inside = parts_anywhere[parts_anywhere.index(".git") + 1 :]
        if not inside or git_code(inside):
            return Guarded("git", "git's own settings and code")
    if not _HOOKS.isdisjoint(parts_anywhere):
        return Guarded("workspace", "an editor or environment hook")
    if rel_to_home is None:
        return None
    parts = _parts(rel_to_home)
    if not parts:
        return None
    match = _startup_match(parts)
    if match is not None:
        return Guarded("startup", f"a startup place ({match}): runs code later")
    if parts[0].startswith(".") and not _is_data(parts):
        return Guarded("config", "settings in your home directory: programs read them")
    return None


def plain_below(rel_to_home: str | None, dir_parts: tuple[str, ...]) -> bool:
    """Whether nothing in a directory (relative to the home directory, None outside it;
    its components) can be held back except for its own name (``name_only``): no place
    of the lists starts there. Lets a change set of 100,000 paths skip the full test for
    most of them."""
    if ".git" in dir_parts or not _HOOKS.isdisjoint(dir_parts):
        return False
    if rel_to_home is None:
        return True
    if rel_to_home == "":
        return False
    first = rel_to_home.split("/", 1)[0]
    return not first.startswith(".") and first not in _BY_FIRST


def name_only(name: str) -> bool:
    """Whether a name alone makes a path in a plain directory (``plain_below``) need the
    full test: ``.git`` and the workspace hooks."""
    return name == ".git" or name in _HOOKS


def git_code(inside: tuple[str, ...]) -> bool:
    """Whether a path ``inside`` a git directory (its components) is what git runs."""
    return bool(inside) and (inside[0] in _GIT_NAMES or "/".join(inside[:3]) in _GIT_NAMES)
