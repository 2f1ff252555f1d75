"""What stays read-only inside a writable grant, and which grants are refused outright.

A sandboxed command may write where it was granted, but never where the host would later
*run* what it wrote:

- git's own code paths: ``.git`` is a mount point of its own (it cannot be renamed or
  removed, so no fresh ``.git`` replaces it) and inside it only what everyday git writes
  stays writable (objects, refs, the index, HEAD, logs, packed-refs …); ``config``,
  ``hooks/``, ``info/``, ``modules/`` and ``worktrees/`` are read-only, created as
  read-only mount points when they do not exist yet; ``commondir`` and
  ``objects/info/alternates`` are read-only when they exist and, since git reacts to their
  mere existence, removed after each command if one appeared. A ``.git`` *file*
  (``gitdir:`` of a worktree or submodule) is read-only.
- editor and environment hooks of the workspace: ``.vscode/``, ``.idea/``,
  ``.devcontainer/``, ``.envrc``, also when they do not exist yet;
- startup locations below a grant (and, in an overlaid home, those that exist): the list
  in ``shellagent/protected.py`` (shell startup files, autostart, systemd units, Python's
  user site, ``~/.local/bin``, ``~/.ssh`` …), built from the resolved home directory, the
  install trees of the home directory (``~/miniconda3``), the files the shell startup
  files name, and every directory on the login shell's PATH.

A grant *inside* a place whose files configure or start programs (``~/.config``,
``~/.local``, ``/etc``, a directory on PATH, an install tree of the home directory, the
system's own trees) is refused: nothing below it could be trusted afterwards. The default
profile then runs read-only there.

A ``.git`` made during the session at a grant that had none cannot be protected by mounts;
``gitguard.py`` removes what git would run from it after every command. What remains
(docs/sandbox.md): one made deeper below a grant is not looked at.
"""

from __future__ import annotations

import os
from pathlib import Path

from shellagent import protected

# The places themselves are defined once, in ``shellagent/protected.py`` (the policy and
# the apply use the same list).
WORKSPACE_PROTECTED = protected.WORKSPACE_HOOKS
# Inside a .git directory: read-only (made as empty read-only directories when missing).
GIT_PROTECTED = protected.GIT_CODE
# Files git acts on merely because they exist, so no placeholder can stand in for them:
# read-only when present; when missing, one that appears is removed after each command.
GIT_MUST_NOT_APPEAR = protected.GIT_MUST_NOT_APPEAR
# Grants inside these (or equal to them) are refused.
SYSTEM_TREES = ("/etc", "/usr", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
HOME_CONFIG_TREES = (".config", ".local")


def path_bins(home: Path) -> list[Path]:
    """Directories commands are looked up in: the caller's PATH, ~/bin and ~/.local/bin
    (resolved where readable; an unreadable one never raises)."""
    return protected.path_dirs(home)


def _within(path: Path, top: Path) -> bool:
    return path == top or top in path.parents


def refuse_reason(grant: Path, home: Path) -> str | None:
    """Why ``grant`` (resolved) must never be writable, or None."""
    real_home = protected.real_home(home)
    for rel in HOME_CONFIG_TREES:
        if _within(grant, real_home / rel):
            return f"it is in ~/{rel}, where programs keep settings that run code"
    for top in SYSTEM_TREES:
        if _within(grant, Path(top)):
            return f"it is in {top}, a system directory"
    for bin_dir in path_bins(home):
        if _within(grant, bin_dir):
            return f"commands you run are found in {bin_dir} (it is on PATH)"
    if grant.is_relative_to(real_home) and grant != real_home:
        tree = real_home / grant.relative_to(real_home).parts[0]
        marker = None if tree.name.startswith(".") else protected.install_marker(tree)
        if marker is not None:
            return (
                f"it is in ~/{tree.name}, an install tree (it holds {marker}) whose "
                "programs run later"
            )
    return None


def startup_places(home: Path) -> list[tuple[Path, bool]]:
    """(path, is a directory) of every startup location, built from the resolved home
    directory (``protected.expand``), the home's install trees, what the shell startup
    files name, and every directory on PATH."""
    places = protected.expand(home)
    places += [(tree, True) for tree, _ in protected.install_trees(home)]
    named = protected.startup_named(home)
    places += [(p, False) for p in named if os.path.lexists(p) and not os.path.islink(p)]
    places += [(b, True) for b in path_bins(home)]
    return places
