"""Review 2, M2, as an unprivileged user: the value a command leaves in a sandbox that
``nobody`` runs reaches the host's policy as data, which then refuses to evaluate it."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from shellagent.agent.session import _carried_from_dump
from shellagent.policy import PolicyEngine, ShellState
from tests.sandbox.conftest import NOBODY, SYSTEM_PYTHON, _make_traversable, _unprivileged_site

PROBE = r"""
import base64, sys
from pathlib import Path
from shellagent.sandbox import Sandbox, get_profile
with Sandbox(get_profile("default", cwd=Path.cwd()), timeout=5) as session:
    result = session.run("read -r v < VERSION; n=41")
    assert result.exit_code == 0, result
    print(base64.b64encode(session.export_state() or b"").decode())
"""
PAYLOAD = "a[$(touch pwned_carried)]"


def test_a_value_left_in_an_unprivileged_sandbox_is_judged_as_data(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    if os.getuid() != 0:
        pytest.skip("already unprivileged: the daemon tests cover this user")
    if not Path(SYSTEM_PYTHON).exists() or not shutil.which("setpriv"):
        pytest.skip(f"needs {SYSTEM_PYTHON} and setpriv to switch to an unprivileged user")
    root = tmp_path_factory.mktemp("nobody")
    site = _unprivileged_site(root)
    home = root / "home"
    work = home / "work"
    work.mkdir(parents=True)
    (work / "VERSION").write_text(PAYLOAD + "\n")
    for path in (home, work, work / "VERSION"):
        shutil.chown(path, NOBODY, NOBODY)
    _make_traversable(root)
    subprocess.run(["chmod", "-R", "a+rX", str(site)], check=True)
    proc = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        + [SYSTEM_PYTHON, "-c", PROBE],
        capture_output=True,
        text=True,
        env={
            "HOME": str(home),
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(site),
            "SHELLAGENT_CACHE_DIR": str(home / ".cache-sa"),
        },
        cwd=str(work),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    carried = _carried_from_dump(base64.b64decode(proc.stdout.strip()))
    assert carried is not None and carried.values["v"] == (PAYLOAD,)
    engine = PolicyEngine.load(workspace=work, home=home)
    state = ShellState(cwd=work, carried=carried)
    assert engine.check('echo "build-$((v+1))"', state).decision == "deny"
    assert engine.check('echo "build-$((n+1))"', state).decision == "allow"
    assert not (work / "pwned_carried").exists()
