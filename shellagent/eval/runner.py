"""Running a task set: one fresh ephemeral sandbox per task, several tasks at a time.

Per task: start an ``ephemeral`` sandbox; run each setup command (the first that fails makes
the task *invalid*, reported with the command and its output); run the success check, which
must fail (else *invalid: already satisfied*); let the agent act; run the check again. Setup
commands and checks run in a fresh ``bash`` of the same sandbox, with the sandbox's pristine
environment and working directory: the agent's shell variables, functions and cwd cannot
change the verdict, only what it did to the files can.

``run_eval`` runs tasks on ``jobs`` threads. Cancelling (Ctrl-C in the CLI) stops handing
out tasks, interrupts the commands that are running, and returns what finished: tasks cut
short are ``cancelled``, tasks never started are left out. A second Ctrl-C stops waiting
for the tasks still running (a model generation is only interrupted between tokens) and
returns at once; those tasks are left out too. Nothing here prints.
"""

from __future__ import annotations

import queue
import shlex
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from shellagent.eval.agents import Agent
from shellagent.eval.tasks import Task

Status = Literal["solved", "failed", "invalid", "cancelled", "error"]
INVALID_SETUP = "setup failed"
INVALID_SATISFIED = "already satisfied"
DETAIL_MAX = 2000  # characters of command output kept in a result's detail

# Variables that describe the shell's position, not its environment.
_NOT_ENV = {"_", "PWD", "OLDPWD", "SHLVL"}


@dataclass(frozen=True)
class RunConfig:
    """How each task is run."""

    setup_timeout: float = 60.0
    check_timeout: float = 30.0
    transcripts_dir: Path | None = None
    """Where each episode's transcript goes; None: the user's transcripts directory."""
    max_session_s: float | None = None
    """Kill a sandbox still alive after this long. Off by default: an episode is already
    bounded by the turn limit and the command timeout, and a slow model must not lose its
    check to a wall-clock limit."""


@dataclass(frozen=True)
class TaskResult:
    """What happened to one task. ``status`` decides which counts it enters."""

    id: str
    status: Status
    invalid_reason: str | None = None
    detail: str = ""
    turns: int = 0
    commands: int = 0
    nonzero_exits: int = 0
    reward: float | None = None
    generated_tokens: int = 0
    end_reason: str = ""
    session: str | None = None
    check_exit_code: int | None = None
    wall_s: float = 0.0
    sandbox_s: float = 0.0
    """Sandbox start + setup + the check before the agent + the check after it."""
    agent_s: float = 0.0

    @property
    def valid(self) -> bool:
        return self.status in ("solved", "failed")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class EpisodeSink:
    """The transcript sink handed to the agent: forwards events and keeps the tallies.

    It holds back the agent's ``end`` event (and ignores its ``close``) so the runner can
    write the success check before it, and then the ``end`` with the check's verdict.
    """

    def __init__(self, target: Any) -> None:
        self.target = target
        self.session_id: str = getattr(target, "session_id", "")
        self.turns = 0
        self.exit_codes: list[int | None] = []
        self.generated_tokens = 0
        self.end: dict[str, Any] | None = None

    def write(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        if kind == "end":
            self.end = dict(event)
            return
        if kind == "model_turn":
            self.turns += 1
            self.generated_tokens += int(event.get("generated_tokens") or 0)
        elif kind == "execution":
            code = event.get("exit_code")
            self.exit_codes.append(code if isinstance(code, int) else None)
        self.target.write(event)

    def close(self) -> None:
        """The agent is done with the sink; the runner closes the real one."""

    def abandon(self) -> None:
        """Close without an ``end``: the episode was cut short, and readers (RL export
        included) treat a transcript without one as interrupted, not as a failure."""
        self.target.close()

    def finish(self, check: Mapping[str, Any] | None, reason: str) -> None:
        if check is not None:
            self.target.write(check)
        end = self.end or {"type": "end", "reason": reason}
        if not isinstance(end.get("turns"), int):
            end["turns"] = self.turns
        if check is not None:
            end["success"] = bool(check["success"])
        self.target.write(end)
        self.target.close()


def _clip(text: str, limit: int = DETAIL_MAX) -> str:
    return text if len(text) <= limit else text[: limit // 2] + "\n…\n" + text[-limit // 2 :]


def pristine_environment(shell: Any) -> tuple[dict[str, str], str]:
    """The environment and cwd of a sandbox shell that has not run anything yet."""
    result = shell.run("env; printf '\\nPWD:%s\\n' \"$PWD\"", timeout=10)
    env: dict[str, str] = {}
    cwd = "/"
    for line in result.output.splitlines():
        if line.startswith("PWD:"):
            cwd = line[4:] or "/"
            continue
        name, sep, value = line.partition("=")
        if sep and name.isidentifier() and name not in _NOT_ENV:
            env[name] = value
    return env, cwd


def fresh_shell_command(command: str, env: Mapping[str, str], cwd: str) -> str:
    """``command`` run by a new bash with only ``env``, from ``cwd``, in a subshell.

    Absolute paths and ``builtin``, after dropping functions of the same names: the agent
    may have unset PATH or defined a ``cd`` function in the persistent shell.
    """
    assignments = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
    return (
        f"(\\unset -f builtin cd exec 2>/dev/null; "
        f"builtin cd {shlex.quote(cwd)} 2>/dev/null || builtin cd /; "
        f"builtin exec /usr/bin/env -i {assignments} "
        f"/bin/bash --noprofile --norc -c {shlex.quote(command)})"
    )


def run_one(
    task: Task,
    agent: Agent,
    config: RunConfig,
    cancel: threading.Event,
    *,
    on_session: Callable[[Any], None] | None = None,
) -> TaskResult:
    """Run one task in its own sandbox; every failure is a ``TaskResult``, never raised."""
    from shellagent.sandbox import Session

    started = time.monotonic()

    def done(status: Status, **fields: Any) -> TaskResult:
        elapsed = time.monotonic() - started
        # Before the agent runs, all the time is the sandbox's.
        values: dict[str, Any] = {"sandbox_s": elapsed, **fields}
        return TaskResult(id=task.id, status=status, wall_s=elapsed, **values)

    try:
        shell = Session(
            "ephemeral", timeout=config.setup_timeout, max_session_s=config.max_session_s
        )
    except Exception as exc:
        return done("error", detail=f"sandbox did not start: {exc}")
    if on_session is not None:
        on_session(shell)
    try:
        env, cwd = pristine_environment(shell)
        for command in task.setup_commands:
            result = shell.run(fresh_shell_command(command, env, cwd))
            if cancel.is_set():
                return done("cancelled")
            if result.exit_code != 0 or result.timed_out:
                how = "timed out" if result.timed_out else f"exit {result.exit_code}"
                return done(
                    "invalid",
                    invalid_reason=INVALID_SETUP,
                    detail=_clip(f"$ {command}\n[{how}]\n{result.output}"),
                )
        check_command = fresh_shell_command(task.success_condition, env, cwd)
        before = shell.run(check_command, timeout=config.check_timeout)
        if cancel.is_set():
            return done("cancelled")
        if before.exit_code == 0:
            return done(
                "invalid",
                invalid_reason=INVALID_SATISFIED,
                detail=_clip(f"$ {task.success_condition}\n[exit 0]\n{before.output}"),
            )
        sandbox_s = time.monotonic() - started
        return _run_agent(task, agent, config, cancel, shell, check_command, done, sandbox_s)
    except Exception as exc:
        return done(
            "error", detail=_clip(f"{exc.__class__.__name__}: {exc}\n" + traceback.format_exc())
        )
    finally:
        shell.close()


def _run_agent(
    task: Task,
    agent: Agent,
    config: RunConfig,
    cancel: threading.Event,
    shell: Any,
    check_command: str,
    done: Callable[..., TaskResult],
    sandbox_s: float,
) -> TaskResult:
    from shellagent.transcript import Redactor, TranscriptWriter, episode_reward

    writer = TranscriptWriter(
        redactor=Redactor.from_environment(), directory=config.transcripts_dir
    )
    sink = EpisodeSink(writer)
    agent_started = time.monotonic()
    try:
        run = agent.run(task, shell=shell, sink=sink, cancel=cancel)
    except Exception as exc:
        sink.finish(None, "error")
        return done(
            "error",
            detail=_clip(
                f"agent crashed: {exc.__class__.__name__}: {exc}\n" + traceback.format_exc()
            ),
            session=sink.session_id,
            agent_s=time.monotonic() - agent_started,
            sandbox_s=sandbox_s,
        )
    agent_s = time.monotonic() - agent_started
    if cancel.is_set():
        sink.abandon()
        return done(
            "cancelled",
            session=sink.session_id,
            agent_s=agent_s,
            sandbox_s=sandbox_s,
            turns=sink.turns,
        )
    check_started = time.monotonic()
    after = shell.run(check_command, timeout=config.check_timeout)
    sandbox_s += time.monotonic() - check_started
    success = after.exit_code == 0
    sink.finish(
        {
            "type": "check",
            "command": task.success_condition,
            "exit_code": after.exit_code,
            "success": success,
            "output": _clip(after.output),
        },
        run.reason,
    )
    exit_codes = sink.exit_codes
    return done(
        "solved" if success else "failed",
        detail=run.error or "",
        turns=sink.turns,
        commands=len(exit_codes),
        nonzero_exits=sum(1 for c in exit_codes if c != 0),
        reward=episode_reward(success, sink.turns, exit_codes),
        generated_tokens=sink.generated_tokens,
        end_reason=run.reason,
        session=sink.session_id,
        check_exit_code=after.exit_code,
        agent_s=agent_s,
        sandbox_s=sandbox_s,
    )


@dataclass
class EvalRun:
    """The results of a run, in task order, and whether it was cut short."""

    tasks: Sequence[Task]
    results: list[TaskResult] = field(default_factory=list)
    interrupted: bool = False
    wall_s: float = 0.0
    jobs: int = 1

    @property
    def not_run(self) -> int:
        return len(self.tasks) - len(self.results)


def run_eval(
    tasks: Sequence[Task],
    agent: Agent,
    config: RunConfig | None = None,
    *,
    jobs: int = 1,
    cancel: threading.Event | None = None,
    on_result: Callable[[TaskResult], None] | None = None,
) -> EvalRun:
    """Run ``tasks`` on ``jobs`` threads. Ctrl-C (in the calling thread) or ``cancel``
    stops the run; the returned ``EvalRun`` holds whatever finished."""
    config = config or RunConfig()
    cancel = cancel or threading.Event()
    order = {t.id: i for i, t in enumerate(tasks)}
    pending: queue.SimpleQueue[Task] = queue.SimpleQueue()
    for task in tasks:
        pending.put(task)
    results: list[TaskResult] = []
    lock = threading.Lock()
    live: dict[int, Any] = {}  # thread id -> the sandbox shell of the task it is running

    def track(shell: Any) -> None:
        with lock:
            live[threading.get_ident()] = shell
        if cancel.is_set():
            shell.interrupt()

    workers_left = max(1, jobs)
    all_done = threading.Event()

    def worker() -> None:
        nonlocal workers_left
        try:
            work()
        finally:
            with lock:
                workers_left -= 1
                if workers_left == 0:
                    all_done.set()

    def work() -> None:
        while not cancel.is_set():
            try:
                task = pending.get_nowait()
            except queue.Empty:
                return
            result = run_one(task, agent, config, cancel, on_session=track)
            with lock:
                live.pop(threading.get_ident(), None)
                results.append(result)
            if on_result is not None:
                on_result(result)

    started = time.monotonic()
    threads = [
        threading.Thread(target=worker, name=f"eval-{i}", daemon=True) for i in range(max(1, jobs))
    ]
    for thread in threads:
        thread.start()
    interrupted = False
    stopped = False
    abandoned = False
    # Wait on an Event, not Thread.join: on Python 3.11 a Ctrl-C inside join() can mark a
    # still-running thread as finished, and the run would return without its result.
    while not all_done.is_set():
        try:
            all_done.wait(timeout=0.1)
        except KeyboardInterrupt:
            if interrupted:  # a second Ctrl-C: stop waiting for the tasks still running
                abandoned = True
                break
            interrupted = True
            cancel.set()
        if cancel.is_set() and not stopped:
            stopped = True  # shells that start later see ``cancel`` in ``track``
            with lock:
                for shell in live.values():
                    shell.interrupt()
    if not abandoned:
        for thread in threads:
            thread.join()
    with lock:
        finished = list(results)  # a copy: abandoned workers may still append
    interrupted = interrupted or cancel.is_set()
    finished.sort(key=lambda r: order[r.id])
    return EvalRun(
        tasks=tasks,
        results=finished,
        interrupted=interrupted,
        wall_s=time.monotonic() - started,
        jobs=jobs,
    )
