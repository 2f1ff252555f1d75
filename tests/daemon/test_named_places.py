"""Issue 40, items 6 and 7: ``chmod +x ~/bin/cleanup.sh``, asked for by name, is no longer
denied outright. A change to a protected place the request names is approved only with its
own key at the prompt (never by ``-y``), runs on the copy, and lands only through
``shellagent apply SESSION --include PATH``; a protected place the request does not name
stays denied. Through the real daemon, as root; the sandbox and apply part as ``nobody``
too."""

from __future__ import annotations

import json
import os
import stat
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shellagent.cli.main import main
from shellagent.events import ApprovalNeeded, ChangesDone, Decided
from tests.daemon.conftest import (
    DaemonProc,
    ask_inprocess,
    cmd,
    done,
    start_daemon,
    stop,
    transcript_events,
)

TASK = "make my cleanup script executable: chmod +x ~/bin/cleanup.sh"


@pytest.fixture
def named_home(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = outside_tmp / "home"
    (home / "work").mkdir(parents=True)
    (home / "bin").mkdir()
    (home / "bin" / "cleanup.sh").write_text("#!/bin/sh\nrm -f ~/work/*.tmp\n")
    (home / "bin" / "cleanup.sh").chmod(0o644)
    (home / ".bashrc").write_text("# bashrc\n")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def daemon(named_home: Path) -> Iterator[DaemonProc]:
    d = start_daemon()
    yield d
    stop(d)


def _verdicts(session: str) -> list[str]:
    return [e["decision"] for e in transcript_events(session) if e["type"] == "policy"]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_named_protected_place_is_approved_with_its_own_key_and_lands_only_named(
    daemon: DaemonProc, named_home: Path, script: Callable[..., str]
) -> None:
    script_path = named_home / "bin" / "cleanup.sh"
    model = script(cmd("chmod +x ~/bin/cleanup.sh"), done("it is executable"))
    run = ask_inprocess(TASK, model, named_home / "work", keys=["!", "a", "s"])
    asked = run.of(ApprovalNeeded)
    assert asked and asked[0].named == (str(script_path),), asked
    assert [d.decision for d in run.of(Decided)] == ["approve"]
    result = run.of(ChangesDone)[0]
    assert result.outcome == "refused" and "--include" in result.message, result
    assert _mode(script_path) == 0o644  # nothing landed with "apply" alone
    session = run.summary.session
    assert main(["apply", session]) == 1  # still held back unnamed
    assert _mode(script_path) == 0o644
    assert main(["apply", session, "--include", str(script_path)]) == 0
    assert _mode(script_path) == 0o755


def test_yes_never_approves_a_named_protected_place(
    daemon: DaemonProc, named_home: Path, script: Callable[..., str]
) -> None:
    model = script(cmd("chmod +x ~/bin/cleanup.sh"), done("it is executable"))
    run = ask_inprocess(TASK, model, named_home / "work", yes=True, apply=True)
    decided = run.of(Decided)
    assert [d.decision for d in decided] == ["refuse"], decided
    assert "-y never" in (decided[0].reason or "")
    assert not run.of(ChangesDone) or run.of(ChangesDone)[0].outcome in ("none", "kept")
    assert _mode(named_home / "bin" / "cleanup.sh") == 0o644


def test_a_protected_place_the_request_does_not_name_stays_denied(
    daemon: DaemonProc, named_home: Path, script: Callable[..., str]
) -> None:
    model = script(cmd("chmod +x ~/bin/cleanup.sh"), cmd("echo x >> ~/.bashrc"), done("x"))
    run = ask_inprocess("tidy my work folder", model, named_home / "work", keys=["s"])
    assert _verdicts(run.summary.session) == ["deny", "deny"]
    assert not run.of(ApprovalNeeded)
    # named, but the line also writes a place that is not: the whole line stays denied
    model = script(cmd("chmod +x ~/bin/cleanup.sh && echo x >> ~/.bashrc"), done("x"))
    run = ask_inprocess(TASK, model, named_home / "work", keys=["s"])
    assert _verdicts(run.summary.session) == ["deny"]
    assert _mode(named_home / "bin" / "cleanup.sh") == 0o644
    assert (named_home / ".bashrc").read_text() == "# bashrc\n"


NOBODY_SCRIPT = r"""
import dataclasses, json, stat, sys
from pathlib import Path
from shellagent.sandbox import Sandbox, get_profile
from shellagent.transaction import Workspace, compute
from shellagent.transaction.apply import ApplyRefused, apply
home = Path(sys.argv[1])
target = home / "bin" / "cleanup.sh"
out = {}
for named in (False, True):
    places = tuple(Path(p) for p in json.loads(sys.argv[2])) if named else ()
    ws = Workspace.create(f"named-{named}", [home], workdir=home / "work")
    profile = dataclasses.replace(get_profile("default", cwd=home / "work"), writable=(),
                                  overlays=ws.overlays(places))
    with Sandbox(profile, timeout=20) as s:
        ran = s.run("chmod +x ~/bin/cleanup.sh").exit_code
    out[f"ran-{named}"] = ran
    if ran:
        continue
    changes = compute(ws)
    try:
        apply(ws, changes)
        out["unnamed"] = "applied"
    except ApplyRefused:
        out["unnamed"] = "refused"
    apply(ws, changes, include=[target])
    out["mode"] = stat.S_IMODE(target.stat().st_mode)
print(json.dumps(out))
"""


@pytest.mark.skipif(
    os.getuid() != 0 or not os.path.isdir("/srv"), reason="switches to the user nobody"
)
def test_a_named_place_is_writable_on_the_copy_and_lands_only_named_for_nobody(
    request: pytest.FixtureRequest,
) -> None:
    import shutil

    from tests.unprivileged import (
        SYSTEM_PYTHON,
        give_to_nobody,
        nobody_dirs,
        nobody_site,
        run_as_nobody,
    )

    root = Path("/srv") / f"shellagent-test-{uuid.uuid4().hex[:8]}"
    root.mkdir(mode=0o755)
    request.addfinalizer(lambda: shutil.rmtree(root, ignore_errors=True))
    site = nobody_site(root)
    home = root / "home"
    (home / "work").mkdir(parents=True)
    (home / "bin").mkdir()
    (home / "bin" / "cleanup.sh").write_text("#!/bin/sh\n")
    (home / "bin" / "cleanup.sh").chmod(0o644)
    give_to_nobody(home)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(site)}
    env |= nobody_dirs(root, ("state", "cache", "workspaces", "config", "data"))
    from shellagent.transaction.named import named_places

    places = named_places(TASK, home / "work", home)  # what the daemon would find
    assert places == (home.resolve() / "bin" / "cleanup.sh",)
    argv = [str(home), json.dumps([str(p) for p in places])]
    proc = run_as_nobody([SYSTEM_PYTHON, "-c", NOBODY_SCRIPT, *argv], env, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["ran-False"] != 0  # unnamed: ~/bin is read-only on the copy
    assert out == {
        "ran-False": out["ran-False"],
        "ran-True": 0,
        "unnamed": "refused",
        "mode": 0o755,
    }
