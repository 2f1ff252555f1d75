"""Jobs tests: the OS scheduler's programs replaced by recording stand-ins in a temp dir."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def shellagent(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``shellagent ARGS`` run as its own process in ``cwd``, output captured."""
    return subprocess.run(
        [sys.executable, "-m", "shellagent", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


@pytest.fixture
def fake_systemd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A unit dir and a `systemctl` that records its arguments; returns the log file."""
    log = tmp_path / "systemctl.log"
    tool = tmp_path / "systemctl"
    tool.write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    tool.chmod(0o755)
    monkeypatch.setenv("SHELLAGENT_SCHEDULER", "systemd")
    monkeypatch.setenv("SHELLAGENT_SYSTEMD_UNIT_DIR", str(tmp_path / "units"))
    monkeypatch.setenv("SHELLAGENT_SYSTEMCTL", str(tool))
    return log


@pytest.fixture
def fake_crontab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `crontab` that keeps the table in a file, as `crontab -l` / `crontab -` do."""
    table = tmp_path / "crontab.txt"
    tool = tmp_path / "crontab"
    tool.write_text(
        "#!/bin/sh\n"
        f'case "$1" in -l) [ -f {table} ] && cat {table} || {{ echo "no crontab" >&2; exit 1; }} ;;'
        f" -) cat > {table} ;; esac\n"
    )
    tool.chmod(0o755)
    monkeypatch.setenv("SHELLAGENT_SCHEDULER", "cron")
    monkeypatch.setenv("SHELLAGENT_CRONTAB", str(tool))
    return table


@pytest.fixture
def user_home(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home with ~/Documents/letter.txt and an empty ~/work/backups, as $HOME."""
    home = outside_tmp / "home"
    (home / "Documents").mkdir(parents=True)
    (home / "Documents/letter.txt").write_text("dear reader\n")
    (home / "work/backups").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return home
