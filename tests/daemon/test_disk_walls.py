"""The disk through a real daemon (review 2's M9 and review 3's residual; issue 40's
leftovers): one approved command cannot fill the disk through the session's upper layer
(the cap holds while it runs, and the task stops after it), and what killed processes
left in /var/tmp is swept when the daemon starts and stops, only this user's. As root and
as the unprivileged user ``nobody``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.events import ChangesDone, Summary
from shellagent.sandbox.diskcap import stored_bytes
from tests.daemon.conftest import ask_inprocess, cmd, done, start_daemon, stop, transcript_events
from tests.unprivileged import NOBODY, make_traversable

MiB = 1 << 20
CAP_GB = str(64 / 1024)  # 64 MiB
OVERSHOOT = 96 * MiB
FILL = "for i in $(seq 100); do head -c 8M /dev/zero > fill$i || exit 9; done; echo wrote-all"


def test_one_approved_command_cannot_fill_the_disk_through_the_upper_layer(
    outside_tmp: Path, script: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = outside_tmp / "home"
    (home / "work").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SHELLAGENT_CHANGES_CAP_GB", CAP_GB)
    d = start_daemon()
    try:
        model = script(cmd(FILL), cmd("echo second > s.txt"), done("x"))
        run = ask_inprocess("fill", model, home / "work", yes=True)
    finally:
        stop(d)
    summary = run.of(Summary)[0]
    assert summary.commands == (FILL,)  # the task stopped after the command the cap stopped
    assert run.of(ChangesDone)[0].outcome == "kept"
    executions = [e for e in transcript_events(summary.session) if e["type"] == "execution"]
    seen = executions[0]["output"] + executions[0].get("note", "")  # as the model saw it
    assert "stopped: the session's changes take" in seen, executions[0]
    assert "wrote-all" not in seen
    root = Path(os.environ["SHELLAGENT_WORKSPACES_DIR"]) / summary.session
    assert stored_bytes([root]) <= 64 * MiB + OVERSHOOT


@pytest.mark.skipif(os.getuid() != 0, reason="switches to the unprivileged user nobody")
def test_the_cap_and_the_sweeps_hold_for_an_unprivileged_users_daemon() -> None:
    default_root = Path(f"/var/tmp/shellagent-{NOBODY}")
    shared = default_root.exists()  # another run of nobody's keeps changes there
    # not under pytest's temporary root, which another pytest session makes 0700
    root = Path(tempfile.mkdtemp(prefix="sa-nobody-", dir="/var/tmp"))
    try:
        _nobody_daemon_run(root, default_root, shared)
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=False)


def _nobody_daemon_run(root: Path, default_root: Path, shared: bool) -> None:
    home = root / "home"
    (home / "work").mkdir(parents=True)
    model = root / "model.json"
    model.write_text(json.dumps([cmd(FILL), cmd("echo second > s.txt"), done("x")]))
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "SHELLAGENT_CHANGES_CAP_GB": CAP_GB,
    }
    for d in ("state", "cache", "config", "data", "runtime"):
        (root / d).mkdir()
        env[f"SHELLAGENT_{d.upper()}_DIR"] = str(root / d)
    (root / "config" / "config.toml").write_text("[ask]\nconfirm = false\n")
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(root)], check=True)
    make_traversable(root)
    python = sys.executable
    as_nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", python]
    if subprocess.run([*as_nobody, "-c", "import pydantic"], env=env).returncode != 0:
        pytest.skip("the test interpreter is not readable by nobody")
    # what a killed trial of nobody's left, and one of root's (never nobody's to remove)
    leftover = Path(tempfile.mkdtemp(prefix="shellagent-trial-", dir="/var/tmp"))
    (leftover / "work" / "work").mkdir(parents=True)
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(leftover)], check=True)
    (leftover / "work" / "work").chmod(0)
    roots = Path(tempfile.mkdtemp(prefix="shellagent-trial-", dir="/var/tmp"))
    daemon = subprocess.Popen(
        [*as_nobody, "-m", "shellagent", "daemon", "run", "--quiet"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not (root / "runtime" / "daemon.sock").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # listening, not only bound
        swept_at_start = not leftover.exists()
        ask = subprocess.run(
            [*as_nobody, "-m", "shellagent.cli.ask", "-y", "--json",
             "--model", f"scripted:{model}", "fill the disk"],
            cwd=home / "work", env=env, capture_output=True, text=True, timeout=180,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        events = [json.loads(line) for line in ask.stdout.splitlines() if line.startswith("{")]
        summary = next(e for e in events if e["type"] == "summary")
        session_dir = default_root / summary["session"]
        stored = stored_bytes([session_dir])
        discard = subprocess.run(
            [*as_nobody, "-m", "shellagent", "apply", summary["session"], "--discard"],
            env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    finally:
        daemon.terminate()
        _, err = daemon.communicate(timeout=30)
        roots.rmdir()
    assert swept_at_start, err
    assert summary["commands"] == [FILL], (ask.stdout, ask.stderr, err)
    assert 0 < stored <= 64 * MiB + OVERSHOOT
    assert discard.returncode == 0, discard.stderr
    assert not session_dir.exists()
    if not shared:  # the directory goes with the last session
        assert not default_root.exists()
