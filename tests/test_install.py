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


def _pip_functions(tmp_path: Path) -> Path:
    """install.sh's pip progress functions, alone in a script that sources cleanly."""
    text = (ROOT / "install.sh").read_text()
    start = text.index("pip_progress() {")
    end = text.index("# (end of the pip progress functions)")
    part = tmp_path / "pip.sh"
    part.write_text('say() { printf "%s\\n" "$*"; }\n' + text[start:end])
    return part


@pytest.mark.slow
def test_the_install_shows_each_package_as_pip_works_on_it(tmp_path: Path) -> None:
    """A build that takes seconds is announced when it starts, not with everything else
    at the end (pip -q printed one line, then nothing for 88 s, then all at once)."""
    package = tmp_path / "slowpkg"
    package.mkdir()
    (package / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "slowpkg"\nversion = "0.1"\n'
    )
    (package / "setup.py").write_text(
        "import time\ntime.sleep(3)\nfrom setuptools import setup\nsetup(py_modules=[])\n"
    )
    script = (
        f"source {_pip_functions(tmp_path)}; pip_install {sys.prefix} --target {tmp_path / 'out'}"
        f" --no-build-isolation --no-deps --no-index {package}"
    )
    with subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        seen = [(time.monotonic(), line.rstrip("\n")) for line in proc.stdout]
        assert proc.wait(120) == 0
    lines = [line for _, line in seen]
    assert lines[0] == "  building slowpkg", lines
    assert lines[1].startswith("  built slowpkg in ") and lines[-1] == "  installing 1 package"
    assert seen[1][0] - seen[0][0] > 2  # shown while the build ran, not after it


def test_a_long_build_says_it_is_still_running_and_pip_s_failure_is_shown(
    tmp_path: Path,
) -> None:
    functions = _pip_functions(tmp_path)
    pip_says = (
        "Collecting llama-cpp-python>=0.3 (from shellagent==0.1)\n"
        "  Downloading llama_cpp_python-0.3.2.tar.gz (64.0 MB)\n"
        "  Building wheel for llama-cpp-python (pyproject.toml): started\n"
        "  Building wheel for llama-cpp-python (pyproject.toml): still running...\n"
        "  Building wheel for llama-cpp-python (pyproject.toml): finished with status 'done'\n"
        "Installing collected packages: numpy, llama-cpp-python\n"
        "Successfully installed numpy-2.0 llama-cpp-python-0.3.2\n"
    )
    shown = subprocess.run(
        ["bash", "-c", f"source {functions}; pip_progress"],
        input=pip_says, capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert shown == [
        "  getting llama-cpp-python",
        "  building llama-cpp-python",
        "  still building llama-cpp-python (0 min so far)",
        "  built llama-cpp-python in 0 s",
        "  installing 2 packages",
    ]
    failed = subprocess.run(
        ["bash", "-c", f"source {functions}; pip_install {sys.prefix} --no-index no-such-pkg-x"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert failed.returncode == 1
    assert "error: pip could not install shellagent" in failed.stderr
    assert "no-such-pkg-x" in failed.stderr  # pip's own words, from its log
