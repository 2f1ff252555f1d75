"""Agent fixtures: a workspace, the real policy, shells (real sandbox and fake), a runner."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from shellagent.agent import (
    AgentConfig,
    Approval,
    ApprovalRequest,
    Hooks,
    Outcome,
    Oversight,
    Parts,
    Recording,
    run_task,
)
from shellagent.events import ChatMessage, End, TranscriptEvent
from shellagent.policy import PolicyEngine
from shellagent.sandbox import Sandbox, get_profile
from shellagent.testing import FakeShell, MemorySink, ScriptedBackend


def cmd(command: str, why: str = "") -> str:
    """A reply in the canonical action layout the grammar produces."""
    return json.dumps({"cmd": command, "why": why}, separators=(", ", ": "))


def done(summary: str) -> str:
    return json.dumps({"done": summary}, separators=(", ", ": "))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "work"
    ws.mkdir()
    (ws / "notes.txt").write_text("one\ntwo\n")
    return ws


@pytest.fixture
def policy(workspace: Path) -> PolicyEngine:
    return PolicyEngine.load(workspace=workspace)


@pytest.fixture
def sandbox(workspace: Path) -> Iterator[Sandbox]:
    with Sandbox(get_profile("default", cwd=workspace), timeout=5) as session:
        yield session


@pytest.fixture
def fake(workspace: Path) -> FakeShell:
    return FakeShell(
        {"echo hello": ("hello\n", 0), "false": ("", 1), "cat notes.txt": ("one\ntwo\n", 0)},
        cwd=str(workspace),
    )


@pytest.fixture(params=["sandbox", "fake"])
def shell(request: pytest.FixtureRequest) -> Any:
    """Each test using this runs against the real sandbox and against FakeShell."""
    return request.getfixturevalue(request.param)


class Approvals:
    """An approver that answers from a list and records what it was asked."""

    def __init__(self, *answers: Approval) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        return self.answers.pop(0)


@dataclass
class Run:
    outcome: Outcome
    sink: MemorySink
    backend: ScriptedBackend
    events: list[TranscriptEvent]

    def observations(self) -> list[str]:
        return [
            e.content
            for e in self.sink.of_type(ChatMessage)
            if e.role == "user" and e.turn is not None
        ]

    @property
    def end(self) -> End:
        end = self.sink.events[-1]
        assert isinstance(end, End), end
        return end


@pytest.fixture
def run_agent(policy: PolicyEngine) -> Callable[..., Run]:
    def run(
        replies: list[Any],
        shell: Any,
        *,
        approver: Any = None,
        backend: ScriptedBackend | None = None,
        **options: Any,
    ) -> Run:
        backend = backend or ScriptedBackend(replies)
        sink = MemorySink()
        events: list[TranscriptEvent] = []
        extra = {k: options.pop(k) for k in ("cancel", "on_output") if k in options}
        outcome = run_task(
            "do the thing",
            Parts(backend=backend, shell=shell, policy=policy, config=AgentConfig(**options)),
            Oversight(approver=approver or Approvals()),
            Recording(sink=sink),
            Hooks(on_event=events.append, **extra),
        )
        return Run(outcome, sink, backend, events)

    return run
