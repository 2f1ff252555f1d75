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

Caches (``CACHES``: ``~/.cache``, ``~/.local/state``) are data only where named (``DATA``);
elsewhere in them what runs is held back: the code trees of tools that install or run from
their cache (``CACHE_CODE``: pre-commit's hooks, corepack's package managers, poetry's
virtual environments, pip's built wheels …), and anywhere else symlinks, executables, files
named like code (``CODE_SUFFIXES``: ``.pth``, ``.py``, ``.zsh``, ``.js`` …) and whatever lies
in an installed package's tree (``site-packages``, ``node_modules``, ``bin``).

Outside the dot entries, these places run code though no dot file is involved:

- install trees (``install_marker``): a top-level folder of the home directory that holds a
  prefix's layout (``etc/profile.d``, ``lib/python*/site-packages``, ``lib/perl5``,
  ``lib/node_modules``, ``conda-meta``, ``pyvenv.cfg``, a ``path.*.inc`` the shell sources
  …): ``~/miniconda3``, ``~/google-cloud-sdk``, ``~/perl5``; held back whole. A ``bin/`` or
  a ``node_modules/`` alone does not make one: a project has those, and they run only when
  its owner runs the project (a ``bin/`` on the login PATH counts as such);
- what Node and Python find from the home directory: ``~/node_modules``, and the modules a
  ``python3`` started in the home directory imports before the standard library
  (``~/*.py``, ``~/*.so``, ``~/__pycache__``, a package's ``~/NAME/__init__.py``);
- the directories on the login shell's PATH (``path_dirs``, ``loginpath.py``), and the files
  the home's shell startup files name (``startup_named``: sourced or run at every login).

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

from shellagent import loginpath

__all__ = [
    "CACHES",
    "CACHE_CODE",
    "CODE_SUFFIXES",
    "DATA",
    "GIT_CODE",
    "GIT_MUST_NOT_APPEAR",
    "STARTUP",
    "WORKSPACE_HOOKS",
    "Guarded",
    "cache_code",
    "classify",
    "expand",
    "git_code",
    "home_place",
    "install_marker",
    "install_trees",
    "is_gitdir_lookalike",
    "name_only",
    "path_dirs",
    "plain_below",
    "real_home",
    "startup_match",
    "startup_named",
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
    "go/pkg/",
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
    "node_modules/",
    "__pycache__/",
    "*.py",
    "*.pyc",
    "*.so",
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
    # network tools' settings: what they fetch, where they write, what they upload, which
    # proxy they trust, which credentials they send, which program they run after
    ".curlrc",
    ".config/.curlrc",
    ".wgetrc",
    ".config/wget/",
    ".netrc",
    ".config/aria2/",
    ".aria2/",
    ".lftprc",
    ".lftp/",
    ".config/lftp/",
    ".config/httpie/",
    ".config/yt-dlp/",
    ".config/youtube-dl/",
    "yt-dlp.conf",
    ".config/rclone/",
    ".s3cfg",
    ".aws/config",
    ".docker/config.json",
    ".kube/config",
    ".config/gh/config.yml",
    ".m2/settings.xml",
    ".ivy2/",
    ".sbt/",
    ".config/nix/",
    ".config/uv/",
    ".hgrc",
    ".config/hg/",
    ".subversion/",
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

# Top-level dot entries of the home directory that hold data, not settings: everything
# in them lands as it is.
DATA = (
    ".cache/thumbnails/",
    ".cache/fontconfig/",
    ".cache/pip/http/",
    ".cache/pip/http-v2/",
    ".cache/mesa_shader_cache/",
    ".cache/mesa_shader_cache_db/",
    ".cache/nvidia/GLCache/",
    ".cache/matplotlib/",
    ".local/share/Trash/",
    ".local/share/fonts/",
    ".local/share/icons/",
    ".local/share/recently-used.xbel",
)
# Caches and state: data, except what runs (``CACHE_CODE``, ``code_like``).
CACHES = (".cache/", ".local/state/")
# Trees in them that tools install from or run: held back whole.
CACHE_CODE = (
    ".cache/pre-commit/",
    ".cache/node/",
    ".cache/corepack/",
    ".cache/yarn/",
    ".cache/pnpm/",
    ".cache/deno/",
    ".cache/pip/wheels/",
    ".cache/uv/",
    ".cache/pypoetry/virtualenvs/",
    ".cache/pypoetry/artifacts/",
    ".cache/hatch/",
    ".cache/pdm/",
    ".cache/virtualenv/",
    ".cache/go-build/",
    ".cache/ccache/",
    ".cache/sccache/",
    ".cache/bazel/",
    ".cache/nix/",
    ".cache/nvim/",
    ".cache/torch/",
    ".cache/huggingface/modules/",
    ".cache/zsh/",
    ".cache/antigen/",
    ".cache/zinit/",
    ".cache/gitstatus/",
    ".local/state/nix/",
    ".local/state/home-manager/",
    ".local/state/mise/",
)
# Names of what an interpreter, a shell or a loader runs or imports.
CODE_SUFFIXES = (
    ".pth", ".py", ".pyc", ".pyo", ".pyw", ".pyz", ".so", ".egg", ".sh", ".bash", ".zsh",
    ".fish", ".ksh", ".csh", ".tcsh", ".command", ".js", ".mjs", ".cjs", ".jsx", ".ts",
    ".mts", ".cts", ".tsx", ".node", ".wasm", ".pl", ".pm", ".rb", ".lua", ".luac", ".vim",
    ".el", ".elc", ".zwc", ".desktop", ".service", ".timer", ".jar", ".class", ".php",
    ".tcl", ".jl", ".ps1", ".appimage",
)  # fmt: skip
# Folders inside a cache whose every file belongs to an installed program.
CODE_FOLDERS = frozenset(
    {"site-packages", "dist-packages", "node_modules", "bin", "sbin", "libexec", "hooks"}
)
CODE_NAMES = frozenset({"pyvenv.cfg", "package.json", ".pre-commit-hooks.yaml"})
# What makes a top-level folder of the home directory an install tree (a prefix whose
# programs, libraries and shell snippets run later), relative to it; ``*`` as in STARTUP.
INSTALL_MARKERS = (
    "etc/profile.d",
    "etc/conda",
    "conda-meta",
    "condabin",
    "pyvenv.cfg",
    "bin/activate",
    "lib/python*/site-packages",
    "lib64/python*/site-packages",
    "lib/perl5",
    "lib/node_modules",
    "lib/ruby",
    "share/perl5",
    "path.*.inc",
    "completion.*.inc",
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
_CACHES = tuple(_parts(p) for p in CACHES)
_CACHE_CODE = tuple((_parts(p), p) for p in CACHE_CODE)
_MARKERS = tuple(_parts(m) for m in INSTALL_MARKERS)


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


def _holds_data(parts: tuple[str, ...]) -> bool:
    """Whether ``parts`` is a cache, a data place, or a folder on the way to one."""
    return any(p[: len(parts)] == parts for p in (*_CACHES, *(d for d, _ in _DATA)))


def _in_cache(parts: tuple[str, ...]) -> bool:
    return any(parts[: len(c)] == c and len(parts) > len(c) for c in _CACHES)


def cache_code(
    parts: tuple[str, ...], file_type: str | None = None, mode: int | None = None
) -> str | None:
    """Why a path in a cache (``parts`` relative to the home directory, under ``CACHES``)
    runs later, or None for data: a code tree (``CACHE_CODE``), a symlink, an executable,
    a name like code's, a file of an installed package's tree. ``file_type`` ("file",
    "dir", "symlink") and ``mode`` are the change's, when known."""
    if _is_data(parts):
        return None
    for pattern, text in _CACHE_CODE:
        if parts[: len(pattern)] == pattern:
            return f"a tree programs run or install from ({text})"
    name = parts[-1].lower()
    if file_type == "symlink":
        return "a symlink in a cache: what it points to is what runs or is trusted"
    if file_type == "file" and mode is not None and mode & 0o111:
        return "an executable in a cache"
    if name.endswith(CODE_SUFFIXES) or name in CODE_NAMES:
        return "code in a cache: a shell, an interpreter or a loader runs it"
    if not CODE_FOLDERS.isdisjoint(parts[:-1]) or any(
        p.startswith("python") and p[6:7].isdigit() for p in parts[:-1]
    ):
        return "part of a program installed in a cache"
    return None


def _python_import(parts: tuple[str, ...]) -> bool:
    """What a ``python3`` started in the home directory imports from there before the
    standard library: ``~/NAME.py`` (``.pyc``, ``.so`` …), ``~/__pycache__``, a package's
    ``~/NAME/__init__.py``."""
    if len(parts) == 1:
        return parts[0].endswith((".py", ".pyc", ".pyw", ".so")) or parts[0] == "__pycache__"
    if parts[0] == "__pycache__":
        return True
    return (
        len(parts) == 2
        and parts[1].startswith("__init__.")
        and (parts[1].endswith((".py", ".pyc", ".so")))
    )


def _marks_install(parts: tuple[str, ...]) -> str | None:
    """The install marker a path in a top-level folder of the home directory is, or is
    inside (``~/sdk/lib/python3.12/site-packages/x.py``): a name alone shows it."""
    if len(parts) < 2 or parts[0].startswith("."):
        return None
    below = parts[1:]
    for marker in (*_MARKERS_BY_FIRST.get(below[0], ()), *_MARKERS_MAGIC):
        n = len(marker)
        if len(below) >= n and all(fnmatch.fnmatchcase(below[i], marker[i]) for i in range(n)):
            return "/".join(marker)
    return None


_MARKERS_BY_FIRST: dict[str, list[tuple[str, ...]]] = {}
_MARKERS_MAGIC = [m for m in _MARKERS if _magic(m[0])]
for _marker in _MARKERS:
    if not _magic(_marker[0]):
        _MARKERS_BY_FIRST.setdefault(_marker[0], []).append(_marker)


def home_place(rel: str) -> str | None:
    """Why a path relative to the home directory runs code later, by its name alone (the
    policy's test): a STARTUP place, a module Python imports from the home directory, code
    in a cache. Install trees and the login PATH need a look at the disk (``install_marker``,
    ``path_dirs``)."""
    parts = _parts(rel)
    if not parts:
        return None
    match = _startup_match(parts)
    if match is not None:
        return match
    if _python_import(parts):
        return "a module Python imports from your home directory"
    if _in_cache(parts):
        return cache_code(parts)
    marker = _marks_install(parts)
    if marker is not None:
        return f"an install tree (~/{parts[0]} holds {marker})"
    return None


def install_marker(
    directory: Path,
    exists: Callable[[Path], bool] = os.path.lexists,
    listdir: Callable[[Path], list[str]] | None = None,
) -> str | None:
    """The part of ``directory`` (a top-level folder of the home directory) that makes it an
    install tree (``INSTALL_MARKERS``), or None. ``exists`` and ``listdir`` may see more
    than the disk (a change set's merged view)."""
    names = listdir or _listdir
    top = names(directory)  # one listing decides most: the markers' first components
    firsts = set(top)
    for marker in _MARKERS:
        first = marker[0]
        if _magic(first):
            here = [directory / n for n in top if fnmatch.fnmatchcase(n, first)]
        else:
            here = [directory / first] if first in firsts else []
        for component in marker[1:]:
            if not here:
                break
            nxt: list[Path] = []
            for d in here:
                if _magic(component):
                    nxt += [d / n for n in names(d) if fnmatch.fnmatchcase(n, component)]
                elif exists(d / component):
                    nxt.append(d / component)
            here = nxt
        if here:
            return "/".join(marker)
    return None


def _listdir(directory: Path) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []


def install_trees(home: Path) -> list[tuple[Path, str]]:
    """Every top-level folder of ``home`` (resolved) that is an install tree, with why;
    ``~/node_modules`` and the like are STARTUP places already."""
    base = real_home(home)
    found = []
    for name in sorted(_listdir(base)):
        path = base / name
        if name.startswith(".") or os.path.islink(path) or not os.path.isdir(path):
            continue
        marker = install_marker(path)
        if marker is not None:
            found.append((path, marker))
    return found


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
    """Directories commands are looked up in: the login shell's PATH (``loginpath.py``),
    this process's PATH, ~/bin and ~/.local/bin, each resolved where it can be (an
    unreadable one is kept as written, never an error)."""
    login = loginpath.login_path(home)
    process = [p for p in os.environ.get("PATH", "").split(":") if p.startswith("/")]
    found = [Path(p) for p in dict.fromkeys([*login.dirs, *process])]
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


def startup_named(home: Path) -> list[Path]:
    """The files in the home directory that its shell startup files name (a file sourced or
    run at every login: ``~/google-cloud-sdk/path.bash.inc``), parents resolved. A named
    directory is not one (``alias d='cd ~/work'``): folders count through PATH and install
    trees."""
    out = []
    for text in loginpath.login_path(home).named:
        p = Path(text)
        if os.path.isdir(p):
            continue
        try:
            out.append(Path(os.path.realpath(p.parent)) / p.name)
        except OSError:
            out.append(p)
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


def classify(
    rel_to_home: str | None,
    parts_anywhere: tuple[str, ...],
    *,
    file_type: str | None = None,
    mode: int | None = None,
    deleting: bool = False,
) -> Guarded | None:
    """Why a path must not be applied unless named: ``rel_to_home`` is the path relative
    to the (resolved) home directory, None when it is outside it; ``parts_anywhere`` its
    components (for workspace hooks and git's directories, wherever they are);
    ``file_type`` and ``mode`` what the change makes there, when known (a symlink or an
    executable in a cache runs later); ``deleting``: the change removes it (emptying a
    cache runs nothing). Install trees, the login PATH and what the startup files name
    need the disk: ``transaction/guard.py`` adds them."""
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
    if _python_import(parts):
        return Guarded(
            "startup", "a module Python imports from your home directory: runs code later"
        )
    if _in_cache(parts):
        why = None if deleting else cache_code(parts, file_type, mode)
        return None if why is None else Guarded("startup", f"{why}: runs code later")
    if file_type == "dir" and _holds_data(parts):
        return None  # an empty folder on the way to data (~/.local for ~/.local/state)
    marker = _marks_install(parts)
    if marker is not None:
        return Guarded(
            "startup", f"~/{parts[0]} is an install tree (it holds {marker}): runs code later"
        )
    if parts[0].startswith(".") and not _is_data(parts):
        return Guarded("config", "settings in your home directory: programs read them")
    return None


def plain_below(rel_to_home: str | None, dir_parts: tuple[str, ...]) -> bool:
    """Whether nothing in a directory (relative to the home directory, None outside it;
    its components) can be held back except for its own name (``name_only``): no place
    of the lists starts there. Lets a change set of 100,000 paths skip the full test for
    most of them. A top-level folder of the home directory is never plain (a package's
    ``__init__.py``, a ``bin/``, an install tree's markers); below it, the caller knows
    whether the folder is an install tree."""
    if ".git" in dir_parts or not _HOOKS.isdisjoint(dir_parts):
        return False
    if rel_to_home is None:
        return True
    if rel_to_home == "" or "/" not in rel_to_home:
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
