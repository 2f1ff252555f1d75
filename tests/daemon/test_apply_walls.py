"""Review 2's apply findings through a real daemon, with a scratch home: ``ask -y --apply``
never lands a place that runs code later (H1), ``shellagent apply`` refuses a session a
follow-up still works on (H3), a session that fills its upper layers stops (M9); review 3's
H2 rows (caches, install trees, ``~/node_modules``, ``~/*.py``) the same way; as root and as
the unprivileged user ``nobody``."""

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


MAKE = (
    'python3 -c \'import os,sys; p=os.path.join(os.path.expanduser("~"), sys.argv[1]); '
    "os.makedirs(os.path.dirname(p), exist_ok=True); "
    'os.symlink(os.path.expanduser("~/work"), p) if sys.argv[2] == "link" else '
    'open(p, "a").write("payload"); '
    'sys.argv[2] == "exec" and os.chmod(p, 0o755)\' '
)


def make_rows(rows: tuple[tuple[str, str], ...]) -> list[str]:
    """One approved interpreter command per H2 row (a file, an executable or a symlink),
    then an ordinary write."""
    return [cmd(f"{MAKE}{rel} {how}") for rel, how in rows] + [cmd("echo ok > ok.txt")]


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
    _refused_or_kept(run.of(ChangesDone)[0])
    session = run.summary.session
    assert main(["apply", session]) == 1  # what -y would apply: refused, nothing named
    assert not any((scratch_home / p).exists() for p in PLACES)
    assert not (work / "ok.txt").exists()  # all or nothing
    # named one by one they land; -y never does it
    assert (
        main(["apply", session, *(a for p in PLACES for a in ("--include", str(scratch_home / p)))])
        == 0
    )
    assert all((scratch_home / p).read_text() == "payload" for p in PLACES)


def test_ask_yes_apply_never_lands_a_code_running_tree(
    home_daemon: DaemonProc, scratch_home: Path, script: Callable[..., str]
) -> None:
    """Review 3's H2 table and its kin: each row is held back (or read-only in the sandbox),
    each on its own, not only the change set as a whole."""
    from shellagent.transaction import Workspace, compute
    from shellagent.transaction.apply import held_back
    from tests.transaction.code_trees import H2_KIN, H2_ROWS, make_home

    make_home(scratch_home)
    rows = (*H2_ROWS, *H2_KIN)
    before = {rel: _state(scratch_home / rel) for rel, _ in rows}
    work = scratch_home / "work"
    run = ask_inprocess("set up my tools", script(*make_rows(rows), done("set up")), work,
                        yes=True, apply=True, max_turns=len(rows) + 5)  # fmt: skip
    _refused_or_kept(run.of(ChangesDone)[0])
    assert main(["apply", run.summary.session]) == 1  # what -y would apply: refused
    assert {rel: _state(scratch_home / rel) for rel, _ in rows} == before
    assert not (work / "ok.txt").exists()
    changes = compute(Workspace.open(run.summary.session))
    made = {c.path for c in changes}
    held = {r.path for r in held_back(changes)}
    real = Path(os.path.realpath(scratch_home))
    for rel, _ in rows:
        if real / rel in made:
            assert real / rel in held, rel
        else:  # read-only in the sandbox: an install tree or a PATH folder that exists
            assert rel.split("/")[0] in ("miniconda3", "perl5", "google-cloud-sdk", "tools"), rel


def _refused_or_kept(result: ChangesDone) -> None:
    """What ``-y --apply`` does with a change set that holds back a change: refuses it,
    naming ``--include``; or, since a result the model wrote itself is never claimed, keeps
    it unapplied (``shellagent apply SESSION`` is then the apply, refused the same way)."""
    assert result.outcome in ("refused", "kept"), result
    if result.outcome == "refused":
        assert "--include" in result.message, result


def _state(path: Path) -> tuple[str, str] | None:
    if path.is_symlink():
        return ("link", os.readlink(path))
    return ("file", path.read_text()) if path.is_file() else None


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


def _ask_as_nobody(
    root: Path, replies: list[str], before: Callable[[Path], None] | None = None
) -> tuple[Path, list[dict[str, object]], str]:
    """``ask -y --apply`` through a daemon both run as nobody, in ``root/home/work``
    (``before`` fills the home first); the home, the client's events, the daemon's log."""
    from tests.unprivileged import NOBODY, make_traversable

    home = root / "home"
    (home / "work").mkdir(parents=True)
    if before is not None:
        before(home)
    model = root / "model.json"
    model.write_text(json.dumps([*replies, done("set up")]))
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "SHELL": "/bin/bash",  # nobody's login shell is nologin
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    for d in ("state", "cache", "workspaces", "config", "data", "runtime"):
        (root / d).mkdir()
        env[f"SHELLAGENT_{d.upper()}_DIR"] = str(root / d)
    (root / "config" / "config.toml").write_text(
        '[ask]\nconfirm = false\nrecipes = "off"\nmax_turns = 60\n'
    )
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
            cwd=home / "work", env=env, capture_output=True, text=True, timeout=300,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        daemon.terminate()
        _, err = daemon.communicate(timeout=30)
    events = [json.loads(line) for line in ask.stdout.splitlines() if line.startswith("{")]
    log = f"{ask.stdout}\n{ask.stderr}\n{err.decode(errors='replace')}"
    sessions = [e["session"] for e in events if e["type"] == "summary"]
    if sessions:  # what -y would apply, when it kept the change set instead
        applied = subprocess.run(
            [*as_nobody, "-m", "shellagent", "apply", sessions[0]],
            cwd=home / "work", env=env, capture_output=True, text=True, timeout=120,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        log += f"\napply: {applied.returncode} {applied.stderr}"
        events.append({"type": "apply", "exit_code": applied.returncode})
    return home, events, log


def _srv_root(request: pytest.FixtureRequest) -> Path:
    """A scratch root nobody can reach: not under pytest's /tmp/pytest-of-root, which a
    concurrent pytest run closes (0700) meanwhile, nor under /tmp or /var/tmp, which the
    sandbox replaces."""
    import shutil
    import uuid

    root = Path("/srv") / f"shellagent-test-{uuid.uuid4().hex[:8]}"
    root.mkdir(mode=0o755)
    request.addfinalizer(lambda: shutil.rmtree(root, ignore_errors=True))
    return root


@pytest.mark.skipif(
    os.getuid() != 0 or not os.path.isdir("/srv"), reason="switches to the user nobody"
)
def test_ask_yes_apply_never_lands_a_startup_place_for_an_unprivileged_user(
    request: pytest.FixtureRequest,
) -> None:
    root = _srv_root(request)
    home, events, log = _ask_as_nobody(root, write_places(PLACES))
    finished = [e for e in events if e["type"] == "changes_done"]
    assert finished and finished[0]["outcome"] in ("refused", "kept"), log
    assert [e["exit_code"] for e in events if e["type"] == "apply"] == [1], log
    assert "name them" in log.split("\napply: ", 1)[1], log
    assert not any((home / p).exists() for p in PLACES)
    assert not (home / "work" / "ok.txt").exists()


@pytest.mark.skipif(
    os.getuid() != 0 or not os.path.isdir("/srv"), reason="switches to the user nobody"
)
def test_ask_yes_apply_never_lands_a_code_running_tree_for_an_unprivileged_user(
    request: pytest.FixtureRequest,
) -> None:
    from tests.transaction.code_trees import H2_KIN, H2_ROWS, make_home

    root = _srv_root(request)
    rows = (*H2_ROWS, *H2_KIN)
    home, events, log = _ask_as_nobody(root, make_rows(rows), before=make_home)
    finished = [e for e in events if e["type"] == "changes_done"]
    assert finished and finished[0]["outcome"] in ("refused", "kept"), log
    assert [e["exit_code"] for e in events if e["type"] == "apply"] == [1], log
    assert "name them" in log.split("\napply: ", 1)[1], log
    ran = [e for e in events if e["type"] == "result"]
    assert len(ran) == len(rows) + 1, log  # every row was written (or refused by the kernel)
    for rel, _ in rows:
        path = home / rel
        assert not (path.is_symlink() or (path.is_file() and "payload" in path.read_text())), rel
    assert not (home / "work" / "ok.txt").exists()
