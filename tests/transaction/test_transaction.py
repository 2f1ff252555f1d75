"""Transactions on a real sandbox: writes land in an upper layer, the change set is what
they would do, apply lands exactly that (atomically per file) and undo takes it back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.errors import ShellagentError
from shellagent.sandbox import Sandbox
from shellagent.transaction import Workspace, compute
from shellagent.transaction.apply import (
    ApplyRefused,
    Baseline,
    apply,
    interrupted,
    undo,
    undoable,
)
from tests.transaction.conftest import tree

Opener = Callable[[], tuple[Workspace, Sandbox]]


def test_moving_files_into_the_private_tmp_loses_nothing(home: Path, open_session: Opener) -> None:
    before = tree(home)
    ws, s = open_session()
    assert s.run("mv ~/Documents/notes /tmp/rename.txt && ls /tmp").exit_code == 0
    assert s.run("ls ~/Documents/notes").exit_code != 0  # gone, as far as the sandbox sees
    assert tree(home) == before  # ... but nothing real has changed
    changes = compute(ws)
    deleted = {c.path.name for c in changes if c.kind == "deleted"}
    assert {"notes", "a.txt", "b.txt", "c.txt"} <= deleted
    assert any("! DEL" in line and "notes/" in line for line in changes.render())
    ws.reset()  # discard
    assert tree(home) == before and not compute(ws)


def test_the_data_loss_case_applied_shows_as_deletion_and_undo_restores_it(
    home: Path, open_session: Opener
) -> None:
    before = tree(home)
    ws, s = open_session()
    s.run("mv ~/Documents/notes /tmp/rename.txt")
    s.close()
    changes = compute(ws)
    Baseline(ws).note(changes)
    apply(ws, changes)
    assert not (home / "Documents" / "notes").exists()
    ws.release()  # no sandbox or apply holds the session any more
    undo(ws.session)
    assert tree(home) == before


@pytest.mark.parametrize(
    "command",
    [
        "echo new > fresh.txt",
        "echo more >> report.md",
        "rm notes/a.txt",
        "mv notes/b.txt notes/bee.txt",
        "chmod 600 report.md",
        "ln -s notes/c.txt shortcut && ln -sfn notes/a.txt link",
        "ln report.md hard.md",
        "mkdir empty",
        "rm -rf notes && mkdir notes && echo z > notes/z.txt",
        "mkdir -p deep/er/est && echo x > deep/er/est/f && rm ~/Downloads/big.bin",
    ],
)
def test_each_kind_of_change_applies_and_undoes_byte_exactly(
    home: Path, open_session: Opener, command: str
) -> None:
    before = tree(home)
    ws, s = open_session()
    assert s.run(command).exit_code == 0
    seen_inside = s.run("find ~ -path ~/.ssh -prune -o -print | sort").output
    s.close()
    changes = compute(ws)
    assert changes, command
    Baseline(ws).note(changes)
    apply(ws, changes)
    after = tree(home)
    assert after != before
    listed = sorted(str(p) for p in home.rglob("*") if ".ssh" not in p.parts) + [str(home)]
    assert sorted(listed) == sorted(seen_inside.split()), "the real tree is what the sandbox saw"
    assert not compute(ws)  # the upper layers were emptied
    ws.release()  # no sandbox or apply holds the session any more
    undo(ws.session)
    assert tree(home) == before


def test_a_file_changed_on_the_host_mid_session_is_a_conflict(
    home: Path, open_session: Opener
) -> None:
    ws, s = open_session()
    s.run("echo sandbox >> report.md && echo new > other.txt")
    Baseline(ws).note(compute(ws))
    (home / "Documents" / "report.md").write_text("edited by you meanwhile\n")
    before = tree(home)
    with pytest.raises(ApplyRefused, match="changed on your machine"):
        apply(ws, compute(ws))
    assert tree(home) == before  # nothing at all applied, not even other.txt


@pytest.mark.parametrize("command", ["touch .envrc", "echo K=1 > prod.env", "mkdir -p .vscode"])
def test_a_change_set_touching_a_protected_path_is_refused_whole(
    home: Path, open_session: Opener, command: str
) -> None:
    ws, s = open_session()
    s.run(f"{command} && echo fine > fine.txt")
    before = tree(home)
    with pytest.raises(ApplyRefused, match="need you to name them"):
        apply(ws, compute(ws))
    assert tree(home) == before


def test_startup_files_and_keys_stay_read_only_inside_the_overlay(open_session: Opener) -> None:
    ws, s = open_session()
    assert s.run("echo evil >> ~/.bashrc").exit_code != 0
    assert "PRIVATE-KEY" not in s.run("cat ~/.ssh/id_rsa").output
    assert s.run("echo ok > ~/Documents/ok.txt && cat ~/Documents/ok.txt").output == "ok\n"


def test_later_commands_see_earlier_changes_and_the_upper_is_on_disk(
    home: Path, open_session: Opener
) -> None:
    ws, s = open_session()
    s.run("echo one > step.txt")
    assert s.run("cat step.txt").output == "one\n"
    upper = ws.trees[0].upper
    assert (upper / "Documents" / "step.txt").read_text() == "one\n"
    assert not str(upper).startswith(str(home))


N_KILLED = 1500  # more than one batch: the kill lands between two


def test_an_apply_killed_midway_leaves_each_file_old_or_new_and_is_reported(
    home: Path, open_session: Opener
) -> None:
    docs = home / "Documents"
    for i in range(N_KILLED):
        (docs / f"f{i:04}.txt").write_text(f"old {i}\n")
    ws, s = open_session()
    s.run("for f in f*.txt; do echo new >> $f; done")
    s.close()
    Baseline(ws).note(compute(ws))
    ws.release()  # the sandbox is over: the session is free for the apply in the child
    child = subprocess.Popen(
        [sys.executable, "-c", APPLY_IN_CHILD, ws.session],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    record = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and child.poll() is None:
        records = [r for r in undoable() if r.session == ws.session]
        if records and len(records[0].done) > 50:
            record = records[0]
            break
        time.sleep(0.005)
    child.send_signal(signal.SIGKILL)
    child.wait()
    if record is None:
        pytest.skip("the apply finished before it could be interrupted")
    for i in range(N_KILLED):
        text = (docs / f"f{i:04}.txt").read_text()
        assert text in (f"old {i}\n", f"old {i}\nnew\n"), text
    stuck = [r for r in interrupted() if r.session == ws.session]
    assert stuck and 0 < len(stuck[0].done) < N_KILLED
    undo(ws.session)
    assert all((docs / f"f{i:04}.txt").read_text() == f"old {i}\n" for i in range(N_KILLED))


APPLY_IN_CHILD = """
import sys
from shellagent.transaction import Workspace, compute
from shellagent.transaction.apply import apply
ws = Workspace.open(sys.argv[1])
apply(ws, compute(ws))
"""


@pytest.mark.skipif(os.getuid() != 0, reason="mounts a small tmpfs")
def test_a_full_disk_stops_the_apply_with_nothing_half_written(
    outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = outside_tmp / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(small)], check=True)
    try:
        (small / "keep.txt").write_text("keep\n")
        monkeypatch.setenv("HOME", str(small))
        monkeypatch.setenv("SHELLAGENT_WORKSPACES_DIR", str(outside_tmp / "ws"))
        ws = Workspace.create("full", [small])
        upper = ws.trees[0].upper
        (upper / "huge.bin").write_bytes(b"\0" * (2 << 20))
        (upper / "keep.txt").write_text("changed\n")
        changes = compute(ws)
        with pytest.raises(ShellagentError, match="No space left on device"):
            apply(ws, changes)
        assert (small / "keep.txt").read_text() == "keep\n"
        assert not (small / "huge.bin").exists()
        assert not [p for p in small.iterdir() if "shellagent" in p.name]
    finally:
        subprocess.run(["umount", str(small)], check=False)


NOBODY_SCRIPT = """
import dataclasses, json, sys
from pathlib import Path
from shellagent.sandbox import Sandbox, get_profile
from shellagent.transaction import Workspace, compute
from shellagent.transaction.apply import Baseline, apply, undo
home = Path(sys.argv[1])
ws = Workspace.create("nobody-1", [home])
profile = dataclasses.replace(get_profile("default", cwd=home), writable=(),
                              overlays=ws.overlays())
with Sandbox(profile, timeout=10) as s:
    outs = [s.run(c).exit_code for c in (
        "mv notes /tmp/gone && echo new > fresh.txt && echo more >> report.md",
        "rm -rf keep && mkdir keep && echo q > keep/q",
    )]
changes = compute(ws)
kinds = sorted({c.kind for c in changes})
real_before = sorted(p.name for p in home.rglob("*"))
Baseline(ws).note(changes)
apply(ws, changes)
applied = sorted(p.name for p in home.rglob("*"))
ws.release()
undo("nobody-1")
print(json.dumps({"exit": outs, "kinds": kinds, "before": real_before, "applied": applied,
                  "undone": sorted(p.name for p in home.rglob("*"))}))
"""


@pytest.mark.skipif(os.getuid() != 0, reason="switches to the unprivileged user nobody")
def test_transactions_work_for_an_unprivileged_user(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from tests.unprivileged import (
        SYSTEM_PYTHON,
        give_to_nobody,
        nobody_dirs,
        nobody_site,
        run_as_nobody,
    )

    root = tmp_path_factory.mktemp("tx-nobody")
    site = nobody_site(root)
    home = root / "home"
    for rel, text in {"notes/a": "a\n", "report.md": "r\n", "keep/k": "k\n"}.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    give_to_nobody(home)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(site)}
    env |= nobody_dirs(root, ("state", "cache", "workspaces"))
    proc = run_as_nobody([SYSTEM_PYTHON, "-c", NOBODY_SCRIPT, str(home)], env)
    assert proc.returncode == 0, proc.stderr
    result = __import__("json").loads(proc.stdout)
    assert result["exit"] == [0, 0]
    assert {"created", "deleted", "modified"} <= set(result["kinds"])
    assert "fresh.txt" in result["applied"] and "a" not in result["applied"]
    assert result["undone"] == result["before"]
