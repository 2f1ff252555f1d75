"""One decision everywhere: ``policy check``, the agent loop (and its dry run), ``jobs run``
and always-allow ask the same engine and get the same answer for the same command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shellagent.agent import AgentConfig, Oversight, Parts, Recording, RefuseApprover, run_task
from shellagent.cli.main import main
from shellagent.events import PolicyVerdict
from shellagent.jobs.runner import run_job
from shellagent.jobs.store import make_job
from shellagent.policy import PolicyEngine, ShellState
from shellagent.schedule import Schedule
from shellagent.testing import FakeShell, MemorySink, ScriptedBackend

COMMANDS = [
    "ls -la",
    "git status",
    "sort -o out.txt in.txt",
    "sort --out=x in",
    "echo x | sed --expr='e touch pwned'",
    "cat < /dev/tcp/127.0.0.1/22",
    "mv -t /etc x",
    "rm -rf ~",
    "export GCONV_PATH=.",
    "python3 build.py",
    "awk '{print $1}' f | sort | uniq -c",
]


def cli_decisions(workspace: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    out = {}
    for command in COMMANDS:
        main(["policy", "check", "--json", "--workspace", str(workspace), "--", command])
        out[command] = json.loads(capsys.readouterr().out)["decision"]
    return out


def loop_decisions(workspace: Path, *, dry_run: bool) -> dict[str, str]:
    replies = [json.dumps({"cmd": c, "why": "x"}) for c in COMMANDS]
    replies.append(json.dumps({"done": "ok"}))
    sink = MemorySink()
    run_task(
        "compare",
        Parts(
            backend=ScriptedBackend(replies),
            shell=FakeShell(cwd=str(workspace)),
            policy=PolicyEngine.load(workspace=workspace),
            config=AgentConfig(dry_run=dry_run, max_turns=len(replies) + 1),
        ),
        Oversight(approver=RefuseApprover("no")),
        Recording(sink=sink),
    )
    return {e.command: e.decision for e in sink.of_type(PolicyVerdict)}


def test_policy_check_and_the_agent_loop_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli = cli_decisions(tmp_path, capsys)
    assert cli == loop_decisions(tmp_path, dry_run=False)
    assert cli == loop_decisions(tmp_path, dry_run=True)
    assert {cli["ls -la"], cli["rm -rf ~"], cli["sort --out=x in"]} == {"allow", "deny", "ask"}


def test_always_allow_is_seen_by_policy_check_and_the_loop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    PolicyEngine.load(workspace=tmp_path).remember_always("python3 build.py", "directory", tmp_path)
    cli = cli_decisions(tmp_path, capsys)
    assert cli["python3 build.py"] == "allow"
    assert cli == loop_decisions(tmp_path, dry_run=True)
    other = tmp_path / "other"
    other.mkdir()
    assert cli_decisions(other, capsys)["python3 build.py"] == "ask"


def test_jobs_refuse_exactly_what_the_policy_denies(tmp_path: Path) -> None:
    engine = PolicyEngine.load(workspace=tmp_path)
    for command in COMMANDS:
        denied = engine.check(command, ShellState(cwd=tmp_path)).decision == "deny"
        if not denied:
            continue
        job = make_job(
            "probe", [command], Schedule.parse("daily"), workdir=tmp_path, writable=[tmp_path]
        )
        result = run_job(job)
        assert not result.success and "the policy now denies" in result.reason, command
