"""Small stand-in agents: they act on the real sandbox and write events like the loop does."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from shellagent.eval import AgentRun, Task
from shellagent.events import ChatMessage, End, EndReason, Execution, ModelTurn, SessionStart
from shellagent.transcript import TranscriptSink


class CommandsAgent:
    """Runs fixed commands, one per turn, recording each as the agent loop would, then
    finishes with ``answer`` (or stops at the turn limit when ``finish`` is false)."""

    name = "commands"

    def __init__(
        self,
        *commands: str,
        before: Callable[[Task], None] | None = None,
        answer: str = "ran the commands",
        finish: bool = True,
    ) -> None:
        self.commands = commands
        self.before = before
        self.answer = answer
        self.finish = finish
        self.seen: list[str] = []

    def run(
        self, task: Task, *, shell: Any, sink: TranscriptSink, cancel: threading.Event
    ) -> AgentRun:
        self.seen.append(task.id)
        if self.before is not None:
            self.before(task)
        sink.write(
            SessionStart(
                session=sink.session_id,
                task=task.task,
                model=self.name,
                source="eval",
                task_id=task.id,
            )
        )
        for turn, command in enumerate(self.commands, start=1):
            if cancel.is_set():
                sink.write(End(reason="cancelled", turns=turn - 1))
                return AgentRun(reason="cancelled")
            reply = f'{{"cmd": "{command}", "why": "test"}}'
            sink.write(
                ModelTurn(
                    turn=turn,
                    raw=reply,
                    action={"cmd": command, "why": "test"},
                    valid=True,
                    generated_tokens=7,
                )
            )
            sink.write(ChatMessage(role="assistant", content=reply, turn=turn))
            result = shell.run(command)
            sink.write(
                Execution(
                    turn=turn, command=command, output=result.output, exit_code=result.exit_code
                )
            )
            sink.write(ChatMessage(role="user", content=result.output, turn=turn))
        reason: EndReason = "finished" if self.finish else "turn_limit"
        summary = self.answer if self.finish else "stopped without finishing"
        sink.write(End(reason=reason, summary=summary, turns=len(self.commands)))
        return AgentRun(reason=reason, summary=summary)
