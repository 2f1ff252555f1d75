"""The agent loop: model → action → policy → approval → shell → observation, until done.

One call of ``run_task`` is one session. Every step is written to the sink as it happens (and
passed to ``on_event``), in the order ``docs/transcripts.md`` documents: ``session_start``,
the system and task ``message``s, then per turn ``model_turn``, the assistant ``message``,
``policy``, ``approval`` (when the policy asked), ``execution``, the observation ``message``;
finally ``end``. The sink is not closed: its owner may append a ``check`` (task sets) and
closes it.

A session ends when the model finishes, after ``max_turns`` replies, when the same command
fails ``repeat_limit`` times, when the user quits, when ``cancel`` is set (a running command
is interrupted), or on an error (two unparseable replies in a row, a failing backend, a
conversation that no longer fits the context). Errors end the session with ``reason
"error"``; they are not raised, so the transcript always gets its ``end``.
"""

from __future__ import annotations

import platform
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from shellagent.agent import observation
from shellagent.agent.actions import FinishAction, RunAction, ScheduleAction, parse_action
from shellagent.agent.approval import Approval, ApprovalRequest, Approver
from shellagent.agent.context import ContextWindow
from shellagent.agent.prompts import describe_environment, system_prompt, task_message
from shellagent.errors import EnvironmentProblem, InputError, ShellagentError

if TYPE_CHECKING:
    from shellagent.model.backend import Backend, Generation
    from shellagent.policy import Decision, PolicyEngine
    from shellagent.sandbox import CommandResult
    from shellagent.transcript import TranscriptSink

__all__ = ["AgentConfig", "EndReason", "Outcome", "run_task"]

EndReason = Literal["finished", "turn_limit", "repeated_failure", "user_quit", "cancelled", "error"]


@dataclass(frozen=True)
class AgentConfig:
    """Limits and switches of one session.

    ``observation_chars`` bounds the output shown to the model per command; ``max_tokens``
    bounds one reply; ``repeat_limit`` is how often the same command may fail (non-zero
    exit, or denied) before the session gives up; ``dry_run`` shows commands, runs none.
    """

    max_turns: int = 15
    command_timeout: float = 30.0
    observation_chars: int = 2000
    max_tokens: int = 256
    repeat_limit: int = 3
    capture_logprobs: bool = False
    dry_run: bool = False


@dataclass(frozen=True)
class Outcome:
    """How a session ended. ``commands`` are the results of the commands that ran."""

    reason: EndReason
    summary: str
    turns: int
    session_id: str
    commands: tuple[CommandResult, ...]
    error: str = ""
    environment_problem: bool = False

    @property
    def finished(self) -> bool:
        return self.reason == "finished"

    @property
    def exit_code(self) -> int:
        """0 finished, 130 cancelled, 3 the model or sandbox became unavailable, else 1."""
        if self.environment_problem:
            return 3
        return {"finished": 0, "cancelled": 130}.get(self.reason, 1)


class _Cancelled(Exception):
    """Raised inside a generation's token callback to stop it when the task is cancelled."""


class _Stop(Exception):
    def __init__(
        self, reason: EndReason, summary: str, error: str = "", *, cause: Exception | None = None
    ) -> None:
        super().__init__(summary)
        self.reason: EndReason = reason
        self.summary = summary
        self.error = error
        self.environment_problem = isinstance(cause, EnvironmentProblem)


@dataclass
class _Session:
    """The state one ``run_task`` call carries between turns."""

    task: str
    backend: Backend
    shell: Any
    policy: PolicyEngine
    approver: Approver
    config: AgentConfig
    emit: Callable[[dict[str, Any]], None]
    cancel: threading.Event
    on_output: Callable[[str], None] | None
    on_token: Callable[[str], None] | None
    conversation: list[dict[str, str]] = field(default_factory=list)
    commands: list[CommandResult] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)
    succeeded: dict[str, int] = field(default_factory=dict)
    # Commands that changed something (policy "ask"), were approved and exited 0: what a
    # schedule action turns into a job.
    job_commands: list[str] = field(default_factory=list)
    session_id: str = ""
    turn: int = 0
    invalid_in_a_row: int = 0
    running: bool = False


def run_task(
    task: str,
    *,
    backend: Backend,
    shell: Any,
    policy: PolicyEngine,
    approver: Approver,
    sink: TranscriptSink,
    config: AgentConfig = AgentConfig(),  # noqa: B008 - frozen, so sharing it is safe
    cancel: threading.Event | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    on_output: Callable[[str], None] | None = None,
    on_token: Callable[[str], None] | None = None,
    source: str = "ask",
    model_name: str = "",
    task_id: str | None = None,
) -> Outcome:
    """Run ``task`` to its end and return how it ended (see the module docstring).

    ``shell`` is anything with ``run(command, *, timeout, on_output) -> CommandResult``,
    ``cwd`` and ``functions`` (a sandbox ``Session``, or ``shellagent.testing.FakeShell``);
    its ``interrupt()`` is called, when it has one, to stop a command on cancellation.
    """
    session_id = str(getattr(sink, "session_id", "") or "")
    if not session_id:
        from shellagent.transcript.store import new_session_id

        session_id = new_session_id()

    def emit(event: dict[str, Any]) -> None:
        sink.write(event)
        if on_event is not None:
            on_event(event)

    state = _Session(
        task=task,
        backend=backend,
        shell=shell,
        policy=policy,
        approver=approver,
        config=config,
        emit=emit,
        cancel=cancel if cancel is not None else threading.Event(),
        on_output=on_output,
        session_id=session_id,
        on_token=on_token,
    )
    env = describe_environment(shell, max_turns=config.max_turns)
    profile = getattr(shell, "profile", None)
    start: dict[str, Any] = {
        "type": "session_start",
        "session": session_id,
        "task": task,
        "model": model_name or str(getattr(backend, "name", "")),
        "backend": type(backend).__name__,
        "policy": "default",
        "cwd": env.cwd,
        "versions": _versions(),
        "source": source,
    }
    if profile is not None:
        start["profile"] = str(getattr(profile, "name", ""))
    if task_id is not None:
        start["task_id"] = task_id
    emit(start)
    state.conversation = [
        {"role": "system", "content": system_prompt(env)},
        {"role": "user", "content": task_message(task)},
    ]
    for message in state.conversation:
        emit({"type": "message", **message})

    watcher = _CancelWatcher(state)
    watcher.start()
    try:
        stop = _loop(state)
    finally:
        watcher.stop()
    emit(
        {
            "type": "end",
            "reason": stop.reason,
            "summary": stop.summary,
            "turns": state.turn,
            **({"error": stop.error} if stop.error else {}),
        }
    )
    return Outcome(
        reason=stop.reason,
        summary=stop.summary,
        turns=state.turn,
        session_id=session_id,
        commands=tuple(state.commands),
        error=stop.error,
        environment_problem=stop.environment_problem,
    )


def _loop(state: _Session) -> _Stop:
    window = ContextWindow(state.backend, reply_tokens=state.config.max_tokens)
    try:
        while True:
            if state.cancel.is_set():
                raise _Stop("cancelled", "cancelled before the task was done")
            if state.turn >= state.config.max_turns:
                raise _Stop("turn_limit", f"stopped after {state.turn} replies without finishing")
            state.turn += 1
            _one_turn(state, window)
    except _Stop as stop:
        return stop


def _one_turn(state: _Session, window: ContextWindow) -> None:
    generation = _generate(state, window)
    turn = state.turn
    try:
        action = parse_action(generation.text)
    except InputError as exc:
        _record_reply(state, generation, None)
        state.invalid_in_a_row += 1
        if state.invalid_in_a_row >= 2:
            raise _Stop(
                "error",
                "the model did not produce a valid action twice in a row",
                f"the model's replies are not actions: {exc.message}",
            ) from None
        if generation.stop == "end":
            _observe(state, observation.invalid_reply(exc.message))
        else:
            _observe(state, observation.cut_reply(generation.stop, generation.generated_tokens))
        return
    state.invalid_in_a_row = 0
    _record_reply(state, generation, action.to_dict())
    if isinstance(action, FinishAction):
        raise _Stop("finished", action.done)
    if isinstance(action, ScheduleAction):
        schedule(state, action, turn)
        return
    _run_action(state, action, turn)


def _generate(state: _Session, window: ContextWindow) -> Generation:
    try:
        shown = window.fit(state.conversation)
    except InputError as exc:
        raise _Stop("error", "the conversation no longer fits the model", exc.message) from None
    cancel = state.cancel
    user_on_token = state.on_token

    def on_token(piece: str) -> None:
        if cancel.is_set():
            raise _Cancelled
        if user_on_token is not None:
            user_on_token(piece)

    try:
        return state.backend.generate(
            shown,
            grammar=True,
            max_tokens=state.config.max_tokens,
            on_token=on_token,
            capture_logprobs=state.config.capture_logprobs,
        )
    except _Cancelled:
        raise _Stop("cancelled", "cancelled while the model was thinking") from None
    except ShellagentError as exc:
        raise _Stop("error", "the model failed", exc.show(), cause=exc) from None
    except (RuntimeError, OSError, ValueError) as exc:
        raise _Stop("error", "the model failed", f"{type(exc).__name__}: {exc}") from None


def _record_reply(state: _Session, generation: Generation, action: dict[str, str] | None) -> None:
    state.emit(
        {
            "type": "model_turn",
            "turn": state.turn,
            "raw": generation.text,
            "action": action,
            "valid": action is not None,
            "stop": generation.stop,
            "prompt_tokens": generation.prompt_tokens,
            "evaluated_prompt_tokens": generation.evaluated_prompt_tokens,
            "generated_tokens": generation.generated_tokens,
            "duration_s": round(generation.duration_s, 4),
            "token_ids": list(generation.token_ids) if generation.token_ids is not None else None,
            "logprobs": list(generation.logprobs) if generation.logprobs is not None else None,
        }
    )
    # The reply exactly as generated, so the next prompt extends this one token for token.
    message = {"role": "assistant", "content": generation.text}
    state.conversation.append(message)
    state.emit({"type": "message", **message, "turn": state.turn})


def _observe(state: _Session, text: str) -> None:
    message = {"role": "user", "content": text}
    state.conversation.append(message)
    state.emit({"type": "message", **message, "turn": state.turn})


def _check(state: _Session, command: str) -> Decision:
    from shellagent.policy import ShellState

    cwd = getattr(state.shell, "cwd", "") or None
    shell_state = ShellState(
        functions=frozenset(getattr(state.shell, "functions", frozenset())),
        cwd=Path(cwd) if cwd else None,
    )
    decision = state.policy.check(command, shell_state)
    state.emit(
        {
            "type": "policy",
            "turn": state.turn,
            "command": command,
            "decision": decision.decision,
            "reasons": list(decision.reasons),
            "segments": [s.to_dict() for s in decision.segments],
        }
    )
    return decision


def _run_action(state: _Session, action: RunAction, turn: int) -> None:
    command = action.cmd
    decision = _check(state, command)
    if decision.decision == "deny":
        _observe(state, observation.denied(decision.reasons))
        _give_up_if_repeated(state, command)
        return
    if state.config.dry_run:
        _observe(state, observation.dry_run(decision.decision))
        return
    edited_from: str | None = None
    if decision.decision == "ask":
        approval = _ask(state, ApprovalRequest(command, action.why, decision, turn))
        if approval.decision == "quit":
            if state.cancel.is_set():  # an approver that gave up because the task was cancelled
                raise _Stop("cancelled", "cancelled while waiting for approval")
            raise _Stop("user_quit", "stopped by the user")
        if approval.decision == "refuse":
            _observe(state, observation.refused(approval.reason))
            _give_up_if_repeated(state, command)
            return
        if approval.decision == "edit" and approval.command and approval.command != command:
            edited_from, command = command, approval.command
            edited = _check(state, command)
            if edited.decision == "deny":
                _observe(state, observation.denied(edited.reasons, edited=True))
                return
    ran = len(state.commands)
    _execute(state, command, edited_from)
    if decision.decision == "ask" and len(state.commands) > ran:
        result = state.commands[-1]
        if result.exit_code == 0 and not result.timed_out:
            state.job_commands.append(command)


def _ask(state: _Session, request: ApprovalRequest) -> Approval:
    approval = state.approver(request)
    automatic = bool(getattr(state.approver, "automatic", False))
    recorded = "auto" if automatic and approval.decision == "approve" else approval.decision
    reason = approval.reason
    if approval.decision == "always":
        cwd = Path(getattr(state.shell, "cwd", "") or ".")
        try:
            reason = state.policy.remember_always(
                request.decision, approval.scope or "session", cwd
            )
        except InputError as exc:
            reason = f"not remembered: {exc.message}; approved this once"
    event: dict[str, Any] = {
        "type": "approval",
        "turn": request.turn,
        "command": request.command,
        "decision": recorded,
        "reason": reason,
    }
    if approval.decision == "edit":
        event["edited_command"] = approval.command
    if approval.scope is not None:
        event["scope"] = approval.scope
    state.emit(event)
    return approval


def _execute(state: _Session, command: str, edited_from: str | None) -> None:
    state.running = True
    try:
        result: CommandResult = state.shell.run(
            command, timeout=state.config.command_timeout, on_output=state.on_output
        )
    except InputError as exc:
        _observe(state, f"The command could not be run: {exc.message}")
        _give_up_if_repeated(state, command)
        return
    except ShellagentError as exc:
        raise _Stop("error", "the shell failed", exc.show(), cause=exc) from None
    finally:
        state.running = False
    state.commands.append(result)
    shown = observation.executed(result, state.config.observation_chars, edited_from=edited_from)
    state.emit(
        {
            "type": "execution",
            "turn": state.turn,
            "command": command,
            "output": shown,
            "exit_code": result.exit_code,
            "duration_s": round(result.duration_s, 4),
            "timed_out": result.timed_out,
            "truncated": result.truncated or len(result.output) > state.config.observation_chars,
            "shell_restarted": result.shell_restarted,
        }
    )
    if state.cancel.is_set():
        _observe(state, shown)
        raise _Stop("cancelled", "cancelled while a command was running")
    if result.exit_code != 0 or result.timed_out:
        _observe(state, shown)
        _give_up_if_repeated(state, command)
        return
    # A small model under greedy decoding tends to loop on a command that worked; saying so
    # changes its context enough to move it on.
    key = command.strip()
    times = state.succeeded[key] = state.succeeded.get(key, 0) + 1
    if times > 1:
        shown = f"{shown}\n{observation.repeated(key, times)}"
    _observe(state, shown)


def _give_up_if_repeated(state: _Session, command: str) -> None:
    """Count a failure (non-zero exit, denial, refusal) of ``command``; stop at the limit."""
    key = command.strip()
    count = state.failures[key] = state.failures.get(key, 0) + 1
    if count >= state.config.repeat_limit:
        raise _Stop("repeated_failure", f"`{key}` failed {count} times")


def schedule(state: _Session, action: ScheduleAction, turn: int) -> None:
    """Propose the session's approved commands as a recurring job; install it if approved."""
    from shellagent.agent.scheduling import propose_job

    propose_job(state, action, turn)


class _CancelWatcher:
    """Interrupts the running command when ``cancel`` is set from another thread."""

    def __init__(self, state: _Session) -> None:
        self.state = state
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="agent-cancel", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.done.set()
        self.thread.join(timeout=1)

    def _watch(self) -> None:
        while not self.done.is_set():
            if self.state.cancel.wait(0.05):
                interrupt = getattr(self.state.shell, "interrupt", None)
                # Keep interrupting while a command runs: it may have started just now.
                while not self.done.is_set():
                    if self.state.running and callable(interrupt):
                        interrupt()
                    time.sleep(0.05)
                return


def _versions() -> dict[str, str]:
    from shellagent import __version__

    return {
        "shellagent": __version__,
        "python": platform.python_version(),
        "platform": sys.platform,
    }
