"""The front door: one object that wires a model, a policy, a sandbox profile and the
transcripts into tasks that run.

    from shellagent import Agent, AutoApprover

    agent = Agent("smollm2-135m", cwd="~/projects/site", approver=AutoApprover())
    outcome = agent.run("list the largest files here")
    outcome.reason, outcome.summary, outcome.session_id

Everything is built when first needed, so making an ``Agent`` costs nothing: the model
(``model`` is a name, path or ``openai:URL`` for ``shellagent.model.load_backend``, or a
ready ``Backend``), the policy (the default policy plus the user's, for ``cwd``), the
sandbox (a ``Sandbox`` of ``profile``, one per ``run`` unless a shell is given) and the
transcript (a ``TranscriptWriter`` in ``transcripts``, one per ``run`` unless a sink is
given). The daemon, ``shellagent eval``, ``shellagent jobs`` and the benchmarks all go
through here; ``run_task`` stays the loop itself, for callers that bring every part.

Without an ``approver``, every command the policy asks about is refused (nobody is there
to answer); without a ``job_installer``, a schedule action installs nothing; without
``examples`` (an ``ExampleLibrary``, e.g. ``examples.default_library()``), no worked
examples are retrieved for the prompt; without ``recipes`` (a ``RecipeBook``), the model
writes every command itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from shellagent.agent.approval import Approver, RefuseApprover
from shellagent.agent.config import AgentConfig
from shellagent.agent.loop import Outcome, run_task

if TYPE_CHECKING:
    from shellagent.agent.examples import ExampleLibrary
    from shellagent.agent.followup import Earlier
    from shellagent.agent.proposal import JobInstaller
    from shellagent.agent.recipe_step import RecipeBook
    from shellagent.events import EventSource, TranscriptEvent
    from shellagent.model.backend import Backend
    from shellagent.policy import PolicyEngine
    from shellagent.sandbox import Profile, Sandbox, Shell
    from shellagent.transcript import TranscriptSink, TranscriptWriter

__all__ = ["Agent"]


class Agent:
    """A model, a policy and a sandbox profile, ready to run tasks (see the module doc)."""

    def __init__(
        self,
        model: str | Backend | None = None,
        *,
        policy: PolicyEngine | None = None,
        profile: Profile | str = "default",
        cwd: Path | str | None = None,
        approver: Approver | None = None,
        config: AgentConfig = AgentConfig(),  # noqa: B008 - frozen, so sharing it is safe
        transcripts: Path | None = None,
        job_installer: JobInstaller | None = None,
        source: EventSource = "ask",
        model_name: str | None = None,
        examples: ExampleLibrary | None = None,
        recipes: RecipeBook | None = None,
    ) -> None:
        self.model = model
        self.cwd = Path(cwd).expanduser().absolute() if cwd is not None else Path.cwd()
        self.approver: Approver = approver or RefuseApprover()
        self.config = config
        self.transcripts = transcripts
        self.job_installer = job_installer
        self.source: EventSource = source
        self.model_name = model_name
        self.examples = examples
        self.recipes = recipes
        self._profile = profile
        self._policy = policy
        self._backend: Backend | None = None
        self._lock = threading.Lock()

    @property
    def backend(self) -> Backend:
        """The model, loaded on first use."""
        with self._lock:
            if self._backend is None:
                if self.model is None or isinstance(self.model, str):
                    from shellagent.model.registry import load_backend

                    self._backend = load_backend(self.model)
                else:
                    self._backend = self.model
            return self._backend

    @property
    def policy(self) -> PolicyEngine:
        """The policy engine, loaded on first use (the default policy, the user's
        ``policy.toml``, the always-allow store; ``cwd`` is the workspace)."""
        with self._lock:
            if self._policy is None:
                from shellagent.policy import PolicyEngine

                self._policy = PolicyEngine.load(workspace=self.cwd)
            return self._policy

    @property
    def profile(self) -> Profile:
        """The sandbox profile; a name is resolved for ``cwd``."""
        if isinstance(self._profile, str):
            from shellagent.sandbox import get_profile

            self._profile = get_profile(self._profile, cwd=self.cwd)
        return self._profile

    @profile.setter
    def profile(self, profile: Profile | str) -> None:
        self._profile = profile

    def open_shell(self, *, timeout: float | None = None, state: bytes | None = None) -> Sandbox:
        """A new sandbox of the profile; the caller closes it (it is a context manager).
        ``state`` is an earlier sandbox's ``export_state()`` to start from."""
        from shellagent.sandbox import Sandbox

        return Sandbox(self.profile, timeout=timeout or self.config.command_timeout, state=state)

    def open_transcript(self, session_id: str | None = None) -> TranscriptWriter:
        """A new transcript file (redacted, 0600) in ``transcripts``; the caller closes it."""
        from shellagent.transcript import Redactor, TranscriptWriter

        return TranscriptWriter(
            session_id, directory=self.transcripts, redactor=Redactor.from_environment()
        )

    def run(
        self,
        task: str,
        *,
        shell: Shell | None = None,
        sink: TranscriptSink | None = None,
        cancel: threading.Event | None = None,
        on_event: Callable[[TranscriptEvent], None] | None = None,
        on_output: Callable[[str], None] | None = None,
        on_token: Callable[[str], None] | None = None,
        task_id: str | None = None,
        earlier: Earlier | None = None,
    ) -> Outcome:
        """Run ``task`` to its end (``run_task``). A shell or sink it opened itself is closed
        afterwards; one that was given is left to its owner."""
        backend, policy = self.backend, self.policy
        own_sink: TranscriptWriter | None = None
        if sink is None:
            sink = own_sink = self.open_transcript()
        own_shell: Sandbox | None = None
        try:
            if shell is None:
                own_shell = shell = self.open_shell()
            return run_task(
                task,
                backend=backend,
                shell=shell,
                policy=policy,
                approver=self.approver,
                sink=sink,
                config=self.config,
                cancel=cancel,
                on_event=on_event,
                on_output=on_output,
                on_token=on_token,
                source=self.source,
                model_name=self.model_name or backend.name,
                task_id=task_id,
                job_installer=self.job_installer,
                examples=self.examples,
                earlier=earlier,
                recipes=self.recipes,
            )
        finally:
            if own_shell is not None:
                own_shell.close()
            if own_sink is not None:
                own_sink.close()
