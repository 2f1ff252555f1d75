"""A systemd user unit that keeps the daemon running, and its installation."""

from __future__ import annotations

import sys
from pathlib import Path

UNIT_NAME = "shellagent.service"


def unit_text(python: str | None = None) -> str:
    """The unit file: ``python -m shellagent daemon run`` restarted on failure."""
    exe = python or sys.executable
    return f"""[Unit]
Description=shellagent daemon (keeps the local model warm for `ask`)
Documentation=file://{Path(__file__).resolve().parents[2] / "docs" / "daemon.md"}

[Service]
Type=simple
ExecStart={exe} -m shellagent daemon run
Restart=on-failure
RestartSec=2
UMask=0077

[Install]
WantedBy=default.target
"""


def unit_path() -> Path:
    return Path.home() / ".config" / "systemd" / "user" / UNIT_NAME


def install_unit(path: Path | None = None, python: str | None = None) -> Path:
    """Write the unit file (0644, it holds no secret) and return its path."""
    target = path or unit_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(unit_text(python))
    target.chmod(0o644)
    return target
