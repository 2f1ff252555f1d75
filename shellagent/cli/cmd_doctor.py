"""``shellagent doctor``: is this machine ready, and if not, exactly what to do."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from shellagent.errors import ShellagentError


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


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
            "still apply", hint=f"filters exist for {', '.join(ARCHES)}",
        )
    return f"filter active for {platform.machine()} (TIOCSTI, io_uring, ptrace, bpf, …)"


def _profile(name: str) -> Callable[[], str]:
    def probe() -> str:
        from shellagent.errors import SandboxUnavailable
        from shellagent.sandbox import Session

        start = time.monotonic()
        with Session(name, timeout=10) as session:
            result = session.run("echo ok")
        if result.output.strip() != "ok":
            raise SandboxUnavailable(f"profile {name} ran `echo ok` and got {result.output!r}")
        return f"starts and runs a command ({(time.monotonic() - start) * 1000:.0f} ms)"

    return probe


def _scheduler() -> Check:
    """Which OS scheduler runs recurring jobs; missing one only matters for jobs."""
    from shellagent.jobs.scheduler import detect

    try:
        return Check("scheduler", True, detect().describe())
    except ShellagentError as exc:
        return Check("scheduler", True, f"none: recurring jobs cannot be installed ({exc.message})",
                     exc.hint or "")


def _model() -> str:
    from shellagent.model.embedded import embedded_model_path

    path = embedded_model_path()
    return f"{path} ({path.stat().st_size / 1e6:.0f} MB)"


def cmd_doctor(args: argparse.Namespace) -> int:
    checks = [_attempt("bwrap", _bwrap), _attempt("user namespaces", _userns),
              _attempt("seccomp", _seccomp)]
    if all(c.ok for c in checks):
        from shellagent.sandbox.profiles import PROFILES

        checks += [_attempt(f"profile {name}", _profile(name)) for name in PROFILES]
    checks.append(_attempt("model", _model))
    checks.append(_scheduler())
    ok = all(c.ok for c in checks)
    if args.json:
        print(json.dumps({"ok": ok, "checks": [asdict(c) for c in checks]}, indent=2))
    else:
        for check in checks:
            mark = "ok  " if check.ok else "FAIL"
            print(f"{mark} {check.name}: {check.detail}")
            if check.fix:
                print(f"     fix: {check.fix}")
    return 0 if ok else 3
