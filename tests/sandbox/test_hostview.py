"""The host's processes seen from the sandbox: listed (ps, pgrep, pidof), with secrets in
their command lines hidden, but never reachable: no environment, no fds, no signals."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shellagent.sandbox import Session, get_profile
from shellagent.sandbox.hostview import hide_secrets

Runner = Callable[..., list[dict[str, Any]]]


@pytest.fixture
def host_process() -> Iterator[tuple[int, str]]:
    tag = f"sa-probe-{uuid.uuid4().hex[:8]}"
    proc = subprocess.Popen(
        ["bash", "-c", "sleep 300; :", tag, "--password", "hunter2"],
        env={"PATH": "/usr/bin:/bin", "PROBE_SECRET": "ENV-SECRET-VALUE"},
    )
    yield proc.pid, tag
    proc.kill()
    proc.wait()


def _probes(pid: int, tag: str) -> list[str]:
    return [
        f"ps aux | grep -F {tag} | grep -v grep",
        f"pgrep -af {tag}",
        f"ps -eo pid,comm,%mem --sort=-%mem | grep -w {pid}",
        f"cat /proc/{pid}/environ; ls /proc/{pid}/fd; kill -9 {pid}",
        "ps -p 1 -o comm=",
    ]


def _check(outputs: list[tuple[int, str]], pid: int, tag: str) -> None:
    listed, pgrep, columns, reach, own = outputs
    assert listed[0] == 0 and tag in listed[1] and str(pid) in listed[1]
    assert "hunter2" not in listed[1] and "--password [hidden]" in listed[1]
    assert pgrep[0] == 0 and pgrep[1].startswith(str(pid))
    assert columns[0] == 0 and "bash" in columns[1]
    assert reach[0] != 0 and "ENV-SECRET-VALUE" not in reach[1]
    assert own[0] == 0 and own[1].startswith("python")  # other uses see the sandbox's own pid 1


def test_host_processes_are_listed_but_out_of_reach(
    workspace: Path, host_process: tuple[int, str]
) -> None:
    pid, tag = host_process
    with Session(get_profile("default", cwd=workspace), timeout=10) as s:
        outputs = [(r.exit_code, r.output) for r in (s.run(p) for p in _probes(pid, tag))]
    _check(outputs, pid, tag)
    os.kill(pid, 0)  # still alive: the kill inside never reached it


def test_host_processes_are_listed_for_an_unprivileged_user(
    as_nobody: Runner, host_process: tuple[int, str]
) -> None:
    pid, tag = host_process
    results = as_nobody(_probes(pid, tag))
    _check([(r["exit_code"], r["output"]) for r in results], pid, tag)
    os.kill(pid, 0)


def test_a_host_command_line_longer_than_awk_buffers_is_cut_not_fatal(workspace: Path) -> None:
    # A build tool's command line of tens of kilobytes broke `ps aux` (mawk: "sprintf buffer").
    tag = f"sa-long-{uuid.uuid4().hex[:8]}"
    proc = subprocess.Popen(
        [
            "bash",
            "-c",
            "sleep 300; :",
            tag,
            *(f"/build/objects/unit-{i:05d}.o" for i in range(1000)),
        ]
    )
    try:
        with Session(get_profile("default", cwd=workspace), timeout=10) as s:
            aux = s.run(f"ps aux | grep -F {tag} | grep -v grep")
            custom = s.run(f"ps -eo args,pid | grep -F {tag} | grep -v grep")
    finally:
        proc.kill()
        proc.wait()
    assert aux.exit_code == 0 and str(proc.pid) in aux.output, aux.output[:300]
    assert aux.output.rstrip().endswith("..."), aux.output[-200:]
    assert len(aux.output) < 4096 + 200
    assert custom.exit_code == 0 and str(proc.pid) in custom.output, custom.output[:300]


def test_a_throwaway_root_has_no_host_view(ephemeral: Session) -> None:
    assert ephemeral.run("ls /run/host").exit_code != 0


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["mysql", "-pS3cret", "db"], ["mysql", "-p[hidden]", "db"]),
        (["app", "--token", "abc"], ["app", "--token", "[hidden]"]),
        (["app", "--api-key=xyz"], ["app", "--api-key=[hidden]"]),
        (["env", "DB_PASSWORD=x", "run"], ["env", "DB_PASSWORD=[hidden]", "run"]),
        (["curl", "https://u:p@host/x"], ["curl", "https://[hidden]@host/x"]),
        (["sleep", "300"], ["sleep", "300"]),
        (["python3", "-m", "http.server", "8080"], ["python3", "-m", "http.server", "8080"]),
    ],
)
def test_secret_looking_arguments_are_hidden(args: list[str], shown: list[str]) -> None:
    assert hide_secrets(args) == shown
