"""install.sh: usage errors, and a second --dev run that changes nothing."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
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


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_a_no_to_the_key_binding_is_remembered_and_not_asked_again(tmp_path: Path) -> None:
    text = (ROOT / "install.sh").read_text()
    start = text.index("# The Ctrl-G key binding")
    block = text[start : text.index('case ":$PATH:" in', start)]
    part = tmp_path / "keys.sh"
    part.write_text('say() { echo "$@"; }\nbin=/opt/sa/bin\n' + block)
    home = tmp_path / "home"
    home.mkdir()
    session = f"sa-{uuid.uuid4().hex[:6]}"

    def screen() -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True
        ).stdout

    def wait_for(text: str) -> str:
        deadline = time.monotonic() + 15
        while text not in (shown := screen()):
            assert time.monotonic() < deadline, f"{text!r} never appeared:\n{shown}"
            time.sleep(0.1)
        return shown

    try:
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", session, "-x", "150", "-y", "20",
             "-e", f"HOME={home}", "-e", "SHELL=/bin/bash", "-e", "XDG_STATE_HOME=",
             "-e", "CI=",  # CI=true (as CI runs) would skip the question under test
             f"bash {part}; echo FIRST-DONE; bash {part}; echo SECOND-DONE; sleep 30"],
            check=True,
        )  # fmt: skip
        wait_for("[y/N]")
        subprocess.run(["tmux", "send-keys", "-t", session, "n", "Enter"], check=True)
        shown = wait_for("SECOND-DONE")  # a second question would wait for an answer
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    assert shown.count("[y/N]") == 1, shown
    assert not (home / ".bashrc").exists()
