"""The first security review's policy findings (P1, M2, M3) stay fixed, everywhere.

Every command of those findings is in the adversarial corpus after the "Security review 1"
line. Each must be refused by ``shellagent policy check`` (exit 1, never ``allow``) and, run
through the agent loop with an approver that refuses everything on a real sandbox, must
change nothing on disk. A positive control (an allowed ``cat``) shows the loop did run
commands.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from shellagent.agent import AgentConfig, Oversight, Parts, Recording, RefuseApprover, run_task
from shellagent.cli.main import main
from shellagent.events import Execution, PolicyVerdict
from shellagent.policy import PolicyEngine
from shellagent.sandbox import Session, get_profile
from shellagent.testing import MemorySink, ScriptedBackend

HERE = Path(__file__).parent
MARK = "# Security review 1"


def review_commands() -> list[str]:
    lines = (HERE / "adversarial.txt").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(MARK))
    end = next(
        (i for i, line in enumerate(lines) if i > start and line.startswith("# Security review")),
        len(lines),
    )
    return [line for line in lines[start + 1 : end] if line.strip() and not line.startswith("#")]


REVIEW = review_commands()


def test_the_review_section_holds_every_finding() -> None:
    assert len(REVIEW) >= 80
    assert "echo x | sed --expr='e touch pwned_sed'" in REVIEW
    assert "cat < /dev/tcp/127.0.0.1/22" in REVIEW


@pytest.mark.parametrize("line", REVIEW)
def test_policy_check_never_allows_a_review_command(
    line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = line.removeprefix("deny:")
    code = main(["policy", "check", "--json", "--workspace", str(tmp_path), "--", command])
    decision = json.loads(capsys.readouterr().out)["decision"]
    assert code == 1
    assert decision == "deny" if line.startswith("deny:") else decision != "allow", decision


def _workspace(root: Path) -> Path:
    ws = root / "work"
    ws.mkdir()
    for name, text in {
        "notes.txt": "hello\n",
        "prog.awk": 'BEGIN { system("touch pwned_awk") }\n',
        "in": "b\na\n",
        "src": "text\n",
        "hex": "00000000: 6869 0a                                  hi.\n",
        "magic": "0 string x X\n",
    }.items():
        (ws / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run(["git", "-C", str(ws), "add", "notes.txt"], check=True)
    subprocess.run(
        ["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "x"],
        check=True,
    )
    return ws


def _snapshot(root: Path) -> dict[str, tuple[int, str]]:
    """Every path under root with its mode and content digest (directories: empty digest)."""
    shot: dict[str, tuple[int, str]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        shot[str(path.relative_to(root))] = (st.st_mode, digest)
    return shot


def test_the_agent_loop_with_a_refusing_approver_changes_nothing(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    before = _snapshot(ws)
    commands = ["cat notes.txt", *(line.removeprefix("deny:") for line in REVIEW)]
    replies = [json.dumps({"cmd": c, "why": "review"}) for c in commands]
    replies.append(json.dumps({"done": "finished"}))
    sink = MemorySink()
    with Session(get_profile("default", cwd=ws), timeout=5) as shell:
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
    assert ran == ["cat notes.txt"], ran  # the control ran; no review command did
    judged = {e.command: e.decision for e in sink.of_type(PolicyVerdict)}
    assert all(judged[c] != "allow" for c in commands[1:])
    assert outcome.reason != "error"
    assert _snapshot(ws) == before
