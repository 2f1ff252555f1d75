"""``shellagent doctor``: is this machine ready, and if not, exactly what to do."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from shellagent.errors import ShellagentError


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    warning: bool = False  # works, with less protection than it could have


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check bwrap, namespaces, profiles and the model",
        description="Check that the sandbox and the model work here; print the fix for\n"
        "anything that does not. Exit status 3 if something must be fixed.\n\n"
        "example: shellagent doctor --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=cmd_doctor)


def _attempt(name: str, probe: Callable[[], str]) -> Check:
    try:
        return Check(name, True, probe())
    except ShellagentError as exc:
        return Check(name, False, exc.message, exc.hint or "")


def _bwrap() -> str:
    from shellagent.sandbox.bwrap import find_bwrap

    found = find_bwrap()
    overlay = "overlays supported" if found.has_overlay else "no overlays (ephemeral needs 0.9+)"
    return f"{found.path} {found.version_text}, {overlay}"


def _userns() -> str:
    from shellagent.errors import SandboxUnavailable
    from shellagent.sandbox.bwrap import USERNS_HINT, find_bwrap, probe_userns

    error = probe_userns(find_bwrap())
    if error:
        raise SandboxUnavailable(f"bwrap cannot create namespaces: {error}", hint=USERNS_HINT)
    return "bwrap can create user, pid, net, ipc, uts and mount namespaces"


def _seccomp() -> str:
    import platform

    from shellagent.errors import SandboxUnavailable
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
        from shellagent.errors import SandboxUnavailable
        from shellagent.sandbox import Session

        before = _snapshots() if name == "ephemeral" else set()
        start = time.monotonic()
        with Session(name, timeout=10) as session:
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


def _changes() -> Check:
    """Whether ask sessions can work on a copy of the home directory (overlays)."""
    import uuid

    from shellagent.sandbox import Session, get_profile
    from shellagent.transaction.review import Review, interrupted_note, overlay_problem

    fix = "sessions then write straight into the working directory after each approval"
    problem = overlay_problem()
    if problem is None:
        review = Review.create(f"doctor-{uuid.uuid4().hex[:8]}", get_profile("default"))
        probe = Path.home() / f".shellagent-doctor-{uuid.uuid4().hex[:8]}"
        try:
            with Session(review.profile(get_profile("default")), timeout=10) as session:
                session.run(f": > {probe}")
            seen = [str(c.path) for c in review.changes()]
            if probe.exists() or seen != [str(probe)]:
                problem = f"a write through the overlay gave {seen} (expected only {probe})"
        except ShellagentError as exc:
            problem = exc.message
        finally:
            review.discard()
    if problem is not None:
        return Check("changes", True, f"no change-set review: {problem}", fix, warning=True)
    note = interrupted_note()
    if note:
        return Check("changes", True, note, "undo it, or check those files by hand", warning=True)
    return Check("changes", True, "commands work on a copy of your files; you apply the change set")


def _limits() -> str:
    from shellagent.sandbox.limits import Limits, describe

    return "; ".join(describe(Limits.default()))


def _ephemeral_ids() -> Check:
    """Who root is inside a throwaway root; the identity map is a weaker wall, not a fault."""
    from shellagent.sandbox.idmap import describe

    detail, fix = describe()
    return Check("ephemeral ids", True, detail, fix)


def _scheduler() -> Check:
    """Which OS scheduler runs recurring jobs; missing one only matters for jobs."""
    from shellagent.jobs.scheduler import detect

    try:
        return Check("scheduler", True, detect().describe())
    except ShellagentError as exc:
        return Check(
            "scheduler",
            True,
            f"none: recurring jobs cannot be installed ({exc.message})",
            exc.hint or "",
            warning=True,
        )


def _model() -> str:
    """The default model: the embedded base and the shipped adapter, whole and made for it."""
    from shellagent.errors import ModelUnavailable
    from shellagent.model.adapters import check_adapter, file_sha256
    from shellagent.model.catalog import installed_path, lookup
    from shellagent.model.embedded import DEFAULT_ADAPTER, EMBEDDED_NAME, embedded_model_path

    base = embedded_model_path()
    entry = lookup(DEFAULT_ADAPTER)
    adapter = installed_path(entry)
    if not adapter.is_file() or file_sha256(adapter) != entry.sha256:
        raise ModelUnavailable(
            f"the shipped adapter {adapter} is missing or not the file the catalog names",
            hint="reinstall shellagent (./install.sh); `--model smollm2-135m` runs without it",
        )
    check_adapter(adapter, base, base_sha256=lookup(EMBEDDED_NAME).sha256)
    return (
        f"{base} ({base.stat().st_size / 1e6:.0f} MB) with the adapter {DEFAULT_ADAPTER} "
        f"({adapter.stat().st_size / 1e6:.1f} MB)"
    )


def cmd_doctor(args: argparse.Namespace) -> int:
    checks = [
        _attempt("bwrap", _bwrap),
        _attempt("user namespaces", _userns),
        _attempt("seccomp", _seccomp),
        _landlock(),
    ]
    if all(c.ok for c in checks):
        from shellagent.sandbox.profiles import PROFILES

        checks += [_attempt(f"profile {name}", _profile(name)) for name in PROFILES]
    if all(c.ok for c in checks):
        checks.append(_changes())
    checks.append(_ephemeral_ids())
    checks.append(_attempt("limits", _limits))
    checks.append(_attempt("model", _model))
    checks.append(_scheduler())
    ok = all(c.ok for c in checks)
    if args.json:
        print(json.dumps({"ok": ok, "checks": [asdict(c) for c in checks]}, indent=2))
    else:
        for check in checks:
            mark = "FAIL" if not check.ok else "warn" if check.warning else "ok  "
            print(f"{mark} {check.name}: {check.detail}")
            if check.fix:
                print(f"     fix: {check.fix}")
    return 0 if ok else 3
