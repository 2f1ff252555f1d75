"""``shellagent doctor`` says what the kernel's Landlock can hold, and warns without it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shellagent.sandbox import landlock
from shellagent.sandbox.diagnosis import landlock_check


def test_doctor_reports_the_abi(workspace: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "shellagent", "doctor", "--json"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if landlock.abi_version() == 0:
        pytest.skip("this kernel has no Landlock")
    (check,) = [c for c in json.loads(proc.stdout)["checks"] if c["name"] == "landlock"]
    assert check["ok"] and not check["warning"]
    assert check["detail"].startswith(f"ABI {landlock.abi_version()}:")


@pytest.mark.parametrize(("abi", "warning"), [(0, True), (1, True), (4, False), (7, False)])
def test_doctor_warns_when_the_kernel_cannot_hold_the_claim(abi: int, warning: bool) -> None:
    check = landlock_check(abi)
    assert check.ok and check.warning is warning
    assert ("policy alone decides" in check.detail) is (abi == 0)
    assert ("TCP" in check.detail) is (abi >= 4)
