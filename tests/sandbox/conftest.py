"""Sandbox fixtures: a fake home with secrets in it, a workspace, and a way to run the
same probes as an unprivileged user (``nobody``) through a real, separate Python process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shellagent.sandbox import Sandbox, get_profile
from tests.unprivileged import SYSTEM_PYTHON, nobody_home, run_as_nobody

# Run by the unprivileged Python: one session, the commands in turn, results as JSON (then,
# if asked, the ``then`` commands in a second session started from the first one's state).
PROBE = r"""
import dataclasses, json, sys
from pathlib import Path
from shellagent.sandbox import Sandbox, get_profile
from shellagent.sandbox.limits import Limits
spec = json.loads(sys.argv[1])
profile = get_profile(spec["profile"], cwd=Path(spec["cwd"]))
if spec.get("limits"):
    profile = dataclasses.replace(profile, limits=Limits(**spec["limits"]))
with Sandbox(profile, timeout=spec["timeout"]) as session:
    confined = spec.get("confined") or [False] * len(spec["commands"])
    judged = spec.get("judged") or [[]] * len(spec["commands"])
    out = [
        session.run(c, confined=k, judged=[tuple(j) for j in js]).to_json()
        for c, k, js in zip(spec["commands"], confined, judged)
    ]
    state = session.export_state() if spec.get("then") else None
if spec.get("then"):  # a follow-up sandbox seeded with the first one's shell state
    with Sandbox(profile, timeout=spec["timeout"], state=state) as session:
        out += [session.run(c).to_json() for c in spec["then"]]
print(json.dumps(out))
"""


@pytest.fixture
def home(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home directory full of secrets and one ordinary file, set as $HOME."""
    home = outside_tmp / "home"
    for rel, text in {
        ".ssh/id_rsa": "PRIVATE-KEY-SECRET",
        ".aws/credentials": "aws_secret_access_key=AWSSECRET",
        ".netrc": "machine x login y password NETRCSECRET",
        ".gnupg/private.key": "GPGSECRET",
        ".bash_history": "export TOKEN=HISTSECRET",
        "notes.txt": "ordinary notes",
        ".bashrc": "# user bashrc",
    }.items():
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def workspace(home: Path) -> Path:
    """A project directory inside the home, with a git repository and a .env file."""
    ws = home / "project"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".env").write_text("API_TOKEN=DOTENVSECRET\n")
    (ws / "README").write_text("hello\n")
    return ws


@pytest.fixture
def session(workspace: Path) -> Iterator[Sandbox]:
    with Sandbox(get_profile("default", cwd=workspace), timeout=5) as s:
        yield s


@pytest.fixture
def ephemeral() -> Iterator[Sandbox]:
    with Sandbox("ephemeral", timeout=5) as s:
        yield s


@pytest.fixture
def as_nobody(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., list[dict[str, Any]]]:
    """Run commands in one sandbox session as the unprivileged user ``nobody``."""
    place = nobody_home(tmp_path_factory.mktemp("nobody"))

    def run(
        commands: list[str],
        profile: str = "default",
        timeout: float = 5,
        limits: dict[str, int] | None = None,
        caller_env: dict[str, str] | None = None,
        confined: list[bool] | None = None,
        then: list[str] | None = None,
        judged: list[list[tuple[int, str]]] | None = None,
    ) -> list[Any]:
        spec = json.dumps(
            {
                "commands": commands,
                "profile": profile,
                "cwd": str(place.work),
                "timeout": timeout,
                "limits": limits,
                "confined": confined,
                "judged": judged,
                "then": then,
            }
        )
        env = place.env(**(caller_env or {}))
        proc = run_as_nobody([SYSTEM_PYTHON, "-c", PROBE, spec], env, cwd=place.work)
        assert proc.returncode == 0, proc.stderr
        result: list[dict[str, Any]] = json.loads(proc.stdout)
        return result

    run.workdir = place.work  # type: ignore[attr-defined]
    return run


def host_processes(marker: str) -> list[str]:
    """Command lines of host processes that mention ``marker`` (ours excluded)."""
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [
        line
        for line in out.splitlines()
        if marker in line and "ps -eo" not in line and str(os.getpid()) != line.split()[0]
    ]


PYTHON = sys.executable
