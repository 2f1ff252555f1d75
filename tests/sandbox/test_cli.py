"""`shellagent sandbox run`, `shell` and `doctor` as a user runs them: real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SHELLAGENT = [sys.executable, "-m", "shellagent"]


def shellagent(
    *args: str, cwd: Path | None = None, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SHELLAGENT, *args],
        capture_output=True,
        text=True,
        input=stdin,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def test_sandbox_run_json_reports_each_command_of_one_session(workspace: Path) -> None:
    proc = shellagent(
        "sandbox", "run", "--json", "cd /usr; export A=1", "echo $A $PWD", "false", cwd=workspace
    )
    assert proc.returncode == 1  # one command failed
    results = json.loads(proc.stdout)
    assert [r["exit_code"] for r in results] == [0, 0, 1]
    assert results[1]["output"] == "1 /usr\n"
    assert set(results[0]) >= {
        "command",
        "output",
        "exit_code",
        "duration_s",
        "timed_out",
        "truncated",
    }


def test_sandbox_run_streams_plain_output_and_status_lines(workspace: Path) -> None:
    proc = shellagent("sandbox", "run", "echo hello", "exit 3", cwd=workspace)
    assert "$ echo hello\nhello\n[exit 0," in proc.stdout
    assert "[exit 3," in proc.stdout and "were not kept" in proc.stdout


def test_write_option_grants_an_extra_path(workspace: Path, outside_tmp: Path) -> None:
    extra = outside_tmp / "extra"
    extra.mkdir()
    proc = shellagent("sandbox", "run", "--write", str(extra), f"touch {extra}/made", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert (extra / "made").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--profile", "nope", "true"], "unknown profile 'nope'"),
        (["--write", "/nonexistent/dir", "true"], "does not exist"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(
    workspace: Path, args: list[str], message: str
) -> None:
    proc = shellagent("sandbox", "run", *args, cwd=workspace)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""  # nothing ran: the commands are checked before the sandbox starts


def test_shell_reads_commands_from_a_pipe_in_one_session(workspace: Path) -> None:
    proc = shellagent("shell", stdin="cd /usr\npwd\nf() { echo fn; }\nf\n", cwd=workspace)
    assert proc.stdout == "/usr\nfn\n"


def test_shell_refuses_a_megabyte_command_line_and_carries_on(workspace: Path) -> None:
    huge = "echo " + "y" * 1_048_576
    proc = shellagent("shell", stdin=f"{huge}\necho after\n", cwd=workspace)
    assert "error: the command is 1048581 bytes; the limit is 131072" in proc.stderr
    assert proc.stdout == "after\n"


def test_doctor_reports_every_check_as_json(workspace: Path) -> None:
    proc = shellagent("doctor", "--json", cwd=workspace)
    report = json.loads(proc.stdout)
    names = [c["name"] for c in report["checks"]]
    assert names[:3] == ["bwrap", "user namespaces", "seccomp"]
    assert "profile default" in names and "profile ephemeral" in names
    sandbox_checks = [c for c in report["checks"] if c["name"] != "model"]
    assert all(c["ok"] for c in sandbox_checks), sandbox_checks


def test_doctor_without_bwrap_exits_3_with_the_fix(workspace: Path) -> None:
    proc = shellagent("doctor", cwd=workspace, env={"SHELLAGENT_BWRAP": "/nonexistent/bwrap"})
    assert proc.returncode == 3
    assert "FAIL bwrap" in proc.stdout and "apt-get install bubblewrap" in proc.stdout


def test_sandbox_run_without_bwrap_runs_nothing_and_exits_3(workspace: Path) -> None:
    proc = shellagent(
        "sandbox", "run", "touch ran", cwd=workspace, env={"SHELLAGENT_BWRAP": "/nonexistent/bwrap"}
    )
    assert proc.returncode == 3 and "does not run" in proc.stderr
    assert not (workspace / "ran").exists()
