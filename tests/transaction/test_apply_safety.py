"""The apply is the last wall (review 2: H3, H4, M4, M5, M8, M9, L1, L2, L5): it copies,
never links; it holds the session; it drops set-id bits and refuses special files; a
swapped parent directory cannot redirect it; the summary shows what matters first."""

from __future__ import annotations

import os
import shutil
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.cli.main import main
from shellagent.sandbox import Sandbox
from shellagent.transaction import Workspace, compute
from shellagent.transaction.apply import (
    ApplyRefused,
    ApplyStopped,
    Baseline,
    apply,
    held_back,
    undo,
)
from shellagent.transaction.workspace import SessionInUse, workspaces_root

Opener = Callable[[], tuple[Workspace, Sandbox]]


def test_apply_copies_the_upper_file_and_refuses_a_session_in_use(
    home: Path, open_session: Opener, capsys: pytest.CaptureFixture[str]
) -> None:
    ws, s = open_session()
    s.run("echo changed > a.txt")
    # The sandbox still runs: another process (``shellagent apply``) is refused.
    assert main(["apply", ws.session]) == 1
    assert "in use" in capsys.readouterr().err
    assert not (home / "Documents" / "a.txt").exists()
    s.close()
    ws.release()
    assert main(["apply", ws.session]) == 0
    real = home / "Documents" / "a.txt"
    upper = ws.trees[0].upper / "Documents" / "a.txt"
    assert real.read_text() == "changed\n"
    assert not upper.exists() or os.stat(upper).st_ino != os.stat(real).st_ino
    assert not [p for p in real.parent.iterdir() if ".shellagent-" in p.name]


def test_a_session_held_elsewhere_cannot_be_discarded_or_applied(home: Path) -> None:
    ws = Workspace.create("held-1", [home])
    (ws.trees[0].upper / "x.txt").write_text("x\n")
    other = Workspace.open("held-1")
    with pytest.raises(SessionInUse):
        other.hold()
    with pytest.raises(SessionInUse):
        apply(other, compute(other))
    assert main(["apply", "held-1", "--discard"]) == 1
    ws.release()
    assert main(["apply", "held-1", "--discard"]) == 0


def test_set_id_bits_never_land_and_new_executables_show_their_mode(
    home: Path, open_session: Opener
) -> None:
    (home / "Documents" / "lister").write_text("#!/bin/sh\nls\n")
    (home / "Documents" / "lister").chmod(0o755)
    ws, s = open_session()
    assert s.run("cp /bin/sh ./tool && chmod 4755 ./tool && chmod 6755 ./lister").exit_code == 0
    s.close()
    changes = compute(ws)
    lines = "\n".join(changes.render())
    assert "tool (4755)" in lines and "dropped on apply" in lines
    assert "0755 -> 6755" in lines
    Baseline(ws).note(changes)
    apply(ws, changes)
    for name in ("tool", "lister"):
        mode = stat.S_IMODE(os.lstat(home / "Documents" / name).st_mode)
        assert mode & 0o7000 == 0 and mode & 0o100, (name, oct(mode))


def test_a_fifo_never_hangs_the_change_set_the_diff_the_apply_or_the_discard(
    home: Path, open_session: Opener
) -> None:
    (home / "Documents" / "empty.txt").write_text("")
    ws, s = open_session()
    assert s.run("rm empty.txt && mkfifo pipe0 && echo ok").output == "ok\n"
    s.close()
    done: list[object] = []

    def review() -> None:
        changes = compute(ws)
        changes.diff()
        changes.render()
        done.append(changes)

    t = threading.Thread(target=review, daemon=True)
    t.start()
    t.join(20)
    assert done, "the change set blocked on the fifo"
    changes = done[0]
    assert any(c.file_type == "special" for c in changes)  # type: ignore[attr-defined]
    assert any(r.tier == "never" for r in held_back(changes))  # type: ignore[arg-type]
    with pytest.raises(ApplyRefused, match="never applied"):
        apply(ws, changes)  # type: ignore[arg-type]
    assert (home / "Documents" / "empty.txt").exists()
    ws.release()
    assert main(["apply", ws.session, "--discard"]) == 0


def test_symlinks_into_protected_places_are_held_back_with_their_targets(
    home: Path, open_session: Opener
) -> None:
    ws, s = open_session()
    s.run("ln -s ~/.bashrc notes-link && ln -s ~/.ssh/authorized_keys keys && ln -s a.txt ok")
    s.close()
    changes = compute(ws)
    lines = "\n".join(changes.render())
    assert "symlink -> " in lines and ".bashrc" in lines
    held = {r.path.name for r in held_back(changes)}
    assert {"notes-link", "keys"} <= held and "ok" not in held
    with pytest.raises(ApplyRefused):
        apply(ws, changes)
    assert not (home / "Documents" / "notes-link").exists()


def test_what_matters_is_listed_first_and_never_folded(home: Path, open_session: Opener) -> None:
    docs = home / "Documents"
    for i in range(25):
        (docs / f"f{i:02}.txt").write_text("x" * 1700)
    ws, s = open_session()
    s.run("for f in f*.txt; do echo y >> $f; done")
    s.run("echo 'alias ls=x' > ~/.bash_aliases")
    s.run(
        "mkdir -p ~/.local/lib/python3.11/site-packages && echo 'import os' > "
        "~/.local/lib/python3.11/site-packages/zz.pth"
    )
    s.run("mkdir -p newtree/a && echo 1 > newtree/a/run.sh && chmod 755 newtree/a/run.sh")
    s.close()
    lines = compute(ws).render()
    first_ordinary = next(i for i, line in enumerate(lines) if line.startswith("  edit"))
    for needle in (".bash_aliases", "zz.pth", "run.sh (0755)"):
        at = next(i for i, line in enumerate(lines) if needle in line)
        assert at < first_ordinary, lines
    assert "held back" in lines[1]
    assert not any("site-packages/ (" in line for line in lines)  # never folded


def test_a_parent_swapped_for_a_symlink_after_the_preview_gets_nothing(
    home: Path, open_session: Opener, outside_tmp: Path
) -> None:
    sub = home / "Documents" / "sub"
    sub.mkdir()
    elsewhere = outside_tmp / "rootonly"
    elsewhere.mkdir()
    ws, s = open_session()
    s.run("printf job > sub/newjob")
    s.close()
    changes = compute(ws)
    Baseline(ws).note(changes)
    sub.rename(sub.with_name("sub.old"))
    sub.symlink_to(elsewhere)
    with pytest.raises((ApplyStopped, ApplyRefused)):
        apply(ws, changes)
    assert list(elsewhere.iterdir()) == []


@pytest.mark.skipif(os.getuid() != 0, reason="what root refuses")
def test_root_does_not_apply_into_a_directory_another_user_can_change(
    home: Path, open_session: Opener
) -> None:
    shared = home / "Documents" / "shared"
    shared.mkdir()
    ws, s = open_session()
    s.run("echo job > shared/newjob")
    s.close()
    changes = compute(ws)
    shared.chmod(0o777)
    with pytest.raises(ApplyStopped, match="another user can change"):
        apply(ws, changes)
    assert not (shared / "newjob").exists()
    shared.chmod(0o755)
    os.chown(shared, 65534, 65534)
    with pytest.raises(ApplyStopped, match="another user can change"):
        apply(ws, changes)


def test_a_partial_apply_reports_exactly_what_landed_and_the_rest_applies_later(
    home: Path, open_session: Opener
) -> None:
    docs = home / "Documents"
    (docs / "late").mkdir()
    ws, s = open_session()
    s.run("for i in $(seq 1100); do echo $i > f$i.txt; done; echo z > late/z.txt")
    s.close()
    changes = compute(ws)
    Baseline(ws).note(changes)
    (docs / "late").rename(docs / "late.old")
    (docs / "late").symlink_to(docs / "late.old")  # the last file's parent is now a link
    with pytest.raises(ApplyStopped) as stopped:
        apply(ws, changes)
    landed = stopped.value.landed
    on_disk = {str(p) for p in docs.glob("f*.txt")}
    assert set(landed) == on_disk and 0 < len(landed) < 1101
    assert f"{len(landed)} of" in stopped.value.message
    (docs / "late").unlink()
    (docs / "late.old").rename(docs / "late")
    apply(ws, compute(ws))  # the rest: not refused by what the first part did
    assert (docs / "late" / "z.txt").read_text() == "z\n"
    assert len(list(docs.glob("f*.txt"))) == 1100
    ws.release()
    undo(ws.session)
    assert not (docs / "late" / "z.txt").exists()


def test_a_squatted_workspace_directory_does_not_stop_ask(
    outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = outside_tmp / "vartmp"
    base.mkdir()
    base.chmod(0o1777)
    squat = base / f"shellagent-{os.getuid()}"
    squat.mkdir()
    monkeypatch.delenv("SHELLAGENT_WORKSPACES_DIR")
    if os.getuid() == 0:
        os.chown(squat, 65534, 65534)
    else:
        pytest.skip("needs a second user to own the squatted directory")
    root = workspaces_root(base)
    assert root != squat and root.parent == base and root.owner() == "root"
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert workspaces_root(base) == root  # found again (kept sessions live there)
    shutil.rmtree(root)


def test_the_change_set_counts_what_the_upper_layers_take(home: Path, open_session: Opener) -> None:
    from shellagent.transaction.review import Review

    ws, s = open_session()
    s.run("head -c 3000000 /dev/zero > big.bin")
    s.close()
    review = Review(ws)
    changes = review.changes()
    assert changes.stored_bytes >= 3_000_000
    os.environ["SHELLAGENT_CHANGES_CAP_GB"] = "0.001"
    try:
        problem = review.space_problem(changes)
    finally:
        del os.environ["SHELLAGENT_CHANGES_CAP_GB"]
    assert problem and "more than" in problem
    assert review.space_problem(changes) is None


NOBODY_SWAP = r"""
import dataclasses, json, sys
from pathlib import Path
from shellagent.sandbox import Sandbox, get_profile
from shellagent.transaction import Workspace, compute
from shellagent.transaction.apply import ApplyRefused, ApplyStopped, Baseline, apply
home, elsewhere = Path(sys.argv[1]), Path(sys.argv[2])
ws = Workspace.create("nobody-swap", [home], workdir=home / "work")
profile = dataclasses.replace(get_profile("default", cwd=home / "work"), writable=(),
                              overlays=ws.overlays())
with Sandbox(profile, timeout=10) as s:
    s.run("printf job > sub/newjob && cp /bin/true tool && chmod 4755 tool && mkfifo p")
changes = compute(ws)
Baseline(ws).note(changes)
out = {"special": [c.path.name for c in changes if c.file_type == "special"]}
try:
    apply(ws, changes)
except ApplyRefused as exc:
    out["refused"] = exc.message
import os
os.unlink(ws.trees[0].upper / "work" / "p")  # the fifo gone, the rest is applicable
changes = compute(ws)
(home / "work" / "sub").rename(home / "work" / "sub.old")
(home / "work" / "sub").symlink_to(elsewhere)
try:
    apply(ws, changes)
except (ApplyRefused, ApplyStopped) as exc:
    out["swap"] = exc.message
(home / "work" / "sub").unlink()
(home / "work" / "sub.old").rename(home / "work" / "sub")
other = Workspace.open("nobody-swap")
try:
    other.hold()
except Exception as exc:
    out["in_use"] = type(exc).__name__
apply(ws, compute(ws))
out["tool_mode"] = os.stat(home / "work" / "tool").st_mode & 0o7777
print(json.dumps(out))
"""


@pytest.mark.skipif(os.getuid() != 0, reason="switches to the unprivileged user nobody")
def test_the_apply_walls_hold_for_an_unprivileged_user(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    import json

    from tests.unprivileged import (
        SYSTEM_PYTHON,
        give_to_nobody,
        nobody_dirs,
        nobody_site,
        run_as_nobody,
    )

    root = tmp_path_factory.mktemp("apply-nobody")
    site = nobody_site(root)
    home = root / "home"
    (home / "work" / "sub").mkdir(parents=True)
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    give_to_nobody(home, elsewhere)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(site)}
    env |= nobody_dirs(root, ("state", "cache", "workspaces", "config", "data"))
    proc = run_as_nobody([SYSTEM_PYTHON, "-c", NOBODY_SWAP, str(home), str(elsewhere)], env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["special"] == ["p"] and "never applied" in out["refused"]
    assert "swap" in out and list(elsewhere.iterdir()) == []
    assert out["in_use"] == "SessionInUse"
    assert out["tool_mode"] == 0o755  # applied once the way was clear: without set-uid
    assert (home / "work" / "sub" / "newjob").read_text() == "job"


def test_naming_a_directory_includes_what_is_deleted_below_it_and_a_rename_by_either_name(
    home: Path, open_session: Opener
) -> None:
    app = home / ".config" / "app"
    app.mkdir(parents=True)
    for name in ("a.conf", "b.conf"):
        (app / name).write_text(name)
    (home / ".foorc").write_text("foo\n")
    ws, s = open_session()
    assert s.run("rm -rf ~/.config/app && mv ~/.foorc ~/Documents/foorc.bak").exit_code == 0
    s.close()
    changes = compute(ws)
    Baseline(ws).note(changes)
    with pytest.raises(ApplyRefused, match="foorc") as refused:
        apply(ws, changes, include=[app])  # the rename is not named yet
    assert "--include" in (refused.value.hint or "")
    assert (app / "a.conf").exists()
    apply(ws, changes, include=[app, home / ".foorc"])
    assert not app.exists() and not (home / ".foorc").exists()
    assert (home / "Documents" / "foorc.bak").read_text() == "foo\n"


def test_kept_change_sets_expire_unless_a_task_holds_them(home: Path) -> None:
    import json

    from shellagent.transaction.workspace import EXPIRE_AFTER_S, expire_kept

    old, busy, fresh = (Workspace.create(n, [home]) for n in ("old-1", "busy-1", "fresh-1"))
    for ws in (old, busy):
        manifest = ws.directory / "manifest.json"
        data = json.loads(manifest.read_text())
        data["started"] -= EXPIRE_AFTER_S + 60
        manifest.write_text(json.dumps(data))
    old.release()
    fresh.release()
    assert expire_kept() == ["old-1"]
    assert not old.directory.exists() and busy.directory.exists() and fresh.directory.exists()
