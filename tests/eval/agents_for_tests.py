"""Small stand-in agents: they act on the real sandbox and write events like the loop does."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from shellagent.eval import AgentRun, Task


class CommandsAgent:
    """Runs fixed commands, one per turn, recording each as the agent loop would."""

    name = "commands"

    def __init__(self, *commands: str, before: Callable[[Task], None] | None = None) -> None:
        self.commands = commands
        self.before = before
        self.seen: list[str] = []

    def run(self, task: Task, *, shell: Any, sink: Any, cancel: threading.Event) -> AgentRun:
        self.seen.append(task.id)
        if self.before is not None:
            self.before(task)
        sink.write(
            {
                "type": "session_start",
                "session": sink.session_id,
                "task": task.task,
                "model": self.name,
                "source": "eval",
                "task_id": task.id,
            }
        )
        for turn, command in enumerate(self.commands, start=1):
            if cancel.is_set():
                sink.write({"type": "end", "reason": "cancelled", "turns": turn - 1})
                return AgentRun(reason="cancelled")
            reply = f'{{"cmd": "{command}", "why": "test"}}'
            sink.write(
                {
                    "type": "model_turn",
                    "turn": turn,
                    "raw": reply,
                    "action": {"cmd": command, "why": "test"},
                    "valid": True,
                    "generated_tokens": 7,
                }
            )
            sink.write({"type": "message", "role": "assistant", "content": reply, "turn": turn})
            result = shell.run(command)
            sink.write(
                {
                    "type": "execution",
                    "turn": turn,
                    "command": command,
                    "output": result.output,
                    "exit_code": result.exit_code,
                }
            )
            sink.write({"type": "message", "role": "user", "content": result.output, "turn": turn})
        sink.write({"type": "end", "reason": "finished", "turns": len(self.commands)})
        return AgentRun(reason="finished", summary="ran the commands")
