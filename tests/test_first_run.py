"""The README's first line, verbatim, in a login shell of a brand-new user account.

A real user is created (root only: CI runs as root), the checkout is copied into its home,
and the line from README.md is run through ``runuser -l``. Packages come from wheels built
here from pip's cache (no network, no 10-minute compile); everything else is what a new
user gets: no PATH changes, no daemon, the embedded model. A second login shell must then
find ``ask`` on its PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.getuid() != 0, reason="creating a user account needs root"),
    pytest.mark.skipif(shutil.which("useradd") is None, reason="no useradd"),
]


def readme_first_line() -> str:
    block = (ROOT / "README.md").read_text().split("```bash\n", 1)[1]
    line = block.splitlines()[0]
    return re.sub(r"\s+#.*$", "", line)


@pytest.fixture
def new_user(tmp_path: Path) -> Iterator[str]:
    name = f"sa-{uuid.uuid4().hex[:8]}"
    subprocess.run(["useradd", "-m", "-s", "/bin/bash", name], check=True)
    try:
        yield name
    finally:
        subprocess.run(["pkill", "-KILL", "-u", name], check=False)
        subprocess.run(["userdel", "-r", "-f", name], capture_output=True, check=False)


def _copy_checkout(home: Path, user: str) -> Path:
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    dest = home / "shellagent"
    for name in filter(None, files):
        rel = Path(os.fsdecode(name))
        if (ROOT / rel).is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).symlink_to(os.readlink(ROOT / rel))
        elif (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    subprocess.run(["chown", "-R", f"{user}:", str(dest)], check=True)
    return dest


@pytest.fixture
def wheels() -> Iterator[Path]:
    """Wheels of shellagent, every dependency and the build tools, built from pip's cache,
    in a directory the new user can read."""
    where = Path(tempfile.mkdtemp(prefix="sa-wheels-", dir="/var/tmp"))
    where.chmod(0o755)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "-w", str(where), str(ROOT)]
        + ["pip", "setuptools>=77"],
        check=True,
        capture_output=True,
    )
    for wheel in where.iterdir():
        wheel.chmod(0o644)
    yield where
    shutil.rmtree(where, ignore_errors=True)


def test_the_readme_first_line_works_for_a_new_user(new_user: str, wheels: Path) -> None:
    home = Path(f"~{new_user}").expanduser()
    _copy_checkout(home, new_user)
    line = readme_first_line()
    assert line.startswith("./install.sh && ")
    script = f"export PIP_NO_INDEX=1 PIP_FIND_LINKS={wheels}; cd ~/shellagent && {line}"
    run = subprocess.run(
        ["runuser", "-l", new_user, "-c", script],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = run.stdout + run.stderr
    assert "command not found" not in out, out[-3000:]
    assert f"linked {home}/.local/bin/ask" in out, out[-3000:]  # the install succeeded
    assert run.returncode in (0, 1), out[-3000:]  # the task ran (the model may fail it)
    assert "session " in out and "transcript" in out, out[-3000:]
    # A new login shell finds ask without a path, and says what it is.
    again = subprocess.run(
        ["runuser", "-l", new_user, "-c", "command -v ask && ask --help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.startswith(f"{home}/.local/bin/ask")
    # A second install changes nothing, and the PATH block is not added twice.
    second = subprocess.run(
        ["runuser", "-l", new_user, "-c", f"{script.split(' && ')[0]} && ./install.sh"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "already installed: nothing changed" in second.stdout, second.stdout[-2000:]
    assert (home / ".bashrc").read_text().count("# shellagent: ask and shellagent") == 1
    subprocess.run(
        ["runuser", "-l", new_user, "-c", "shellagent daemon stop"],
        capture_output=True,
        timeout=60,
    )
