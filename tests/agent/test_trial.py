"""A writer tried on an overlay copy (``OverlayTrial``, review 3's M2 and L4): nobody approved
what it runs, so it gets a small disk cap held while it runs, no Unix sockets, and its
folder in /var/tmp is removed afterwards, for an ordinary user too (overlayfs leaves
``work/work`` mode 000); ``sweep`` removes what a killed process left, only this user's and
only what no trial holds. As root and as the unprivileged user ``nobody``."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shellagent.agent.trial import PREFIX, sweep
from tests.unprivileged import (
    NOBODY,
    SYSTEM_PYTHON,
    give_to_nobody,
    make_traversable,
    nobody_home,
    run_as_nobody,
)

MiB = 1 << 20

# Runs in its own process (as root, or as nobody): each command tried by an OverlayTrial
# whose folders go to ``scratch``; what came back and what is left in ``scratch``.
PROBE = r"""
import json, os, sys
from pathlib import Path
from shellagent.agent.trial import OverlayTrial
spec = json.loads(sys.argv[1])
trial = OverlayTrial(scratch=Path(spec["scratch"]))
out = []
for command in spec["commands"]:
    r = trial(command, spec["cwd"], 60)
    out.append(None if r is None else {"exit_code": r.exit_code, "output": r.output,
                                       "changed": list(getattr(r, "changed", ()))})
print(json.dumps({"results": out, "left": sorted(os.listdir(spec["scratch"]))}))
"""

WRITE_MORE = "for i in $(seq 40); do head -c 4M /dev/zero > f$i || exit 9; done; echo all-written"
UNIX = "python3 -c 'import socket; socket.socket(socket.AF_UNIX)' && echo opened"


@pytest.fixture(params=["root", "nobody"])
def tried(request: pytest.FixtureRequest, outside_tmp: Path) -> Iterator[Any]:
    """``tried(commands)``: what ``PROBE`` reports, run as root or as nobody, with a 32 MiB
    session cap (so the trial's is 32 MiB too) and a scratch folder of its own."""
    env_extra = {"SHELLAGENT_CHANGES_CAP_GB": str(32 / 1024)}
    if request.param == "root":
        cwd = outside_tmp / "home" / "work"
        cwd.mkdir(parents=True)
        scratch = outside_tmp / "scratch"
        scratch.mkdir()
        env = {
            **os.environ,
            **env_extra,
            "HOME": str(outside_tmp / "home"),
            "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        }

        def run_one(spec: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-c", PROBE, spec], capture_output=True, text=True, env=env
            )
    else:
        # not under pytest's temporary root, which another pytest session makes 0700
        place = nobody_home(Path(tempfile.mkdtemp(prefix="sa-nobody-", dir="/var/tmp")))
        cwd = place.work
        scratch = place.home.parent / "scratch"
        scratch.mkdir()
        give_to_nobody(scratch)

        def run_one(spec: str) -> subprocess.CompletedProcess[str]:
            return run_as_nobody(
                [SYSTEM_PYTHON, "-c", PROBE, spec], place.env(**env_extra), cwd=cwd
            )

    (cwd / "notes.txt").write_text("notes\n")
    if request.param == "nobody":
        give_to_nobody(cwd)

    def run(commands: list[str]) -> dict[str, Any]:
        spec = json.dumps({"scratch": str(scratch), "cwd": str(cwd), "commands": commands})
        proc = run_one(spec)
        assert proc.returncode == 0, proc.stderr[-3000:]
        result: dict[str, Any] = json.loads(proc.stdout)
        return result

    run.cwd = cwd  # type: ignore[attr-defined]
    yield run
    if request.param == "nobody":
        subprocess.run(["rm", "-rf", str(place.home.parent)], check=False)


def test_a_trial_that_writes_past_its_cap_is_stopped_and_counts_as_untried(tried: Any) -> None:
    report = tried([WRITE_MORE, "cp notes.txt copy.txt && echo copied"])
    too_big, small = report["results"]
    assert too_big is None  # stopped by the cap: as a writer that could not be tried
    assert small["exit_code"] == 0 and small["output"] == "copied\n"  # the next is not affected
    assert not (tried.cwd / "copy.txt").exists() and not list(tried.cwd.glob("f*"))
    assert report["left"] == []  # every trial folder is gone, work/work included


def test_two_commands_that_make_the_same_change_on_the_copy_say_the_same_changes(
    tried: Any,
) -> None:
    report = tried(
        [
            "mkdir -p old && mv notes.txt old/",
            "mkdir old; find . -maxdepth 1 -name '*.txt' -exec mv -t old -- {} +",
            "mkdir -p old && cp notes.txt old/",  # the same new file, but notes.txt stays
            "true",
        ]
    )
    moved, found_and_moved, copied, nothing = (r["changed"] for r in report["results"])
    assert moved == found_and_moved
    assert any(line.startswith("file:old/notes.txt:6:") for line in moved)
    assert "deleted:notes.txt" in moved and "deleted:notes.txt" not in copied
    assert nothing == []
    assert not (tried.cwd / "old").exists()


def test_a_trial_cannot_open_a_unix_socket(tried: Any, outside_tmp: Path) -> None:
    place = outside_tmp / "srv"
    place.mkdir()
    make_traversable(place)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(place / "app.sock"))
    os.chmod(place / "app.sock", 0o777)
    server.listen()
    server.settimeout(0.5)
    reach = (
        "python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); "
        f's.connect("{place / "app.sock"}"); print("CONNECTED")\''
    )
    try:
        report = tried([UNIX, reach, "echo fine > x && cat x"])
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()
    opened, reached, fine = report["results"]
    assert "opened" not in opened["output"] and "Permission denied" in opened["output"]
    assert "CONNECTED" not in reached["output"]
    assert (fine["exit_code"], fine["output"]) == (0, "fine\n")  # positive control: it ran


def test_sweep_removes_only_this_users_unheld_trial_folders(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    # a leftover of a killed trial, with overlayfs's unreadable work/work
    left = scratch / f"{PREFIX}left"
    (left / "work" / "work").mkdir(parents=True)
    (left / "upper").mkdir()
    (left / "upper" / "f").write_text("x")
    (left / "work" / "work").chmod(0)
    held = scratch / f"{PREFIX}held"
    held.mkdir()
    lock = os.open(held, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(lock, fcntl.LOCK_EX)  # a trial running in another process
    foreign = scratch / f"{PREFIX}foreign"
    foreign.mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir()
    (scratch / f"{PREFIX}link").symlink_to(target)
    other = scratch / "unrelated"
    other.mkdir()
    if os.getuid() == 0:
        os.chown(foreign, NOBODY, NOBODY)
    try:
        removed = sweep(scratch)
    finally:
        os.close(lock)
    assert removed == [left] and not left.exists()
    assert held.exists() and other.exists() and target.exists()
    assert foreign.exists() == (os.getuid() == 0)  # another user's stays


def test_an_unprivileged_users_sweep_leaves_roots_folders(tmp_path: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("switches to the unprivileged user nobody")
    place = nobody_home(Path(tempfile.mkdtemp(prefix="sa-nobody-", dir="/var/tmp")))
    try:
        scratch = place.home.parent / "scratch"
        scratch.mkdir(mode=0o777)
        scratch.chmod(0o1777)
        roots = scratch / f"{PREFIX}roots"
        roots.mkdir()
        mine = scratch / f"{PREFIX}mine"
        (mine / "work" / "work").mkdir(parents=True)
        give_to_nobody(mine)
        (mine / "work" / "work").chmod(0)
        code = (
            "import sys; from pathlib import Path; from shellagent.agent.trial import sweep; "
            "print([p.name for p in sweep(Path(sys.argv[1]))])"
        )
        proc = run_as_nobody([SYSTEM_PYTHON, "-c", code, str(scratch)], place.env())
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == f"['{PREFIX}mine']"
        assert roots.exists() and not mine.exists()
    finally:
        subprocess.run(["rm", "-rf", str(place.home.parent)], check=False)
