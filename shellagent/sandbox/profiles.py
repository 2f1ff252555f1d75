"""Profiles: what a sandbox can see, write and reach.

``default``  the user's files read-only except secrets, writes only to granted paths
             (the working directory unless it is ``/`` or the home directory itself),
             no network.
``ephemeral`` a throwaway writable root (overlays over the system directories, empty
             ``/home``, ``/root`` and ``/tmp``) for task sets; nothing written survives.

Both: a new session (no controlling terminal, so no TIOCSTI), ``--die-with-parent``, every
namespace unshared, no nested user namespaces, all capabilities dropped, a fresh ``/proc``,
a private ``/tmp``, an empty ``/run`` (no host sockets) and an environment cleared to an
allowlist that also neutralises pagers and editors.
"""

from __future__ import annotations

import dataclasses
import os
import pwd
from dataclasses import dataclass, field
from pathlib import Path

from shellagent import paths
from shellagent.errors import InputError, UsageError
from shellagent.sandbox import mounts, protect
from shellagent.sandbox.bwrap import Bwrap
from shellagent.sandbox.diskcap import DiskCap
from shellagent.sandbox.limits import Limits

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# Nothing in a sandbox may wait for a human: pagers print, editors return at once.
QUIET_ENV = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "",
    "LESS": "-FRX",
    "EDITOR": "true",
    "VISUAL": "true",
    "GIT_EDITOR": "true",
    "GIT_SEQUENCE_EDITOR": "true",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "true",
    "SSH_ASKPASS": "true",
    "DEBIAN_FRONTEND": "noninteractive",
    "PIP_NO_INPUT": "1",
    "TERM": "dumb",
    "HISTFILE": "/dev/null",
    "TMPDIR": "/tmp",
}
# Variables passed through from the host when set; everything else is dropped.
PASSTHROUGH_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")


@dataclass(frozen=True)
class Overlay:
    """``lower`` is seen through an overlay: reads see it, writes land in ``upper``
    (``work`` is overlayfs's scratch directory, on the same file system as ``upper``).
    ``named``: places that run code later which the user's request names; the places
    holding them are not bound read-only on the copy (the policy asks before a write there
    with an explicit key, and the apply still lands one only with ``--include``)."""

    lower: Path
    upper: Path
    work: Path
    named: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Profile:
    name: str
    ephemeral: bool = False
    network: bool = False
    writable: tuple[Path, ...] = ()
    workdir: Path | None = None
    hidden: tuple[Path, ...] = ()
    limits: Limits | None = None  # None: Limits.default()
    # Transaction mode: these trees are overlays instead of write grants (see transaction/).
    overlays: tuple[Overlay, ...] = ()
    # A snapshot of the host's processes and listening sockets at /run/host (hostview.py).
    host_view: bool = False
    env: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    # The umask commands start with (the user's: a daemon's own 077 would make every file
    # they create private); None: this process's.
    umask: int | None = None
    # What the overlays' upper layers may hold, enforced while commands run (diskcap.py);
    # None: ``DiskCap.default()`` when there are overlays.
    disk_cap: DiskCap | None = None
    # False: no command may open a Unix socket (a sandbox whose commands nobody approved,
    # such as a recipe trial: read-only binds do not stop a connect to a host socket).
    unix_sockets: bool = True

    @property
    def capped(self) -> DiskCap | None:
        """The disk cap in force: the profile's, or the default one over overlays."""
        if self.disk_cap is not None:
            return self.disk_cap
        return DiskCap.default() if self.overlays else None

    def with_options(
        self,
        *,
        writable: list[Path] | None = None,
        workdir: Path | None = None,
        network: bool | None = None,
    ) -> Profile:
        changes: dict[str, object] = {}
        if writable is not None:
            changes["writable"] = self.writable + tuple(writable)
        if workdir is not None:
            changes["workdir"] = workdir
        if network is not None:
            changes["network"] = network
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


PROFILES = ("default", "ephemeral")


def get_profile(name: str, *, cwd: Path | None = None) -> Profile:
    """A built-in profile by name; ``cwd`` becomes the default profile's writable workdir."""
    if name == "default":
        here = (cwd or Path.cwd()).resolve()
        refused = here in (Path("/"), Path.home().resolve()) or protect.refuse_reason(
            here, Path.home()
        )
        hide: tuple[Path, ...] = ()
        settings = paths.config_dir() / "config.toml"
        if settings.exists():  # pydantic is imported only when there is a file to check
            from shellagent import config

            hide = config.load(settings).sandbox.hidden_paths()
        return Profile(
            "default",
            writable=() if refused else (here,),
            workdir=here,
            hidden=hide,
            host_view=True,
        )
    if name == "ephemeral":
        return Profile("ephemeral", ephemeral=True, workdir=Path("/root"))
    raise UsageError(f"unknown profile {name!r}", hint=f"choose one of: {', '.join(PROFILES)}")


def environment(profile: Profile) -> dict[str, str]:
    """The complete environment inside the sandbox."""
    user = pwd.getpwuid(os.getuid()).pw_name
    if profile.ephemeral:
        home, user = "/root", "root"
    else:
        home = str(Path.home())
    env = {
        "PATH": f"/run/host/bin:{SYSTEM_PATH}" if profile.host_view else SYSTEM_PATH,
        "HOME": home,
        "USER": user,
        "LOGNAME": user,
        "SHELL": "/bin/bash",
        "LANG": "C.UTF-8",
    }
    env.update({k: os.environ[k] for k in PASSTHROUGH_ENV if k in os.environ})
    env.update(QUIET_ENV)
    env.update(dict(profile.env))
    return env


# In a namespace of many ids (ephemeral, run by root), root inside keeps what task setups
# need to own and change files; these capabilities count only inside that namespace.
MANY_IDS_CAPS = ("CAP_CHOWN", "CAP_FOWNER", "CAP_DAC_OVERRIDE", "CAP_FSETID")


def bwrap_argv(bwrap: Bwrap, profile: Profile, plan: mounts.MountPlan) -> list[str]:
    """The full argument list up to the command (everything before ``--``).

    A plan with a ``launcher`` starts bwrap inside a prepared user namespace of many ids
    (``userns.py``) as uid 0 there; otherwise bwrap makes a single-id one itself.
    """
    argv = [*plan.launcher, bwrap.path]
    if not plan.launcher:
        argv += ["--unshare-all", "--unshare-user", "--disable-userns"]
    else:
        argv += [
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ]
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox"]
    if plan.launcher:
        for cap in MANY_IDS_CAPS:
            argv += ["--cap-add", cap]
    if profile.network:
        argv.append("--share-net")
    if profile.ephemeral and not plan.launcher:
        argv += ["--uid", "0", "--gid", "0"]
    argv.append("--clearenv")
    for key, value in environment(profile).items():
        argv += ["--setenv", key, value]
    argv += plan.args
    workdir = profile.workdir or Path("/")
    argv += ["--chdir", str(workdir)]
    return argv


def check_writable(profile: Profile, protected: list[Path] | None = None) -> None:
    """Refuse write grants that do not exist or that resolve into a protected place
    (``protected``: ``mounts.protected_paths`` when the caller has it already).

    Each grant is resolved with realpath before launch, so a symlink planted in an earlier
    run (``cache -> ~/.ssh``) can never make a secret writable.
    """
    fixed = mounts.protected_paths(profile.hidden) if protected is None else protected
    hidden = [p.resolve() for p in fixed if os.path.lexists(p)]
    for grant in profile.writable:
        if "\0" in str(grant):
            raise InputError("a writable path contains a NUL byte")
        real = grant.resolve()
        if not real.exists():
            raise UsageError(
                f"writable path {grant} does not exist", hint="create it first or drop it"
            )
        why = protect.refuse_reason(real, Path.home())
        if why:
            raise UsageError(
                f"refusing to make {grant} writable: {why}",
                hint="work in a project directory, or copy the files there first",
            )
        for secret in hidden:
            if real == secret or secret in real.parents:
                raise UsageError(
                    f"refusing to make {grant} writable: it resolves to {real}, "
                    f"which is protected ({secret})"
                )
