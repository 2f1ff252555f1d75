"""The change-set review through a real daemon: commands work on a copy of the user's files,
the change set is shown at the end, and only what the user applies lands (with undo).

The review's data-loss case is here: an approved ``mv`` of a folder into the sandbox's
private ``/tmp`` used to destroy it. Now it is shown as a deletion, discarding it loses
nothing, and applying it can be undone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.cli.main import main
from shellagent.events import ApprovalNeeded, ChangesDone, ChangesReady
from tests.daemon.conftest import (
    UNCHECKED,
    DaemonProc,
    ask_inprocess,
    cmd,
    done,
    transcript_events,
    write_config,
)

NOTES = {"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n"}


@pytest.fixture
def notes(workdir: Path) -> Path:
    folder = workdir / "notes"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text)
    return folder


def contents(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir())} if folder.exists() else {}


def changes_event(session: str) -> dict[str, object]:
    return next(e for e in transcript_events(session) if e["type"] == "changes")


def test_a_move_into_the_private_tmp_is_a_deletion_and_discarding_it_loses_nothing(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path, notes: Path
) -> None:
    model = script(cmd("mv notes /tmp/rename.txt"), done("moved"))
    run = ask_inprocess("rename my notes", model, workdir, keys=["y", "n"])
    assert run.code == 1  # discarded: nothing of it was done (docs/agent.md, "Exit status")
    shown = [e for e in run.of(ChangesReady) if e.lines]
    assert len(shown) == 1 and shown[0].deleted == 4 and shown[0].choices  # 3 files, 1 dir
    assert any(line.startswith("!") and "DEL" in line for line in shown[0].lines)
    assert contents(notes) == NOTES  # nothing touched the real files
    assert run.of(ChangesDone)[0].outcome == "discarded"
    assert changes_event(run.summary.session)["outcome"] == "discarded"
    # the transcript still ends with its end event
    assert transcript_events(run.summary.session)[-1]["type"] == "end"


def test_an_applied_deletion_lands_and_undo_brings_it_back(
    daemon: DaemonProc,
    script: Callable[..., str],
    workdir: Path,
    notes: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = script(cmd("mv notes /tmp/rename.txt"), done("moved"))
    run = ask_inprocess("rename my notes", model, workdir, keys=["y", "a"])
    assert not notes.exists()
    assert run.of(ChangesDone)[0].outcome == "applied"
    assert "shellagent undo" in run.out
    assert main(["undo", run.summary.session]) == 0
    assert contents(notes) == NOTES


def test_the_diff_key_shows_the_diff_and_keep_leaves_it_for_shellagent_apply(
    daemon: DaemonProc,
    script: Callable[..., str],
    workdir: Path,
    notes: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = script(cmd("sed -i s/alpha/ALPHA/ notes/a.txt"), done("edited"))
    run = ask_inprocess("shout alpha", model, workdir, keys=["y", "d", "k"])
    assert "-alpha" in run.out and "+ALPHA" in run.out
    assert (notes / "a.txt").read_text() == "alpha\n"
    assert run.of(ChangesDone)[0].outcome == "kept"
    assert main(["apply", run.summary.session]) == 0
    assert (notes / "a.txt").read_text() == "ALPHA\n"
    assert "applied 1 change;" in capsys.readouterr().out


def test_a_dry_run_runs_on_the_copy_shows_the_change_set_and_applies_nothing(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path, notes: Path
) -> None:
    model = script(cmd("rm notes/b.txt"), done("removed"))
    run = ask_inprocess("drop b", model, workdir, keys=["y"], dry_run=True)
    assert run.summary.commands == ("rm notes/b.txt",)  # it really ran, on the copy
    final = [e for e in run.of(ChangesReady) if e.lines]
    assert final[0].deleted == 1 and final[0].id is None
    assert contents(notes) == NOTES
    assert run.of(ChangesDone)[0].outcome == "dry_run"


def test_yes_keeps_the_changes_unless_told_to_apply(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path, notes: Path
) -> None:
    kept = ask_inprocess("drop c", script(cmd("rm notes/c.txt"), done("x")), workdir, yes=True)
    assert (notes / "c.txt").exists() and kept.of(ChangesDone)[0].outcome == "kept"
    applied = ask_inprocess(
        "drop c", script(cmd("rm notes/c.txt"), done("x")), workdir, yes=True, apply=True
    )
    assert not (notes / "c.txt").exists() and applied.of(ChangesDone)[0].outcome == "applied"


def test_changes_so_far_are_reported_after_each_command_that_wrote(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path, notes: Path
) -> None:
    model = script(cmd("touch notes/d.txt"), cmd("ls notes"), done("made d"))
    run = ask_inprocess("make d", model, workdir, keys=["y", "n"])
    progress = [e for e in run.of(ChangesReady) if not e.lines]
    assert [e.summary for e in progress] == ["1 created"]  # the confined ls wrote nothing
    assert "changes so far (not applied): 1 created" in run.out
    assert not (notes / "d.txt").exists()


def test_a_session_that_changed_nothing_asks_nothing(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path, notes: Path
) -> None:
    run = ask_inprocess("look", script(cmd("cat notes/a.txt"), done("read")), workdir, keys=[])
    assert run.code == UNCHECKED and not run.of(ChangesReady) and not run.of(ChangesDone)
    assert changes_event(run.summary.session)["outcome"] == "none"


def test_with_review_set_to_commands_writes_land_directly(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path, notes: Path
) -> None:
    write_config('[ask]\nreview = "commands"\nconfirm = false\n')
    run = ask_inprocess("drop a", script(cmd("rm notes/a.txt"), done("x")), workdir, keys=["y"])
    assert run.code == UNCHECKED and not (notes / "a.txt").exists()
    assert not run.of(ChangesReady)


def test_with_review_set_to_changes_file_writes_wait_only_for_the_change_set(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path, notes: Path
) -> None:
    write_config('[ask]\nreview = "changes"\nconfirm = false\n')
    model = script(cmd("rm notes/a.txt"), cmd("curl -s https://example.org"), done("x"))
    # one prompt for curl (network), none for rm; then the change set
    run = ask_inprocess("drop a", model, workdir, keys=["n", "\r", "a"])
    asked = [e.command for e in run.of(ApprovalNeeded)]
    assert asked == ["curl -s https://example.org"]
    assert not (notes / "a.txt").exists() and run.of(ChangesDone)[0].outcome == "applied"


def test_dry_run_through_the_daemon_and_without_it_show_the_same_change_set(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path, notes: Path
) -> None:
    import json
    import subprocess
    import sys

    model = script(cmd("rm notes/a.txt"), cmd("touch notes/z.txt"), done("x"))
    through = ask_inprocess("tidy", model, workdir, yes=True, dry_run=True)
    final = [e for e in through.of(ChangesReady) if e.lines][0]
    alone = subprocess.run(
        [sys.executable, "-m", "shellagent.cli.ask", "-y", "--dry-run", "--json", "--no-daemon",
         "--model", script(cmd("rm notes/a.txt"), cmd("touch notes/z.txt"), done("x")), "tidy"],
        cwd=workdir, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert alone.returncode == through.code == UNCHECKED, alone.stderr
    events = [json.loads(line) for line in alone.stdout.splitlines() if line.startswith("{")]
    shown = [e for e in events if e["type"] == "changes" and e["lines"]]
    assert shown[0]["lines"] == list(final.lines) and shown[0]["summary"] == final.summary
    assert contents(notes) == NOTES and not (notes / "z.txt").exists()
