"""Applied copies keep their modification times and modes (issue 40, item 7): a file, a
symlink and a new directory land with the times the session gave them, as root and as the
unprivileged user ``nobody``."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest

from shellagent.transaction import Workspace, compute
from shellagent.transaction.apply import apply

MAKE = (
    "touch -d '2020-01-02 03:04:05' notes/old.txt && echo fresh > new.txt && "
    "mkdir -p tree/inner && echo x > tree/inner/f && touch -d '2019-05-05 05:05:05' "
    "tree/inner/f && touch -h -d '2018-02-02 02:02:02' tree/inner tree && "
    "ln -s new.txt shortcut && touch -h -d '2017-03-03 03:03:03' shortcut && "
    "printf '#!/bin/sh\\n' > run.sh && chmod 750 run.sh && touch -d '2016-04-04' run.sh"
)
PATHS = ("notes/old.txt", "new.txt", "tree", "tree/inner", "tree/inner/f", "shortcut", "run.sh")

# Runs as nobody (and as root in-process): a session in ``work``, its change set applied;
# the upper layer's times and modes before the apply, the real ones after.
SCRIPT = r"""
import dataclasses, json, os, sys
from pathlib import Path
from shellagent.sandbox import Sandbox, get_profile
from shellagent.transaction import Workspace, compute
from shellagent.transaction.apply import apply
work, make, names, session = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
ws = Workspace.create(session, [work], workdir=work)
profile = dataclasses.replace(get_profile("default", cwd=work), writable=(), overlays=ws.overlays())
with Sandbox(profile, timeout=20) as s:
    result = s.run(make)
    assert result.exit_code == 0, result.output
changes = compute(ws)
upper = ws.trees[0].upper
def seen(root):
    out = {}
    for n in names:
        st = os.lstat(root / n)
        out[n] = [st.st_mtime_ns, st.st_mode & 0o7777]
    return out
before = seen(upper)
apply(ws, changes)
print(json.dumps({"upper": before, "real": seen(work)}))
"""


def _run_in_process(work: Path) -> dict[str, dict[str, list[int]]]:
    import contextlib
    import io
    import sys

    out = io.StringIO()
    saved = sys.argv
    sys.argv = ["times", str(work), MAKE, json.dumps(PATHS), f"t-{uuid.uuid4().hex[:8]}"]
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(SCRIPT, "times", "exec"), {"__name__": "times"})
    finally:
        sys.argv = saved
    result: dict[str, dict[str, list[int]]] = json.loads(out.getvalue())
    return result


def _check(seen: dict[str, dict[str, list[int]]]) -> None:
    assert seen["real"] == seen["upper"]  # every time and mode, to the nanosecond
    old = seen["real"]["notes/old.txt"][0]
    assert old // 10**9 < 1_600_000_000  # 2020, not the time of the apply


def test_an_apply_keeps_modification_times_and_modes(home: Path) -> None:
    work = home / "Documents"
    _check(_run_in_process(work))
    assert os.readlink(work / "shortcut") == "new.txt"
    assert (work / "run.sh").stat().st_mode & 0o777 == 0o750


def test_an_undo_puts_back_the_old_files_times(home: Path) -> None:
    from shellagent.transaction.apply import undo

    work = home / "Documents"
    before = (work / "report.md").stat().st_mtime_ns
    ws = Workspace.create(f"t-{uuid.uuid4().hex[:8]}", [work], workdir=work)
    (ws.trees[0].upper / "report.md").write_text("changed\n")
    apply(ws, compute(ws))
    ws.remove()
    assert (work / "report.md").read_text() == "changed\n"
    undo(ws.session)
    assert (work / "report.md").stat().st_mtime_ns == before


@pytest.mark.skipif(
    os.getuid() != 0 or not os.path.isdir("/srv"), reason="switches to the user nobody"
)
def test_an_apply_keeps_times_for_an_unprivileged_user(request: pytest.FixtureRequest) -> None:
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
    (home / "work" / "notes").mkdir(parents=True)
    give_to_nobody(home)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(site)}
    env |= nobody_dirs(root, ("state", "cache", "workspaces", "config", "data"))
    argv = [str(home / "work"), MAKE, json.dumps(PATHS), "nobody-times"]
    proc = run_as_nobody([SYSTEM_PYTHON, "-c", SCRIPT, *argv], env, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    _check(json.loads(proc.stdout))
