"""The agents a task set is run against: the model (through the agent loop) and a baseline.

An ``EvalAgent`` gets a task, the task's sandbox shell and the episode's transcript sink,
and acts (``ModelAgent`` through ``shellagent.Agent``, the front door). It writes its events
to the sink (``session_start`` first, ``end`` last); the runner counts turns, exit codes and
tokens from those events, so every agent is measured the same way. ``NothingAgent`` runs no
command at all: it must solve no valid task, which makes it a check on the harness (a task
it solves was already satisfied, or its check is broken).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from shellagent.eval.tasks import Task
from shellagent.events import End, EndReason, SessionStart

if TYPE_CHECKING:
    from shellagent.agent.examples import ExampleLibrary
    from shellagent.agent.recipe_step import RecipeBook
    from shellagent.model.backend import Backend
    from shellagent.model.pool import ModelPool
    from shellagent.policy import PolicyEngine
    from shellagent.sandbox import Shell
    from shellagent.transcript import TranscriptSink


@dataclass(frozen=True)
class AgentRun:
    """How an agent's episode ended: the loop's end reason, its summary, any error."""

    reason: EndReason
    summary: str = ""
    error: str | None = None
    claimed: bool = False
    """The agent presented the result as done, with no stated doubt."""


class EvalAgent(Protocol):
    """Something that tries a task in a sandbox and records what it did."""

    name: str

    def run(
        self, task: Task, *, shell: Shell, sink: TranscriptSink, cancel: threading.Event
    ) -> AgentRun: ...


class NothingAgent:
    """The do-nothing baseline: opens and closes the episode without running a command."""

    name = "nothing"

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
        sink.write(End(reason="finished", summary="did nothing", turns=0))
        return AgentRun(reason="finished", summary="did nothing")


class ModelAgent:
    """The real agent loop with a model, the policy in force and every ``ask`` approved.

    ``deny`` still denies (the model is told why); ``ask`` is approved automatically since
    the sandbox is thrown away after the task. With ``jobs`` > 1 the jobs share the model
    through a ``ModelPool``: one generation at a time, in arrival order (llama-cpp-python
    is not thread-safe, and a second copy per job costs memory and the same cores). Each
    job thread gets its own policy engine (the bash parser behind it is not shared between
    threads).
    """

    def __init__(
        self,
        backend: Backend,
        *,
        max_turns: int = 15,
        command_timeout: float = 30.0,
        model_name: str | None = None,
        jobs: int = 1,
        examples: int = 2,
        policy: str = "default",
        capture_logprobs: bool = False,
        recipes: bool = False,
        own_recipes: bool = False,
        stall_limit: int | None = None,
    ) -> None:
        # One job needs no lock, and its transcripts then name the real backend class.
        self.backend = backend
        self.pool: ModelPool | None = None
        if jobs > 1:
            from shellagent.model.pool import ModelPool

            self.pool = ModelPool(backend.name, idle_unload_s=None, loader=lambda _spec: backend)
        self.max_turns = max_turns
        self.command_timeout = command_timeout
        self.capture_logprobs = capture_logprobs
        self.name = model_name or backend.name
        self.examples = examples
        self.policy = policy  # a preset: default, or throwaway layered on the default
        # Try the shipped recipes before the model writes commands (`eval --recipes on`,
        # the command line's default; off here so a scripted model's replies mean commands).
        self.recipes = recipes
        # ... and the user's own and what they taught (`eval --recipes mine`)
        self.own_recipes = own_recipes
        # free-loop turns without progress that end a small model's session (None: the
        # agent's default; ``agent/progress.py``)
        self.stall_limit = stall_limit
        self._library: ExampleLibrary | None = None
        self._book: RecipeBook | None = None
        self._book_lock = threading.Lock()
        self._local = threading.local()

    def _policy(self) -> PolicyEngine:
        engine: PolicyEngine | None = getattr(self._local, "engine", None)
        if engine is None:
            from shellagent.policy import PolicyEngine
            from shellagent.policy.sources import default_policy_path, preset_path

            files = [default_policy_path()]
            if self.policy != "default":
                files.append(preset_path(self.policy))
            engine = PolicyEngine.load(files)
            self._local.engine = engine
        return engine

    def _examples(self) -> ExampleLibrary | None:
        """The shipped library only: a measurement must not depend on the user's history."""
        if self.examples <= 0:
            return None
        if self._library is None:
            from shellagent.agent.examples import SHIPPED_LIBRARY, ExampleLibrary

            self._library = ExampleLibrary.load([SHIPPED_LIBRARY])
        return self._library

    def recipe_book(self) -> RecipeBook | None:
        """The shipped recipes only (like the examples: a measurement must not depend on
        the user's own), or with ``own_recipes`` the user's own and what they taught too;
        loaded once for all jobs. Call it before the run: a first load trains the ranker,
        which should not count as a task's time."""
        if not self.recipes:
            return None
        with self._book_lock:
            if self._book is None:
                from shellagent import paths
                from shellagent.agent.recipe_step import RecipeBook
                from shellagent.recipes import DATA_DIR

                dirs = None if self.own_recipes else [DATA_DIR]
                self._book = RecipeBook.load(cache_dir=paths.cache_dir(), dirs=dirs)
            return self._book

    def run(
        self, task: Task, *, shell: Shell, sink: TranscriptSink, cancel: threading.Event
    ) -> AgentRun:
        from shellagent.agent import Agent, AgentConfig, AutoApprover, Hooks

        backend = self.pool.backend_for(None, task.task, cancel=cancel) if self.pool else None
        agent = Agent(
            backend or self.backend,
            policy=self._policy(),
            approver=AutoApprover(),
            config=AgentConfig(
                max_turns=self.max_turns,
                command_timeout=self.command_timeout,
                examples=self.examples,
                capture_logprobs=self.capture_logprobs,
                stall_limit=AgentConfig.stall_limit
                if self.stall_limit is None
                else self.stall_limit,
            ),
            source="eval",
            model_name=self.name,
            examples=self._examples(),
            recipes=self.recipe_book(),
        )
        hooks = Hooks(cancel=cancel)
        outcome = agent.run(task.task, shell=shell, sink=sink, hooks=hooks, task_id=task.id)
        return AgentRun(
            reason=outcome.reason,
            summary=str(outcome.summary or ""),
            error=str(outcome.error) if outcome.error else None,
            claimed=outcome.claimed,
        )
