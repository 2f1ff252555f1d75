"""What the security-review tests share: the corpus section of one review, a workspace
repository holding the review's files, a snapshot of it, and the agent loop run over the
review's commands with an approver that refuses everything."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from shellagent.agent import (
    AgentConfig,
    Outcome,
    Oversight,
    Parts,
    Recording,
    RefuseApprover,
    run_task,
)
from shellagent.events import Execution, PolicyVerdict
from shellagent.policy import PolicyEngine
from shellagent.sandbox import Sandbox, get_profile
from shellagent.testing import MemorySink, ScriptedBackend

CORPUS = Path(__file__).parent / "adversarial.txt"


def corpus_section(mark: str) -> list[str]:
    """The commands of the adversarial corpus from the line starting with ``mark`` to the
    next review's line (or the end), comments and blank lines left out."""
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(mark))
    end = next(
        (i for i, line in enumerate(lines) if i > start and line.startswith("# Security review")),
        len(lines),
    )
    return [line for line in lines[start + 1 : end] if line.strip() and not line.startswith("#")]


def git_workspace(root: Path, files: dict[str, str]) -> Path:
    """``root/work`` holding ``files``: a git repository with notes.txt committed."""
    ws = root / "work"
    ws.mkdir()
    for name, text in files.items():
        (ws / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run(["git", "-C", str(ws), "add", "notes.txt"], check=True)
    subprocess.run(
        ["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "x"],
        check=True,
    )
    return ws


def snapshot(root: Path) -> dict[str, tuple[int, str]]:
    """Every path under root with its mode and content digest (directories: empty digest)."""
    shot: dict[str, tuple[int, str]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        shot[str(path.relative_to(root))] = (st.st_mode, digest)
    return shot


def run_refused(ws: Path, commands: list[str]) -> tuple[list[str], dict[str, str], Outcome]:
    """The agent loop on a real sandbox in ``ws`` proposing ``commands`` one by one, every
    approval refused: the commands that ran, each command's policy decision, the outcome."""
    replies = [json.dumps({"cmd": c, "why": "review"}) for c in commands]
    replies.append(json.dumps({"done": "finished"}))
    sink = MemorySink()
    with Sandbox(get_profile("default", cwd=ws), timeout=5) as shell:
        outcome = run_task(
            "try everything",
            Parts(
                backend=ScriptedBackend(replies),
                shell=shell,
                policy=PolicyEngine.load(workspace=ws),
                config=AgentConfig(max_turns=len(replies) + 1),
            ),
            Oversight(approver=RefuseApprover("refused in a test")),
            Recording(sink=sink),
        )
    ran = [e.command for e in sink.of_type(Execution)]
    judged: dict[str, str] = {e.command: e.decision for e in sink.of_type(PolicyVerdict)}
    return ran, judged, outcome
