"""``shellagent doctor``: is this machine ready, and if not, exactly what to do."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from shellagent.errors import ShellagentError
from shellagent.sandbox import Check, diagnose


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


def _changes() -> Check:
    """Whether ask sessions can work on a copy of the home directory (overlays)."""
    import uuid

    from shellagent.sandbox import Sandbox, get_profile
    from shellagent.transaction.review import Review, interrupted_note, overlay_problem

    fix = "sessions then write straight into the working directory after each approval"
    problem = overlay_problem()
    if problem is None:
        review = Review.create(f"doctor-{uuid.uuid4().hex[:8]}", get_profile("default"))
        probe = Path.home() / f".shellagent-doctor-{uuid.uuid4().hex[:8]}"
        try:
            with Sandbox(review.profile(get_profile("default")), timeout=10) as session:
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


def _login_path() -> Check:
    """Whose PATH the apply, the sandbox and the policy protect: the login shell's."""
    from shellagent.loginpath import login_path

    found = login_path()
    if found.note:
        return Check(
            "login PATH",
            True,
            found.note,
            "set your login shell (chsh) or SHELL to bash, zsh or fish",
            warning=True,
        )
    return Check("login PATH", True, f"{len(found.dirs)} folders from {found.shell} protected")


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
    checks = diagnose(with_sandbox=(_changes,))
    checks.append(Check.attempt("model", _model))
    checks.append(_login_path())
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
