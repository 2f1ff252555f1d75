"""Is the sandbox ready on this machine, and if not, exactly what to do: ``diagnose()``.

``shellagent doctor`` prints these checks (and its own, of the model and the scheduler, in
the same ``Check`` shape); nothing outside the sandbox needs to know which of its modules
each one asks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shellagent.errors import SandboxUnavailable, ShellagentError


@dataclass(frozen=True)
class Check:
    """One line of ``shellagent doctor``: what was checked, whether it holds, the fix."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    warning: bool = False  # works, with less protection than it could have

    @classmethod
    def attempt(cls, name: str, probe: Callable[[], str]) -> Check:
        """``probe``'s text as a passed check; a ``ShellagentError`` it raises as a failed
        one (its message the detail, its hint the fix)."""
        try:
            return cls(name, True, probe())
        except ShellagentError as exc:
            return cls(name, False, exc.message, exc.hint or "")


def diagnose(with_sandbox: Sequence[Callable[[], Check]] = ()) -> list[Check]:
    """The sandbox's checks, in the order doctor prints them: bwrap, user namespaces,
    seccomp and Landlock; then, when those pass, a command run in each profile; then, when
    that works too, the caller's ``with_sandbox`` checks (ones that need a working
    sandbox); last, who root is in a throwaway root and the limits a session gets.

    Never raises for a problem of the machine: that is a failed (or warning) check."""
    from shellagent.sandbox.profiles import PROFILES

    checks = [
        Check.attempt("bwrap", _bwrap),
        Check.attempt("user namespaces", _userns),
        Check.attempt("seccomp", _seccomp),
        _landlock(),
    ]
    if all(c.ok for c in checks):
        checks += [Check.attempt(f"profile {name}", _profile(name)) for name in PROFILES]
    if all(c.ok for c in checks):
        checks += [check() for check in with_sandbox]
    checks.append(_ephemeral_ids())
    checks.append(Check.attempt("limits", _limits))
    return checks


def _bwrap() -> str:
    from shellagent.sandbox.bwrap import find_bwrap

    found = find_bwrap()
    overlay = "overlays supported" if found.has_overlay else "no overlays (ephemeral needs 0.9+)"
    return f"{found.path} {found.version_text}, {overlay}"


def _userns() -> str:
    from shellagent.sandbox.bwrap import USERNS_HINT, find_bwrap, probe_userns

    error = probe_userns(find_bwrap())
    if error:
        raise SandboxUnavailable(f"bwrap cannot create namespaces: {error}", hint=USERNS_HINT)
    return "bwrap can create user, pid, net, ipc, uts and mount namespaces"


def _seccomp() -> str:
    import platform

    from shellagent.sandbox.seccomp import ARCHES, program

    if program() is None:
        raise SandboxUnavailable(
            f"no seccomp filter for {platform.machine()}: namespaces and dropped capabilities "
            "still apply",
            hint=f"filters exist for {', '.join(ARCHES)}",
        )
    return f"filter active for {platform.machine()} (TIOCSTI, io_uring, ptrace, bpf, …)"


def _landlock() -> Check:
    from shellagent.sandbox.landlock import abi_version

    return landlock_check(abi_version())


def landlock_check(abi: int) -> Check:
    """Whether the kernel (Landlock ABI ``abi``) can hold the policy's read-only claim;
    without it the policy alone decides, which is a warning, not a failure."""
    if abi == 0:
        return Check(
            "landlock",
            True,
            "none: commands the policy allows as read-only run with the sandbox's normal "
            "rights (the policy alone decides), and commands are not kept out of each "
            "other's /proc entries",
            "use Linux 5.13 or newer with Landlock enabled (CONFIG_SECURITY_LANDLOCK, "
            "'landlock' in the lsm= boot parameter)",
            warning=True,
        )
    held = ["file-system writes"]
    if abi >= 4:
        held.append("TCP bind and connect")
    if abi >= 6:
        held.append("signals and abstract sockets outside the command")
    detail = f"ABI {abi}: read-only commands are refused {', '.join(held)}"
    if abi < 2:
        return Check(
            "landlock",
            True,
            detail + "; other commands are not kept out of each other's /proc entries",
            "Linux 5.19 or newer (Landlock ABI 2) keeps every command in a domain of its own",
            warning=True,
        )
    return Check("landlock", True, detail + "; every command runs in a domain of its own")


def _profile(name: str) -> Callable[[], str]:
    def probe() -> str:
        from shellagent.sandbox.shell import Sandbox

        before = _snapshots() if name == "ephemeral" else set()
        start = time.monotonic()
        with Sandbox(name, timeout=10) as session:
            result = session.run("echo ok")
        took = time.monotonic() - start
        if result.output.strip() != "ok":
            raise SandboxUnavailable(f"profile {name} ran `echo ok` and got {result.output!r}")
        if name == "ephemeral" and _snapshots() - before:
            # The slow part is not the sandbox: its frozen copy of /etc and /var was (re)built
            # (per user, at most hourly or when /etc changed; root's is usually there already).
            return (
                f"starts and runs a command ({took:.1f} s, of which most built this user's "
                "copy of /etc and /var; later sessions reuse it for an hour)"
            )
        return f"starts and runs a command ({took * 1000:.0f} ms)"

    return probe


def _snapshots() -> set[str]:
    """The ephemeral profile's snapshot generations present now."""
    from shellagent import paths

    try:
        return {g.name for g in paths.rootfs_dir().iterdir() if g.name.startswith("gen-")}
    except OSError:
        return set()


def _limits() -> str:
    from shellagent.sandbox.limits import Limits, describe

    return "; ".join(describe(Limits.default()))


def _ephemeral_ids() -> Check:
    """Who root is inside a throwaway root; the identity map is a weaker wall, not a fault."""
    from shellagent.sandbox.idmap import describe

    detail, fix = describe()
    return Check("ephemeral ids", True, detail, fix)
