"""``ask --json … | jq`` with a terminal on stdin: the JSON stream stays clean on stdout and
the questions are asked on the controlling terminal."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.daemon.conftest import UNCHECKED, cmd, done


@pytest.mark.skipif(shutil.which("script") is None, reason="needs script(1) for a pty")
def test_json_piped_out_still_asks_on_the_terminal(
    script: Callable[..., str], workdir: Path, tmp_path: Path
) -> None:
    (workdir / "notes.txt").write_text("x\n")
    model = script(cmd("rm -f notes.txt"), done("removed"))
    out = tmp_path / "events.jsonl"
    ask = [sys.executable, "-m", "shellagent.cli.ask", "--json", "--no-daemon", "--model", model,
           "tidy"]  # fmt: skip
    # script(1) gives ask a pty as its terminal; stdout goes to a file, as into a pipe.
    line = " ".join(shlex.quote(a) for a in ask) + f" > {shlex.quote(str(out))}"
    proc = subprocess.Popen(
        ["script", "-qec", line, "/dev/null"],
        cwd=workdir,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert proc.stdin is not None
    for key in (b"y", b"a"):  # run it, then apply the change set
        time.sleep(3)
        proc.stdin.write(key)
        proc.stdin.flush()
    terminal, _ = proc.communicate(timeout=60)
    assert proc.returncode == UNCHECKED, terminal.decode(errors="replace")
    events = [json.loads(line) for line in out.read_text().splitlines()]  # all of it is JSON
    kinds = [e["type"] for e in events]
    assert "approval_request" in kinds and kinds[-1] == "summary"
    assert b"run it?" in terminal  # the question was on the terminal
    assert not (workdir / "notes.txt").exists()
