"""The front door: ``shellagent.Agent`` builds what a task needs and cleans up what it built;
``import shellagent`` stays cheap; the shell interface is what both shells implement."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import shellagent
from shellagent import Agent, AgentConfig, AutoApprover
from shellagent.agent.prompts import describe_environment
from shellagent.events import ApprovalRecord, Execution, SessionStart
from shellagent.sandbox import Grants, Profile, Sandbox, Shell, get_profile
from shellagent.testing import FakeShell, MemorySink, ScriptedBackend
from shellagent.transcript import read_transcript

from .conftest import cmd, done


def test_a_task_runs_from_a_model_name_with_its_own_sandbox_and_transcript(
    workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([cmd("touch made.txt"), done("made it")]))
    transcripts = tmp_path / "transcripts"
    agent = Agent(
        f"scripted:{script}", cwd=workspace, approver=AutoApprover(), transcripts=transcripts
    )
    outcome = agent.run("make a file")
    assert outcome.reason == "finished" and outcome.summary == "made it"
    assert (workspace / "made.txt").exists()  # the default profile grants the workspace
    [path] = transcripts.iterdir()
    transcript = read_transcript(path)
    start = transcript.start
    assert start is not None and start.session == outcome.session_id
    assert (start.model, start.profile, start.policy, start.cwd) == (
        f"scripted:{script.name}",
        "default",
        "default",
        str(workspace),
    )
    assert [e.decision for e in transcript.of_type(ApprovalRecord)] == ["auto"]
    assert transcript.success is None and transcript.verdict == "unverified"  # nobody confirmed


def test_a_sandbox_the_agent_opened_is_closed_after_the_run(workspace: Path) -> None:
    opened: list[Sandbox] = []

    class Watching(Agent):
        def open_shell(
            self,
            *,
            timeout: float | None = None,
            state: bytes | None = None,
            profile: Profile | None = None,
        ) -> Sandbox:
            opened.append(super().open_shell(timeout=timeout, state=state, profile=profile))
            return opened[-1]

    agent = Watching(ScriptedBackend([cmd("echo $$"), done("ok")]), cwd=workspace)
    agent.run("which shell", sink=MemorySink())
    [session] = opened
    assert session.pid is None  # closed: its bwrap process is gone
    with pytest.raises(Exception, match="has ended"):
        session.run("true")


def test_a_shell_and_sink_that_were_given_are_used_and_left_open(workspace: Path) -> None:
    shell = FakeShell({"ls": ("notes.txt\n", 0)}, cwd=str(workspace))
    sink = MemorySink()
    outcome = Agent(ScriptedBackend([cmd("ls"), done("listed")]), cwd=workspace).run(
        "list", shell=shell, sink=sink, task_id="t-9"
    )
    assert outcome.reason == "finished" and shell.ran == ["ls"]
    assert not sink.closed
    assert [e.output for e in sink.of_type(Execution)] == ["exit 0\nnotes.txt"]
    start = sink.of_type(SessionStart)[0]
    assert (start.task_id, start.source, start.profile) == ("t-9", "ask", None)


def test_without_an_approver_what_the_policy_asks_about_is_refused(workspace: Path) -> None:
    shell = FakeShell(cwd=str(workspace))
    sink = MemorySink()
    Agent(ScriptedBackend([cmd("touch x"), done("no")]), cwd=workspace).run(
        "t", shell=shell, sink=sink
    )
    assert shell.ran == []
    assert [e.decision for e in sink.of_type(ApprovalRecord)] == ["refuse"]


def test_the_config_reaches_the_loop(workspace: Path) -> None:
    agent = Agent(
        ScriptedBackend([cmd("echo hi")] * 5),
        cwd=workspace,
        config=AgentConfig(max_turns=2),
    )
    outcome = agent.run("t", shell=FakeShell(cwd=str(workspace)), sink=MemorySink())
    assert (outcome.reason, outcome.turns) == ("turn_limit", 2)


def test_importing_shellagent_imports_nothing_until_a_name_is_used() -> None:
    code = (
        "import sys, shellagent; "
        "before = sorted(m for m in sys.modules if m.startswith('shellagent')); "
        "shellagent.Agent; after = 'shellagent.agent.front' in sys.modules; "
        "print(before, after, 'pydantic' in sys.modules, 'llama_cpp' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['shellagent'] True False False"


def test_the_top_level_names_are_sorted_and_each_resolves() -> None:
    assert shellagent.__all__ == sorted(shellagent.__all__)
    for name in shellagent.__all__:
        assert getattr(shellagent, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'run_task'"):
        shellagent.run_task  # noqa: B018 - the attribute access is what is tested


def test_both_shells_implement_the_shell_interface(workspace: Path) -> None:
    fake = FakeShell(grants=Grants(writable=(workspace,), network=True))
    assert isinstance(fake, Shell)
    env = describe_environment(fake, max_turns=4)
    assert (env.writable, env.network, env.anywhere_writable) == ((str(workspace),), True, False)
    with Sandbox(get_profile("default", cwd=workspace)) as session:
        assert isinstance(session, Shell)
        grants = session.grants
    assert grants == Grants(
        profile="default", workdir=workspace.resolve(), writable=(workspace.resolve(),)
    )
    assert os.fspath(grants.workdir or "") == str(workspace.resolve())
