"""The agents a task set is run against: the model (through the agent loop) and a baseline.

An ``Agent`` gets a task, the task's sandbox shell and the episode's transcript sink, and
acts. It writes its events to the sink (``session_start`` first, ``end`` last); the runner
counts turns, exit codes and tokens from those events, so every agent is measured the same
way. ``NothingAgent`` runs no command at all: it must solve no valid task, which makes it a
check on the harness (a task it solves was already satisfied, or its check is broken).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from shellagent.eval.tasks import Task

if TYPE_CHECKING:
    from shellagent.model.backend import Backend, Generation, Message
    from shellagent.policy import PolicyEngine
    from shellagent.sandbox import Session
    from shellagent.transcript import TranscriptSink


@dataclass(frozen=True)
class AgentRun:
    """How an agent's episode ended: the loop's end reason, its summary, any error."""

    reason: str
    summary: str = ""
    error: str | None = None


class Agent(Protocol):
    """Something that tries a task in a sandbox and records what it did."""

    name: str

    def run(
        self, task: Task, *, shell: Session, sink: TranscriptSink, cancel: threading.Event
    ) -> AgentRun: ...


class NothingAgent:
    """The do-nothing baseline: opens and closes the episode without running a command."""

    name = "nothing"

    def run(
        self, task: Task, *, shell: Session, sink: TranscriptSink, cancel: threading.Event
    ) -> AgentRun:
        sink.write(
            {
                "type": "session_start",
                "session": getattr(sink, "session_id", ""),
                "task": task.task,
                "model": self.name,
                "backend": "none",
                "profile": "ephemeral",
                "source": "eval",
                "task_id": task.id,
            }
        )
        sink.write({"type": "end", "reason": "finished", "summary": "did nothing", "turns": 0})
        return AgentRun(reason="finished", summary="did nothing")


class FairLock:
    """A lock granted in the order it was asked for (``threading.Lock`` does not promise it).

    With several jobs sharing one model, a job that just generated must not take the model
    again ahead of one that has been waiting.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._next_ticket = 0
        self._serving = 0

    @property
    def waiting(self) -> int:
        """Threads holding or waiting for the lock."""
        with self._cond:
            return self._next_ticket - self._serving

    def __enter__(self) -> None:
        with self._cond:
            ticket = self._next_ticket
            self._next_ticket += 1
            self._cond.wait_for(lambda: self._serving == ticket)

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._serving += 1
            self._cond.notify_all()


class SharedBackend:
    """One backend used by several jobs, one generation at a time, in arrival order.

    llama-cpp-python is not thread-safe; a second model instance per job costs memory and,
    on a small machine, the same cores. Everything but ``generate`` and ``count_tokens`` is
    passed through to the wrapped backend.
    """

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.name = backend.name
        self.context_size = backend.context_size
        self._lock = FairLock()

    def generate(self, messages: Sequence[Message], **options: Any) -> Generation:
        with self._lock:
            return self.backend.generate(messages, **options)

    def count_tokens(self, messages: Sequence[Message]) -> int:
        with self._lock:
            return self.backend.count_tokens(messages)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)


class ModelAgent:
    """The real agent loop with a model, the policy in force and every ``ask`` approved.

    ``deny`` still denies (the model is told why); ``ask`` is approved automatically since
    the sandbox is thrown away after the task. With ``jobs`` > 1 the model is shared
    through ``SharedBackend``. Each job thread gets its own policy engine
    (the bash parser behind it is not shared between threads).
    """

    def __init__(
        self,
        backend: Backend,
        *,
        max_turns: int = 15,
        command_timeout: float = 30.0,
        model_name: str | None = None,
        jobs: int = 1,
    ) -> None:
        # One job needs no lock, and its transcripts then name the real backend class.
        self.backend: Backend = SharedBackend(backend) if jobs > 1 else backend
        self.max_turns = max_turns
        self.command_timeout = command_timeout
        self.name = model_name or backend.name
        self._local = threading.local()

    def _policy(self) -> PolicyEngine:
        engine: PolicyEngine | None = getattr(self._local, "engine", None)
        if engine is None:
            from shellagent.policy import PolicyEngine

            engine = PolicyEngine.load()
            self._local.engine = engine
        return engine

    def run(
        self, task: Task, *, shell: Session, sink: TranscriptSink, cancel: threading.Event
    ) -> AgentRun:
        from shellagent.agent import AgentConfig, AutoApprover, run_task

        outcome = run_task(
            task.task,
            backend=self.backend,
            shell=shell,
            policy=self._policy(),
            approver=AutoApprover(),
            sink=sink,
            config=AgentConfig(max_turns=self.max_turns, command_timeout=self.command_timeout),
            cancel=cancel,
            source="eval",
            model_name=self.name,
            task_id=task.id,
        )
        return AgentRun(
            reason=str(outcome.reason),
            summary=str(outcome.summary or ""),
            error=str(outcome.error) if outcome.error else None,
        )
