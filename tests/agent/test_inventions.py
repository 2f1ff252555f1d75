"""A model's own command that reads a path existing nowhere is sent back, never shown or
run; a path the command itself makes is fine."""

from __future__ import annotations

import threading
from pathlib import Path

from shellagent.agent import AgentConfig, Hooks, Oversight, Parts, Recording, run_task
from shellagent.agent.approval import Approval, ApprovalRequest
from shellagent.events import ChatMessage, Execution
from shellagent.policy import PolicyEngine
from shellagent.sandbox import Sandbox, get_profile
from shellagent.testing import MemorySink, ScriptedBackend

from .conftest import cmd


def test_an_invented_path_is_sent_back_with_what_is_there(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("one\ntwo\n")
    asked: list[str] = []

    def approver(request: ApprovalRequest) -> Approval:
        asked.append(request.command)
        return Approval("approve")

    sink = MemorySink()
    with Sandbox(get_profile("default", cwd=work), timeout=10) as shell:
        run_task(
            "copy the current log somewhere safe",
            Parts(
                backend=ScriptedBackend(
                    [
                        cmd("cp /opt/yarrow/logs/current.log ~/safe.log"),
                        cmd("mkdir -p kept && cp notes.txt kept/notes.txt"),
                        '{"done": "copied"}',
                    ]
                ),
                shell=shell,
                policy=PolicyEngine.load(workspace=work),
                config=AgentConfig(examples=0),
            ),
            Oversight(approver=approver),
            Recording(sink=sink),
            Hooks(cancel=threading.Event()),
        )
    ran = [e.command for e in sink.of_type(Execution)]
    assert not any("/opt/yarrow" in c for c in ran + asked)  # never shown, never run
    told = [m.content for m in sink.of_type(ChatMessage) if m.role == "user"]
    assert any(
        "/opt/yarrow/logs/current.log does not exist" in t and "notes.txt" in t for t in told
    )
    assert "mkdir -p kept && cp notes.txt kept/notes.txt" in ran  # what it makes is fine
    assert asked == ["mkdir -p kept && cp notes.txt kept/notes.txt"]  # the only one shown
