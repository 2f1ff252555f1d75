"""`shellagent apply` and `shellagent undo` on a change set kept by a real session."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.cli.main import main
from shellagent.sandbox import Sandbox
from shellagent.transaction import Workspace
from tests.transaction.conftest import tree


def test_apply_then_undo_through_the_command_line(
    home: Path,
    open_session: Callable[[], tuple[Workspace, Sandbox]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = tree(home)
    ws, s = open_session()
    s.run("echo hi > hello.txt && rm notes/a.txt")
    s.close()
    ws.release()  # the sandbox is over: the session is free for `shellagent apply`
    assert main(["apply", ws.session]) == 0
    out = capsys.readouterr().out
    assert "1 created, 1 deleted" in out and "! DEL" in out and "applied 2 changes" in out
    assert (home / "Documents" / "hello.txt").read_text() == "hi\n"
    assert main(["undo", "--list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed[0]["session"] == ws.session and listed[0]["finished"]
    assert main(["undo"]) == 0
    assert tree(home) == before
    assert main(["undo"]) == 2  # nothing left
    assert "nothing to undo" in capsys.readouterr().err


def test_discard_and_unknown_sessions(
    home: Path,
    open_session: Callable[[], tuple[Workspace, Sandbox]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = tree(home)
    ws, s = open_session()
    s.run("rm -rf ~/Documents")
    s.close()
    ws.release()
    assert main(["apply", ws.session, "--discard"]) == 0
    assert "discarded" in capsys.readouterr().out and tree(home) == before
    assert main(["apply", ws.session]) == 2
    assert "no kept changes" in capsys.readouterr().err
    assert main(["apply", "../etc"]) == 2
