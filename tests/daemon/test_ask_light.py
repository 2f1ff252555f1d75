"""``ask`` stays light: its whole non-prompting path imports the standard library only."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent import paths
from shellagent.cli import ask_client
from tests.daemon.conftest import UNCHECKED, DaemonProc, cmd, done

ALLOWED_OWN = {
    "shellagent",
    "shellagent.chars",
    "shellagent.cli",
    "shellagent.cli.ask",
    "shellagent.cli.ask_client",
    "shellagent.cli.ask_ui",
    "shellagent.cli.display",
    "shellagent.errors",
    "shellagent.events",
    "shellagent.events.client",
    "shellagent.events.codec",
    "shellagent.events.schema",
    "shellagent.events.transcript",
    "shellagent.events.wire",
    "shellagent.events.words",
    "shellagent.paths",
    "shellagent.protocol",
}

PROBE = r"""
import json, sys
startup = set(sys.modules)  # what site.py loaded (editable-install finders and such)
from shellagent.cli.ask import main
code = main(sys.argv[2:])
stdlib = sys.stdlib_module_names
extra = sorted(m for m in set(sys.modules) - startup
               if m.split(".")[0] not in stdlib and m.split(".")[0] != "shellagent")
own = sorted(m for m in sys.modules if m.split(".")[0] == "shellagent")
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "extra": extra, "own": own}, f)
"""


def test_a_whole_ask_through_the_daemon_imports_nothing_outside_the_stdlib(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path, tmp_path: Path
) -> None:
    report = tmp_path / "imports.json"
    model = script(cmd("echo light"), done("ok"))
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(report), "-y", "--model", model, "be light"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    result = json.loads(report.read_text())
    assert result["code"] == UNCHECKED, out.stderr
    assert "light" in out.stdout
    assert result["extra"] == []  # no pydantic, llama_cpp, prompt_toolkit, platformdirs
    assert set(result["own"]) <= ALLOWED_OWN, set(result["own"]) - ALLOWED_OWN


def test_the_client_finds_the_socket_where_the_daemon_puts_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SHELLAGENT_RUNTIME_DIR")
    monkeypatch.setattr(paths, "TMP_BASE", tmp_path)  # not the real /tmp's shellagent-UID
    for xdg in (str(tmp_path), None, str(tmp_path / "missing")):
        if xdg is None:
            monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
        else:
            monkeypatch.setenv("XDG_RUNTIME_DIR", xdg)
        assert ask_client.socket_path().parent == paths.runtime_dir()


def test_without_a_terminal_ask_says_approvals_will_be_refused(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    from tests.daemon.conftest import ask_cli

    out = ask_cli("--model", script(cmd("rm -f x"), done("no")), "t", cwd=workdir)
    assert "use -y" in out.stderr
    assert "refused" in out.stdout


def test_json_prints_the_event_stream_as_json_lines(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    from tests.daemon.conftest import ask_cli

    out = ask_cli("--json", "-y", "--model", script(cmd("echo hi"), done("ok")), "t", cwd=workdir)
    kinds = [json.loads(line)["type"] for line in out.stdout.splitlines()]
    assert kinds[0] == "accepted" and kinds[-1] == "summary" and "proposed" in kinds
