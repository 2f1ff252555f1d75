"""Running a task set: one fresh ephemeral sandbox per task, several tasks at a time.

Per task: start an ``ephemeral`` sandbox; run each setup command (the first that fails makes
the task *invalid*, reported with the command and its output); run the success check, which
must fail (else *invalid: already satisfied*); let the agent act; run the check again. Setup
commands and checks run in a fresh ``bash`` of the same sandbox, with the sandbox's pristine
environment and working directory: the agent's shell variables, functions and cwd cannot
change the verdict, only what it did to the files can.

The answer check: every check runs with ``$ANSWER`` and ``$LAST_OUTPUT`` naming files that
hold the agent's final answer (its ``done`` text; empty when it did not finish) and the
output of its last command. Both are written by the check's own fresh shell into a new
private directory just before the check runs, so nothing the agent left behind can stand
in for them. Before the agent acts both files are empty.

``run_eval`` runs tasks on ``jobs`` threads. Cancelling (Ctrl-C in the CLI) stops handing
out tasks, interrupts the commands that are running, and returns what finished: tasks cut
short are ``cancelled``, tasks never started are left out. A second Ctrl-C stops waiting
for the tasks still running (a model generation is only interrupted between tokens) and
returns at once; those tasks are left out too. Nothing here prints.
"""

from __future__ import annotations

import dataclasses
import queue
import shlex
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from shellagent.eval.agents import AgentRun, EvalAgent
from shellagent.eval.tasks import Task
from shellagent.events import Check
from shellagent.jsontypes import JsonObject

if TYPE_CHECKING:
    from shellagent.sandbox import Shell

Status = Literal["solved", "failed", "invalid", "cancelled", "error"]
INVALID_SETUP = "setup failed"
INVALID_SATISFIED = "already satisfied"
DETAIL_MAX = 2000  # characters of command output kept in a result's detail
ANSWER_MAX = 16_384  # characters of the answer and of the last output handed to a check

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
    answer: str = ""
    """The agent's final answer, as the check saw it."""
    sample: int = 0
    """Which rollout of the task this is (``eval --samples N``: 0 … N−1)."""
    claimed: bool = False
    """The agent presented its result as done, with no stated doubt."""

    @property
    def valid(self) -> bool:
        return self.status in ("solved", "failed")

    def to_json(self) -> JsonObject:
        return asdict(self)


def _clip(text: str, limit: int = DETAIL_MAX) -> str:
    return text if len(text) <= limit else text[: limit // 2] + "\n…\n" + text[-limit // 2 :]


def pristine_environment(shell: Shell) -> tuple[dict[str, str], str]:
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


def _answer_text(text: str) -> str:
    # A shell argument cannot hold a NUL; the cap keeps the command under the sandbox's limit.
    return text.replace("\0", "")[:ANSWER_MAX]


def answer_check_script(condition: str, *, answer: str = "", last_output: str = "") -> str:
    """A bash script that runs ``condition`` with ``$ANSWER`` and ``$LAST_OUTPUT`` set.

    The two files are made by the script itself, in a new ``mktemp -d`` directory, and
    removed after the check; the texts travel quoted inside the script, never through a
    file or variable the agent could have prepared. The script exits with the check's
    status (125 if the files could not be made).
    """
    return (
        "umask 077; d=$(/usr/bin/mktemp -d) || exit 125\n"
        f'printf %s {shlex.quote(_answer_text(answer))} > "$d/answer" || exit 125\n'
        f'printf %s {shlex.quote(_answer_text(last_output))} > "$d/last_output" || exit 125\n'
        'ANSWER="$d/answer" LAST_OUTPUT="$d/last_output" '
        f"/bin/bash --noprofile --norc -c {shlex.quote(condition)}\n"
        'rc=$?; /bin/rm -rf -- "$d"; exit "$rc"'
    )


def check_command(
    condition: str,
    env: Mapping[str, str],
    cwd: str,
    *,
    answer: str = "",
    last_output: str = "",
) -> str:
    """The success check as a fresh-shell command (see ``answer_check_script``)."""
    script = answer_check_script(condition, answer=answer, last_output=last_output)
    return fresh_shell_command(script, env, cwd)


def final_answer(run: AgentRun) -> str:
    """The agent's final answer: its ``done`` text when it finished, else nothing."""
    return run.summary if run.reason == "finished" else ""


def run_one(
    task: Task,
    agent: EvalAgent,
    config: RunConfig,
    cancel: threading.Event,
    *,
    on_session: Callable[[Shell], None] | None = None,
    sample: int = 0,
) -> TaskResult:
    """Run one task in its own sandbox; every failure is a ``TaskResult``, never raised.
    ``sample`` numbers the rollout when a task is run several times."""
    from shellagent.sandbox import Sandbox

    started = time.monotonic()

    def done(status: Status, **fields: Any) -> TaskResult:
        elapsed = time.monotonic() - started
        # Before the agent runs, all the time is the sandbox's.
        result = TaskResult(task.id, status, wall_s=elapsed, sandbox_s=elapsed, sample=sample)
        return dataclasses.replace(result, **fields)

    try:
        shell = Sandbox(
            "ephemeral", timeout=config.setup_timeout, max_session_s=config.max_session_s
        )
    except Exception as exc:
        return done("error", detail=f"sandbox did not start: {exc}")
    if on_session is not None:
        on_session(shell)
    try:
        env, cwd = pristine_environment(shell)
        for command in task.setup_commands:
            if cancel.is_set():  # an interrupt sent while the sandbox started is not lost
                return done("cancelled")
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
        before = shell.run(
            check_command(task.success_condition, env, cwd), timeout=config.check_timeout
        )
        if cancel.is_set():
            return done("cancelled")
        if before.exit_code == 0:
            return done(
                "invalid",
                invalid_reason=INVALID_SATISFIED,
                detail=_clip(f"$ {task.success_condition}\n[exit 0]\n{before.output}"),
            )
        sandbox_s = time.monotonic() - started
        return _run_agent(task, agent, config, cancel, shell, (env, cwd), done, sandbox_s)
    except Exception as exc:
        return done(
            "error", detail=_clip(f"{exc.__class__.__name__}: {exc}\n" + traceback.format_exc())
        )
    finally:
        shell.close()


def _run_agent(
    task: Task,
    agent: EvalAgent,
    config: RunConfig,
    cancel: threading.Event,
    shell: Shell,
    pristine: tuple[dict[str, str], str],
    done: Callable[..., TaskResult],
    sandbox_s: float,
) -> TaskResult:
    from shellagent.transcript import EpisodeSink, Redactor, TranscriptWriter, episode_reward

    writer = TranscriptWriter(
        redactor=Redactor.from_environment(), directory=config.transcripts_dir
    )
    sink = EpisodeSink(writer)
    agent_started = time.monotonic()
    try:
        run = agent.run(task, shell=shell, sink=sink, cancel=cancel)
    except Exception as exc:
        sink.finish(fallback="error")
        writer.close()
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
        # Closed without an ``end``: the episode was cut short, and readers (RL export
        # included) treat a transcript without one as interrupted, not as a failure.
        writer.close()
        return done(
            "cancelled",
            session=sink.session_id,
            agent_s=agent_s,
            sandbox_s=sandbox_s,
            turns=sink.turns,
        )
    check_started = time.monotonic()
    env, cwd = pristine
    answer = final_answer(run)
    after = shell.run(
        check_command(
            task.success_condition, env, cwd, answer=answer, last_output=sink.last_output
        ),
        timeout=config.check_timeout,
    )
    sandbox_s += time.monotonic() - check_started
    success = after.exit_code == 0
    check = Check(
        command=task.success_condition,
        exit_code=after.exit_code,
        success=success,
        output=_clip(after.output),
    )
    sink.finish(check, fallback=run.reason, success=success)
    writer.close()
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
        answer=answer,
        claimed=run.claimed and run.reason == "finished",
    )


@dataclass
class EvalRun:
    """The results of a run, in task order, and whether it was cut short."""

    tasks: Sequence[Task]
    results: list[TaskResult] = field(default_factory=list)
    interrupted: bool = False
    wall_s: float = 0.0
    jobs: int = 1
    samples: int = 1
    """Rollouts of each task (``eval --samples N``)."""

    @property
    def not_run(self) -> int:
        return len(self.tasks) * self.samples - len(self.results)


def run_eval(
    tasks: Sequence[Task],
    agent: EvalAgent,
    config: RunConfig | None = None,
    *,
    jobs: int = 1,
    samples: int = 1,
    done: Sequence[TaskResult] = (),
    cancel: threading.Event | None = None,
    on_result: Callable[[TaskResult], None] | None = None,
) -> EvalRun:
    """Run ``tasks`` on ``jobs`` threads, each ``samples`` times (the rollouts of a task are
    handed out one after another, so a group finishes early). Ctrl-C (in the calling
    thread) or ``cancel`` stops the run; the returned ``EvalRun`` holds whatever finished.
    Episodes in ``done`` (a resumed run's) are not run again and are part of the result."""
    if samples < 1:
        raise ValueError("samples must be 1 or more")
    config = config or RunConfig()
    cancel = cancel or threading.Event()
    order = {t.id: i for i, t in enumerate(tasks)}
    pending: queue.SimpleQueue[tuple[Task, int]] = queue.SimpleQueue()
    finished_before = {(r.id, r.sample) for r in done}
    for task in tasks:
        for sample in range(samples):
            if (task.id, sample) not in finished_before:
                pending.put((task, sample))
    results: list[TaskResult] = list(done)
    lock = threading.Lock()
    live: dict[int, Shell] = {}  # thread id -> the sandbox shell of the task it is running

    def track(shell: Shell) -> None:
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
                task, sample = pending.get_nowait()
            except queue.Empty:
                return
            result = run_one(task, agent, config, cancel, on_session=track, sample=sample)
            with lock:
                live.pop(threading.get_ident(), None)
                results.append(result)
            if on_result is not None:
                on_result(result)

    started = time.monotonic()
    # Daemon threads, not a ``concurrent.futures`` pool: its workers are joined when the
    # interpreter exits, so after a second Ctrl-C the process would still wait for a task
    # that does not stop (a long prompt evaluation) instead of leaving at once.
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
    finished.sort(key=lambda r: (order.get(r.id, len(order)), r.sample))
    return EvalRun(
        tasks=tasks,
        results=finished,
        interrupted=interrupted,
        wall_s=time.monotonic() - started,
        jobs=jobs,
        samples=samples,
    )
