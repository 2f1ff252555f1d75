"""Review 2, M2, as an unprivileged user: the value a command leaves in a sandbox that
``nobody`` runs reaches the host's policy as data, which then refuses to evaluate it."""

from __future__ import annotations

import base64

import pytest

from shellagent.agent.session import _carried_from_dump
from shellagent.policy import PolicyEngine, ShellState
from tests.unprivileged import SYSTEM_PYTHON, nobody_home, run_as_nobody

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
    place = nobody_home(tmp_path_factory.mktemp("nobody"), {"VERSION": PAYLOAD + "\n"})
    home, work = place.home, place.work
    proc = run_as_nobody([SYSTEM_PYTHON, "-c", PROBE], place.env(), cwd=work)
    assert proc.returncode == 0, proc.stderr
    carried = _carried_from_dump(base64.b64decode(proc.stdout.strip()))
    assert carried is not None and carried.values["v"] == (PAYLOAD,)
    engine = PolicyEngine.load(workspace=work, home=home)
    state = ShellState(cwd=work, carried=carried)
    assert engine.check('echo "build-$((v+1))"', state).decision == "deny"
    assert engine.check('echo "build-$((n+1))"', state).decision == "allow"
    assert not (work / "pwned_carried").exists()
