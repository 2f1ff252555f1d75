"""Episodes: one throwaway sandbox per episode, stepped one command at a time.

An episode is the eval harness's episode taken apart (``shellagent.eval.runner``): ``reset``
starts an ``ephemeral`` sandbox, runs the task's setup and checks that the success condition
fails; each ``step`` judges a command by the task-set policy (``deny``: it does not run and
the observation says why; ``ask``: it runs, as in ``eval``, since the sandbox is thrown
away) and runs it; ``close`` runs the check in a fresh shell (``$ANSWER`` is the answer the
trainer gives, ``$LAST_OUTPUT`` the last command's output), returns the reward of
``transcript/reward.py`` and destroys the sandbox. An episode also ends by itself after
``max_steps`` steps (the check runs then) and is destroyed when nobody touched it for
``idle_s`` seconds, so a trainer that disappears leaves no sandbox behind.

One request at a time per episode: a second one while the first runs is refused
(``EpisodeBusy``), never queued behind a command that may take minutes.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from shellagent.errors import InputError
from shellagent.eval.runner import (
    check_command,
    fresh_shell_command,
    pristine_environment,
)
from shellagent.eval.tasks import Task
from shellagent.jsontypes import JsonObject

if TYPE_CHECKING:
    from shellagent.policy import PolicyEngine
    from shellagent.sandbox import Sandbox

__all__ = ["Episode", "EpisodeBusy", "Episodes", "StepResult", "UnknownEpisode"]

OUTPUT_MAX = 16_384  # characters of a command's output in a step's reply


class EpisodeBusy(Exception):
    """The episode is already handling a request, or the server is at its episode limit."""


class UnknownEpisode(InputError):
    """No live episode has this id (never started, closed, or reaped when idle)."""


@dataclass(frozen=True)
class StepResult:
    """What one step did; ``reward`` and ``success`` are set once the episode is done."""

    output: str
    exit_code: int | None
    decision: str
    reasons: tuple[str, ...]
    done: bool = False
    reward: float | None = None
    success: bool | None = None

    def to_json(self) -> JsonObject:
        return {
            "output": self.output,
            "exit_code": self.exit_code,
            "decision": self.decision,
            "reasons": list(self.reasons),
            "done": self.done,
            "reward": self.reward,
            "success": self.success,
        }


@dataclass
class Episode:
    """One task in its own sandbox. Use through ``Episodes``."""

    id: str
    task: Task
    shell: Sandbox
    pristine: tuple[dict[str, str], str]
    policy: PolicyEngine
    max_steps: int
    command_timeout: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    touched: float = field(default_factory=time.monotonic)
    steps: int = 0
    exit_codes: list[int | None] = field(default_factory=list)
    last_output: str = ""
    finished: StepResult | None = None

    def step(self, command: str) -> StepResult:
        from shellagent.policy import ShellState

        if self.finished is not None:
            return self.finished
        if not command.strip():
            raise InputError("the command is empty", hint="send a shell command to run")
        cwd = self.shell.cwd
        decision = self.policy.check(
            command,
            ShellState(functions=self.shell.functions, cwd=Path(cwd) if cwd else None),
        )
        self.steps += 1
        if decision.decision == "deny":
            result = StepResult(
                output="denied by the policy: " + "; ".join(decision.reasons),
                exit_code=None,
                decision="deny",
                reasons=tuple(decision.reasons),
            )
        else:
            ran = self.shell.run(
                command,
                timeout=self.command_timeout,
                confined=decision.read_only,
                judged=decision.substitutions,
            )
            self.exit_codes.append(None if ran.timed_out else ran.exit_code)
            self.last_output = ran.output
            result = StepResult(
                output=_clip(ran.output),
                exit_code=ran.exit_code,
                decision=decision.decision,
                reasons=tuple(decision.reasons),
            )
        if self.steps >= self.max_steps:
            end = self.close(answer="")
            return StepResult(
                output=result.output,
                exit_code=result.exit_code,
                decision=result.decision,
                reasons=result.reasons,
                done=True,
                reward=end.reward,
                success=end.success,
            )
        return result

    def close(self, answer: str) -> StepResult:
        """Run the check (once) and return the episode's outcome."""
        from shellagent.transcript.reward import episode_reward

        if self.finished is not None:
            return self.finished
        env, cwd = self.pristine
        after = self.shell.run(
            check_command(
                self.task.success_condition, env, cwd, answer=answer, last_output=self.last_output
            ),
            timeout=30.0,
        )
        success = after.exit_code == 0
        codes = [c if c is not None else 124 for c in self.exit_codes]
        self.finished = StepResult(
            output=_clip(after.output),
            exit_code=after.exit_code,
            decision="check",
            reasons=(),
            done=True,
            reward=episode_reward(success, self.steps, codes),
            success=success,
        )
        return self.finished


def _clip(text: str) -> str:
    if len(text) <= OUTPUT_MAX:
        return text
    half = OUTPUT_MAX // 2
    return f"{text[:half]}\n[… {len(text) - OUTPUT_MAX} characters cut …]\n{text[-half:]}"


class Episodes:
    """The live episodes of a server, by id, with the idle reaper."""

    def __init__(
        self,
        tasks: Mapping[str, Task],
        *,
        policy: str = "throwaway",
        max_steps: int = 15,
        command_timeout: float = 30.0,
        idle_s: float = 300.0,
        max_live: int = 8,
        make_shell: Callable[[], Sandbox] | None = None,
    ) -> None:
        self.tasks = dict(tasks)
        self.policy_name = policy
        self.max_steps = max_steps
        self.command_timeout = command_timeout
        self.idle_s = idle_s
        self.max_live = max_live
        self._make_shell = make_shell
        # A sandbox dies with the thread that started it (bwrap --die-with-parent is per
        # thread), and an HTTP request's thread ends with the request: sandboxes are started
        # on this one long-lived thread instead.
        self._spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="env-spawn")
        self._live: dict[str, Episode] = {}
        self._starting = 0  # slots reserved by resets whose sandbox or setup still runs
        self._lock = threading.Lock()
        self._local = threading.local()
        self._stop = threading.Event()
        self._reaper = threading.Thread(target=self._reap, name="env-reaper", daemon=True)
        self._reaper.start()

    def __len__(self) -> int:
        with self._lock:
            return len(self._live)

    def _policy(self) -> PolicyEngine:
        engine: PolicyEngine | None = getattr(self._local, "engine", None)
        if engine is None:  # the bash parser behind an engine is not shared between threads
            from shellagent.policy import PolicyEngine
            from shellagent.policy.sources import default_policy_path, preset_path

            files = [default_policy_path()]
            if self.policy_name != "default":
                files.append(preset_path(self.policy_name))
            engine = PolicyEngine.load(files)
            self._local.engine = engine
        return engine

    def reset(self, task: Task | str) -> Episode:
        """Start an episode of ``task`` (a task, or the id of one of the served tasks)."""
        if isinstance(task, str):
            if task not in self.tasks:
                raise InputError(f"no task with id {task!r}", hint="GET /tasks lists them")
            task = self.tasks[task]
        # The slot is taken under the lock before the sandbox and the setup, which take
        # long: concurrent resets past the limit are refused, not all started at once.
        with self._lock:
            if len(self._live) + self._starting >= self.max_live:
                raise EpisodeBusy(
                    f"{self.max_live} episodes are running; close one before starting another"
                )
            self._starting += 1
        try:
            return self._start(task)
        finally:
            with self._lock:
                self._starting -= 1

    def _start(self, task: Task) -> Episode:
        """Start ``task``'s episode in a slot ``reset`` reserved."""
        shell = self._new_shell()
        try:
            pristine = pristine_environment(shell)
            env, cwd = pristine
            for command in task.setup_commands:
                result = shell.run(fresh_shell_command(command, env, cwd))
                if result.exit_code != 0 or result.timed_out:
                    raise InputError(
                        f"task {task.id}: setup command failed (exit {result.exit_code}): "
                        f"{command}",
                        hint="fix the task's setup_commands",
                    )
            before = shell.run(check_command(task.success_condition, env, cwd), timeout=30.0)
            if before.exit_code == 0:
                raise InputError(
                    f"task {task.id}: the success condition already holds before any step",
                    hint="fix the task's check",
                )
        except BaseException:
            shell.close()
            raise
        episode = Episode(
            id=secrets.token_hex(8),
            task=task,
            shell=shell,
            pristine=pristine,
            policy=self._policy(),
            max_steps=self.max_steps,
            command_timeout=self.command_timeout,
        )
        with self._lock:
            if not self._stop.is_set():  # a shutdown meanwhile destroys it here
                self._live[episode.id] = episode
                return episode
        shell.close()
        raise EpisodeBusy("the server is shutting down")

    def _new_shell(self) -> Sandbox:
        from shellagent.sandbox import Sandbox

        make = self._make_shell or (lambda: Sandbox("ephemeral"))
        return self._spawner.submit(make).result()

    def use(self, episode_id: str) -> Episode:
        """The episode ``episode_id``, locked for one request (release with ``release``)."""
        with self._lock:
            episode = self._live.get(episode_id)
        if episode is None:
            raise UnknownEpisode(
                f"no episode {episode_id!r}", hint="it ended or was idle too long; reset again"
            )
        if not episode.lock.acquire(blocking=False):
            raise EpisodeBusy(f"episode {episode_id} is already handling a request")
        episode.touched = time.monotonic()
        return episode

    def release(self, episode: Episode) -> None:
        episode.touched = time.monotonic()
        episode.lock.release()

    def close(self, episode: Episode, answer: str = "") -> StepResult:
        """Finish ``episode`` (held through ``use``) and destroy its sandbox."""
        try:
            return episode.close(answer)
        finally:
            self._drop(episode)

    def _drop(self, episode: Episode) -> None:
        try:
            episode.shell.close()  # first: an episode no longer listed has no sandbox
        finally:
            with self._lock:
                self._live.pop(episode.id, None)

    def _reap(self) -> None:
        while not self._stop.wait(min(1.0, self.idle_s / 4)):
            now = time.monotonic()
            with self._lock:
                idle = [e for e in self._live.values() if now - e.touched > self.idle_s]
            for episode in idle:
                if episode.lock.acquire(blocking=False):  # never under a running request
                    try:
                        self._drop(episode)
                    finally:
                        episode.lock.release()

    def shutdown(self) -> None:
        """Stop the reaper and destroy every live episode's sandbox."""
        self._stop.set()
        self._spawner.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            live = list(self._live.values())
            self._live.clear()
        for episode in live:
            episode.shell.interrupt()
            episode.shell.close()
