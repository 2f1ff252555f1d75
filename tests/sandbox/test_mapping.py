"""Who root is inside a throwaway root run by root (C1, item 1).

With the shifted mapping root inside is host uid ``HOST_BASE``: the kernel treats it as an
unprivileged stranger (it is not exempt from RLIMIT_NPROC, its processes belong to that
uid on the host), while task setups still chown, edit root's files in place and write
below foreign-owned directories, because the lower layers are id-shifted views.
``SHELLAGENT_IDMAP=off`` gives the identity mapping, the control.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from shellagent.sandbox import Sandbox, procs
from shellagent.sandbox.userns import HOST_BASE, SHIFTED_COUNT

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="only root maps a range of ids")

TASK_SETUP = (
    "touch /usr/local/bin/s && chown nobody:nogroup /usr/local/bin/s && "
    "stat -c %U:%G /usr/local/bin/s && echo '10.0.0.1 db' >> /etc/hosts && "
    "tail -1 /etc/hosts && stat -c %U /etc/hosts && mkdir -p /etc/postgresql/14/main && "
    "touch -d '100 days ago' /var/spool/mail/user1 && echo setup-ok"
)
# Forks children that live briefly, with the process rlimit set low inside the command.
NPROC_PROBE = (
    'ulimit -u 24; python3 -c "import os, time\nn = 0\ntry:\n    for _ in range(60):\n'
    "        if os.fork() == 0:\n            time.sleep(1); os._exit(0)\n        n += 1\n"
    "except OSError:\n    print('refused after', n)\nelse:\n    print('all', n)\""
)


def _host_uids(session: Sandbox) -> set[int]:
    """The real uids, as the host sees them, of every process inside the sandbox."""
    assert session.pid is not None
    pidns = procs.child_pidns(session.pid)
    assert pidns is not None
    uids = set()
    for pid, _ in procs.members(pidns):
        status = Path(f"/proc/{pid}/status").read_text()
        uids.add(
            int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
        )
    return uids


def test_root_inside_is_an_unprivileged_host_uid_that_can_still_set_up_tasks() -> None:
    with Sandbox("ephemeral", timeout=20) as s:
        inside = s.run("id -u; cat /proc/self/uid_map")
        assert inside.output.split() == ["0", "0", str(HOST_BASE), str(SHIFTED_COUNT)]
        assert _host_uids(s) == {HOST_BASE}
        setup = s.run(TASK_SETUP)
        assert setup.output == "nobody:nogroup\n10.0.0.1 db\nroot\nsetup-ok\n", setup.output
        assert s.run("stat -c %U:%G /usr/bin/ls /etc/passwd").output == "root:root\nroot:root\n"
    assert "10.0.0.1 db" not in Path("/etc/hosts").read_text()


def test_the_process_limit_binds_root_inside_only_when_it_is_not_host_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with Sandbox("ephemeral", timeout=20) as s:
        shifted = s.run(NPROC_PROBE).output
    monkeypatch.setenv("SHELLAGENT_IDMAP", "off")
    with Sandbox("ephemeral", timeout=20) as s:
        assert s.run("cat /proc/self/uid_map").output.split() == ["0", "0", "4294967295"]
        identity = s.run(NPROC_PROBE).output
        assert s.run(TASK_SETUP).output.endswith("setup-ok\n")  # the control works alike
    assert shifted.startswith("refused after") and int(shifted.split()[-1]) < 24, shifted
    assert identity == "all 60\n", identity  # the kernel exempts host root


def test_no_namespace_handle_reaches_the_sandbox() -> None:
    with Sandbox("ephemeral", timeout=10) as s:
        fds = s.run("ls -l /proc/self/fd /proc/1/fd 2>/dev/null")
    assert "user:[" not in fds.output and "mnt:[" not in fds.output
    assert "/dev/null" in fds.output  # positive control: the listing itself worked


def test_id_shifted_views_are_read_only_and_dropped_with_their_source(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from shellagent.sandbox import idmap

    monkeypatch.setenv("SHELLAGENT_VIEWS_DIR", str(tmp_path / "views"))
    source = Path(tempfile.mkdtemp(prefix="sa-view-src-"))
    try:
        (source / "f").write_text("content\n")
        view = idmap.view(source)
        assert idmap.view(source) == view  # reused, not stacked
        assert (view / "f").read_text() == "content\n"
        assert (view / "f").stat().st_uid == HOST_BASE  # host root's file, shifted
        with pytest.raises(OSError, match="Read-only"):
            (view / "g").write_text("x")
        assert idmap.prune() == []  # the source still exists
    finally:
        shutil.rmtree(source)
    assert idmap.prune() == [view]
    assert not view.exists()


def test_a_test_runs_views_are_detached_by_where_their_source_lies(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from shellagent.sandbox import idmap

    monkeypatch.setenv("SHELLAGENT_VIEWS_DIR", str(tmp_path / "views"))
    kept, dropped = (Path(tempfile.mkdtemp(prefix=f"sa-view-{n}-")) for n in ("kept", "dropped"))
    try:
        views = [idmap.view(source) for source in (kept, dropped)]
        assert idmap.prune(under=dropped) == [views[1]]  # its source still exists
        assert views[0].stat().st_uid == HOST_BASE and not views[1].exists()
        assert idmap.prune(under=kept) == [views[0]]
    finally:
        shutil.rmtree(kept)
        shutil.rmtree(dropped)


@pytest.mark.parametrize(("idmap", "expected"), [("on", "shifted: "), ("off", "identity map")])
def test_doctor_says_who_root_is_inside_a_throwaway_root(idmap: str, expected: str) -> None:
    env = {**os.environ, "SHELLAGENT_IDMAP": idmap}
    proc = subprocess.run(
        [sys.executable, "-m", "shellagent", "doctor", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    check = next(c for c in json.loads(proc.stdout)["checks"] if c["name"] == "ephemeral ids")
    assert check["detail"].startswith(expected), check
    assert bool(check["fix"]) == (idmap == "off")
