"""install.sh: usage errors, and a second --dev run that changes nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STAMP = ROOT / ".venv" / ".shellagent-installed"


def test_install_script_is_valid_bash_and_rejects_unknown_options() -> None:
    subprocess.run(["bash", "-n", str(ROOT / "install.sh")], check=True)
    proc = subprocess.run([str(ROOT / "install.sh"), "--bogus"], capture_output=True, text=True)
    assert proc.returncode == 2 and "unknown option --bogus" in proc.stderr


@pytest.mark.skipif(
    Path(sys.prefix).resolve() != (ROOT / ".venv").resolve() or not STAMP.exists(),
    reason="only meaningful inside the .venv that ./install.sh --dev made",
)
def test_a_second_dev_install_changes_nothing() -> None:
    before = STAMP.stat().st_mtime_ns
    proc = subprocess.run(
        [str(ROOT / "install.sh"), "--dev"], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    assert "already set up: nothing to do" in proc.stdout
    assert STAMP.stat().st_mtime_ns == before
