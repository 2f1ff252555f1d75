"""Review 2's apply findings through a real daemon, with a scratch home: ``ask -y --apply``
never lands a place that runs code later (H1), ``shellagent apply`` refuses a session a
follow-up still works on (H3), a session that fills its upper layers stops (M9); as root
and as the unprivileged user ``nobody``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shellagent.cli.main import main
from shellagent.events import ChangesDone, Summary
from tests.daemon.conftest import (
    DaemonProc,
    Run,
    ask_inprocess,
    cmd,
    done,
    processes_matching,
    start_daemon,
    stop,
)

PLACES = (
    ".bash_aliases",
    ".bashrc.d/zz.sh",
    ".local/lib/python3.11/site-packages/zz.pth",
    ".local/share/systemd/user/zz.service",
    ".config/autostart/x.desktop",
    ".ipython/profile_default/startup/00.py",
    ".cargo/config.toml",
    ".config/pip/pip.conf",
    ".vimrc",
)


WRITE = (
    'python3 -c \'import os,sys; p=os.path.join(os.path.expanduser("~"), sys.argv[1]); '
    'os.makedirs(os.path.dirname(p), exist_ok=True); open(p, "a").write("payload")\' '
)


def write_places(places: tuple[str, ...]) -> list[str]:
    """One approved interpreter command per place (as review 2 did: the policy denies a
    plain redirection there), then an ordinary write."""
    return [cmd(WRITE + p) for p in places] + [cmd("echo ok > ok.txt")]


@pytest.fixture
def scratch_home(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = outside_tmp / "home"
    (home / "work").mkdir(parents=True)
    (home / ".bashrc").write_text("# bashrc\n")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def home_daemon(scratch_home: Path) -> Iterator[DaemonProc]:
    d = start_daemon()
    yield d
    stop(d)


def test_ask_yes_apply_never_lands_a_startup_place(
    home_daemon: DaemonProc, scratch_home: Path, script: Callable[..., str]
) -> None:
    work = scratch_home / "work"
    model = script(*write_places(PLACES), done("set up"))
    run = ask_inprocess("set up my tools", model, work, yes=True, apply=True)
    assert run.of(ChangesDone), run.out
    result = run.of(ChangesDone)[0]
    assert result.outcome == "refused", result
    assert "--include" in result.message
    assert not any((scratch_home / p).exists() for p in PLACES)
    assert not (work / "ok.txt").exists()  # all or nothing
    session = run.summary.session
    # named one by one they land; -y never does it
    assert (
        main(["apply", session, *(a for p in PLACES for a in ("--include", str(scratch_home / p)))])
        == 0
    )
    assert all((scratch_home / p).read_text() == "payload" for p in PLACES)


def test_apply_refuses_a_session_a_follow_up_is_still_using(
    home_daemon: DaemonProc,
    scratch_home: Path,
    script: Callable[..., str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    work = scratch_home / "work"
    (work / "a.txt").write_text("original\n")
    first = ask_inprocess(
        "change a", script(cmd("echo changed-by-S1 > a.txt"), done("x")), work, yes=True
    )
    assert first.of(ChangesDone)[0].outcome == "kept"
    s1 = first.summary.session
    later: list[Run] = []
    follow = script(cmd("cat a.txt; sleep 4.321; echo LATE-WRITE >> a.txt"), done("x"))
    thread = threading.Thread(
        target=lambda: later.append(ask_inprocess("go on", follow, work, yes=True, continues=s1))
    )
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not processes_matching("sleep 4.321") and time.monotonic() < deadline:
            time.sleep(0.05)  # until the follow-up's sandbox runs its sleep
        assert processes_matching("sleep 4.321"), "the follow-up never started"
        assert main(["apply", s1]) == 1
        assert "in use" in capsys.readouterr().err
    finally:
        thread.join(60)
    assert (work / "a.txt").read_text() == "original\n"  # nothing landed behind its back
    assert later and later[0].of(ChangesDone)[0].outcome == "kept"
    assert main(["apply", s1]) == 0  # free now: what it shows is what lands
    assert (work / "a.txt").read_text() == "changed-by-S1\nLATE-WRITE\n"


def test_a_session_whose_changes_pass_the_cap_stops(
    scratch_home: Path, script: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELLAGENT_CHANGES_CAP_GB", "0.002")
    d = start_daemon()
    try:
        model = script(
            cmd("head -c 4000000 /dev/zero > big.bin"), cmd("echo second > s.txt"), done("x")
        )
        run = ask_inprocess("fill", model, scratch_home / "work", yes=True)
    finally:
        stop(d)
    summary = run.of(Summary)[0]
    assert summary.commands == ("head -c 4000000 /dev/zero > big.bin",)
    assert "more than" in run.out or any("more than" in str(e) for e in run.events)
    assert run.of(ChangesDone)[0].outcome == "kept"


@pytest.mark.skipif(os.getuid() != 0, reason="switches to the unprivileged user nobody")
def test_ask_yes_apply_never_lands_a_startup_place_for_an_unprivileged_user(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from tests.unprivileged import NOBODY, make_traversable

    root = tmp_path_factory.mktemp("daemon-nobody")
    home = root / "home"
    (home / "work").mkdir(parents=True)
    model = root / "model.json"
    model.write_text(json.dumps([*write_places(PLACES), done("set up")]))
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    for d in ("state", "cache", "workspaces", "config", "data", "runtime"):
        (root / d).mkdir()
        env[f"SHELLAGENT_{d.upper()}_DIR"] = str(root / d)
    (root / "config" / "config.toml").write_text('[ask]\nconfirm = false\nrecipes = "off"\n')
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(root)], check=True)
    make_traversable(root)
    python = sys.executable
    probe = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", python,
         "-c", "import pydantic, shellagent"], env=env, capture_output=True,
    )  # fmt: skip
    if probe.returncode != 0:
        pytest.skip("the test interpreter is not readable by nobody")
    as_nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", python]
    daemon = subprocess.Popen(
        [*as_nobody, "-m", "shellagent", "daemon", "run", "--quiet"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not (root / "runtime" / "daemon.sock").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # listening, not only bound
        ask = subprocess.run(
            [*as_nobody, "-m", "shellagent.cli.ask", "-y", "--apply", "--json",
             "--model", f"scripted:{model}", "set up my tools"],
            cwd=home / "work", env=env, capture_output=True, text=True, timeout=180,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        daemon.terminate()
        _, err = daemon.communicate(timeout=30)
    events = [json.loads(line) for line in ask.stdout.splitlines() if line.startswith("{")]
    finished = [e for e in events if e["type"] == "changes_done"]
    assert finished and finished[0]["outcome"] == "refused", (ask.stdout, ask.stderr, err)
    assert not any((home / p).exists() for p in PLACES)
    assert not (home / "work" / "ok.txt").exists()
