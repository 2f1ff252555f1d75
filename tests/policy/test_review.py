"""The first security review's policy findings (P1, M2, M3) stay fixed, everywhere.

Every command of those findings is in the adversarial corpus after the "Security review 1"
line. Each must be refused by ``shellagent policy check`` (exit 1, never ``allow``) and, run
through the agent loop with an approver that refuses everything on a real sandbox, must
change nothing on disk. A positive control (an allowed ``cat``) shows the loop did run
commands.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shellagent.cli.main import main
from tests.policy.reviews import corpus_section, git_workspace, run_refused, snapshot

REVIEW = corpus_section("# Security review 1")


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
    return git_workspace(
        root,
        {
            "notes.txt": "hello\n",
            "prog.awk": 'BEGIN { system("touch pwned_awk") }\n',
            "in": "b\na\n",
            "src": "text\n",
            "hex": "00000000: 6869 0a                                  hi.\n",
            "magic": "0 string x X\n",
        },
    )


def test_the_agent_loop_with_a_refusing_approver_changes_nothing(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    before = snapshot(ws)
    commands = ["cat notes.txt", *(line.removeprefix("deny:") for line in REVIEW)]
    ran, judged, outcome = run_refused(ws, commands)
    assert ran == ["cat notes.txt"], ran  # the control ran; no review command did
    assert all(judged[c] != "allow" for c in commands[1:])
    assert outcome.reason != "error"
    assert snapshot(ws) == before
