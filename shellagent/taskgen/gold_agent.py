"""A scripted agent that runs a task's gold commands and answers from what they printed.

It is the positive control of a task set: every valid task it is given must be solved,
and it is measured exactly like the model (its events go through the same sink). Its
final answer is the task's answer template applied to the output it observed (the last
command's output when the task has no template), so it never reports anything it did not
see.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from shellagent.eval.agents import AgentRun
from shellagent.eval.tasks import Task
from shellagent.events import End, Execution, ModelTurn, SessionStart
from shellagent.taskgen.answers import TemplateError, render

if TYPE_CHECKING:
    from shellagent.sandbox import Shell
    from shellagent.transcript import TranscriptSink

ANSWER_MAX = 400


class GoldAgent:
    name = "gold"

    def __init__(self, command_timeout: float = 30.0) -> None:
        self.command_timeout = command_timeout

    def run(
        self, task: Task, *, shell: Shell, sink: TranscriptSink, cancel: threading.Event
    ) -> AgentRun:
        sink.write(
            SessionStart(
                session=sink.session_id,
                task=task.task,
                model=self.name,
                backend="none",
                profile="ephemeral",
                source="eval",
                task_id=task.id,
            )
        )
        if task.gold is None:
            sink.write(End(reason="error", summary="no gold commands", turns=0))
            return AgentRun(reason="error", error=f"task {task.id} has no gold commands")
        outputs: list[str] = []
        for turn, command in enumerate(task.gold.commands, start=1):
            if cancel.is_set():
                sink.write(End(reason="cancelled", turns=turn - 1))
                return AgentRun(reason="cancelled")
            sink.write(
                ModelTurn(
                    turn=turn,
                    raw="",
                    action={"cmd": command, "why": "gold command"},
                    valid=True,
                    generated_tokens=0,
                )
            )
            result = shell.run(command, timeout=self.command_timeout)
            outputs.append(result.output)
            sink.write(
                Execution(
                    turn=turn,
                    command=command,
                    output=result.output,
                    exit_code=result.exit_code,
                    duration_s=round(result.duration_s, 4),
                    timed_out=result.timed_out,
                )
            )
        try:
            answer = render(task.gold.answer_template or "{out}", outputs)
        except TemplateError as exc:
            sink.write(End(reason="error", summary=str(exc), turns=len(outputs)))
            return AgentRun(reason="error", error=f"answer template: {exc}")
        answer = answer[:ANSWER_MAX] or "done"
        turns = len(outputs) + 1
        sink.write(
            ModelTurn(turn=turns, raw="", action={"done": answer}, valid=True, generated_tokens=0)
        )
        sink.write(End(reason="finished", summary=answer, turns=turns))
        return AgentRun(reason="finished", summary=answer, claimed=True)
