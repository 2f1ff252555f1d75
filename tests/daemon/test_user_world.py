"""An ordinary user's world, through the real daemon and ``ask`` run as the unprivileged user
``nobody``: applied files get the user's umask (the daemon's own 077 stays on its socket and
state), and the model is told what it can write (home and the working directory, as copies)
and what ``/tmp`` is."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon.conftest import cmd, done

NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"
ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.getuid() != 0, reason="switches to the unprivileged user nobody"),
    pytest.mark.skipif(
        not Path(SYSTEM_PYTHON).exists() or shutil.which("setpriv") is None,
        reason=f"needs {SYSTEM_PYTHON} and setpriv",
    ),
]


@pytest.fixture
def nobody_root() -> Iterator[Path]:
    # not under /tmp: every sandbox has its own /tmp, so a home there would be invisible
    root = Path(tempfile.mkdtemp(prefix="sa-nobody-", dir="/var/tmp"))
    os.chmod(root, 0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _site() -> str:
    """The checkout, then the packages it needs, readable by anyone (no copy needed)."""
    import pydantic

    packages = Path(pydantic.__file__).parents[1]
    if sys.version_info[:2] != tuple(
        int(x)
        for x in subprocess.run(
            [SYSTEM_PYTHON, "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    ):
        pytest.skip("the system Python cannot load this environment's compiled packages")
    return f"{ROOT}:{packages}"


def as_nobody(root: Path, script: str, *, cwd: Path, timeout: float = 120) -> str:
    env = {
        "HOME": str(root / "home"),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": _site(),
        "LANG": "C.UTF-8",
        **{
            f"SHELLAGENT_{n}_DIR": str(root / "sa" / n.lower())
            for n in ("CONFIG", "DATA", "STATE", "CACHE")
        },
        "SHELLAGENT_RUNTIME_DIR": str(root / "sa" / "run"),
        "SHELLAGENT_WORKSPACES_DIR": str(root / "sa" / "workspaces"),
    }
    proc = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "sh", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def test_an_applied_file_has_the_user_s_umask_and_the_model_is_told_its_world(
    nobody_root: Path,
) -> None:
    home = nobody_root / "home"
    work = home / "project"
    work.mkdir(parents=True)
    (nobody_root / "sa").mkdir()
    (nobody_root / "sa" / "config").mkdir()
    (nobody_root / "sa" / "config" / "config.toml").write_text(
        '[ask]\nconfirm = false\nrecipes = "off"\n'
    )
    model = nobody_root / "model.json"
    model.write_text(
        json.dumps([cmd("echo hello > note.txt && mkdir -p sub"), done("Wrote note.txt")])
    )
    subprocess.run(
        ["chown", "-R", f"{NOBODY}:{NOBODY}", str(home), str(nobody_root / "sa")], check=True
    )
    py = SYSTEM_PYTHON
    out = as_nobody(
        nobody_root,
        f"umask 022; export SHELLAGENT_BACKEND=scripted:{model}; "
        f"{py} -m shellagent.cli.ask -y --apply 'write hello into note.txt'; "
        f"{py} -m shellagent daemon stop >/dev/null 2>&1; true",
        cwd=work,
    )
    assert "applied 2 changes" in out, out
    note, sub = work / "note.txt", work / "sub"
    assert stat.S_IMODE(note.stat().st_mode) == 0o644, oct(note.stat().st_mode)
    assert stat.S_IMODE(sub.stat().st_mode) == 0o755
    assert note.stat().st_uid == NOBODY
    # the daemon's own places stay private whatever the user's umask
    state = nobody_root / "sa" / "state"
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((nobody_root / "sa" / "run").stat().st_mode) == 0o700

    transcripts = list((nobody_root / "sa" / "data" / "transcripts").glob("*.jsonl"))
    events = [json.loads(line) for line in transcripts[0].read_text().splitlines()]
    system = next(e["content"] for e in events if e.get("role") == "system")
    # the working directory is inside the home overlay: home covers both
    assert f"You can write: {home} (the user reviews every change" in system
    assert "/tmp (private, thrown away at the end" in system
    assert "only /tmp" not in system


def test_doctor_says_why_the_ephemeral_profile_is_slow_the_first_time_for_a_user() -> None:
    # The home is under /home, as an ordinary user's is (its cache holds the snapshot).
    root = Path(tempfile.mkdtemp(prefix="sa-doctor-", dir="/home"))
    try:
        os.chmod(root, 0o755)
        (root / "home").mkdir()
        (root / "sa").mkdir()
        subprocess.run(
            ["chown", "-R", f"{NOBODY}:{NOBODY}", str(root / "home"), str(root / "sa")], check=True
        )
        py = SYSTEM_PYTHON
        out = as_nobody(
            root,
            f"for i in 1 2; do {py} -m shellagent doctor --json; done; true",
            cwd=root / "home",
            timeout=300,
        )
        first, second = (json.loads(part) for part in _json_objects(out))
        eph = [
            next(c for c in d["checks"] if c["name"] == "profile ephemeral")
            for d in (first, second)
        ]
        assert eph[0]["ok"] and "built this user's copy of /etc and /var" in eph[0]["detail"]
        assert eph[1]["ok"] and "built" not in eph[1]["detail"] and " ms)" in eph[1]["detail"]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _json_objects(text: str) -> list[str]:
    """The top-level JSON objects printed one after another (``doctor --json`` twice)."""
    parts, depth, start = [], 0, None
    for i, ch in enumerate(text):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0 and start is not None:
                parts.append(text[start : i + 1])
    return parts
