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

What ``ask`` adds to a bare session is hooks of ``run`` (``agent.parts.Hooks``): the
change-set review (a ``shellagent.transaction.review.Review``), "did that do it?", the
user's history (``examples.remember``) and the shell state a follow-up starts from
(``followup.ShellStates``). The daemon passes its own, which ask its client; anyone else
gets the same session from the same calls.

Without an ``approver``, every command the policy asks about is refused (nobody is there
to answer); without a ``job_installer``, a schedule action installs nothing; without
``examples`` (an ``ExampleLibrary``, e.g. ``examples.default_library()``), no worked
examples are retrieved for the prompt; without ``recipes`` (a ``RecipeBook``), the model
writes every command itself.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from shellagent.agent.approval import Approver, Chooser, RefuseApprover
from shellagent.agent.config import AgentConfig
from shellagent.agent.loop import run_task
from shellagent.agent.outcome import Outcome
from shellagent.agent.parts import Hooks, Oversight, Parts, Recording

if TYPE_CHECKING:
    from shellagent.agent.examples import ExampleLibrary
    from shellagent.agent.followup import Earlier
    from shellagent.agent.proposal import JobInstaller
    from shellagent.agent.recipe_step import RecipeBook
    from shellagent.events import EventSource
    from shellagent.model.backend import Backend
    from shellagent.policy import PolicyEngine
    from shellagent.sandbox import Profile, Sandbox, Shell
    from shellagent.transcript import EpisodeSink, TranscriptSink, TranscriptWriter

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
        chooser: Chooser | None = None,
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
        self.chooser = chooser
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

    def open_shell(
        self,
        *,
        timeout: float | None = None,
        state: bytes | None = None,
        profile: Profile | None = None,
    ) -> Sandbox:
        """A new sandbox of the profile (or of ``profile``); the caller closes it (it is a
        context manager). ``state`` is an earlier sandbox's ``export_state()`` to start from."""
        from shellagent.sandbox import Sandbox

        return Sandbox(
            profile or self.profile, timeout=timeout or self.config.command_timeout, state=state
        )

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
        hooks: Hooks = Hooks(),  # noqa: B008 - frozen, so sharing it is safe
        task_id: str | None = None,
        earlier: Earlier | None = None,
    ) -> Outcome:
        """Run ``task`` to its end (``run_task``), then what ``hooks`` ask for after the
        loop (``Hooks``: the shell state kept, the change set reviewed, the summary
        checked, the user asked, the session remembered); the transcript's ``end`` is
        written last. A shell or sink it opened itself is closed afterwards; one that was
        given is left to its owner, except that with work after the loop
        (``Hooks.wrap_up``) the shell is closed when the loop ends.

        Without a shell, one is opened on the review's overlays (``hooks.review``) and
        from the state a follow-up's session left (``hooks.shell_states``, ``earlier``)."""
        from shellagent.transcript import EpisodeSink

        backend, policy, review = self.backend, self.policy, hooks.review
        own_sink: TranscriptWriter | None = None
        if sink is None:
            sink = own_sink = self.open_transcript(review.session if review else None)
        held = EpisodeSink(sink)
        own_shell: Sandbox | None = None
        try:
            if shell is None:
                seed = None
                if earlier is not None and hooks.shell_states is not None:
                    seed = hooks.shell_states.get(earlier.session)
                profile = review.profile(self.profile) if review else self.profile
                own_shell = shell = self.open_shell(state=seed, profile=profile)
            try:
                outcome = run_task(
                    task,
                    Parts(backend, shell, policy, self.config, self.examples, self.recipes),
                    Oversight(self.approver, self.job_installer, self.chooser),
                    Recording(held, self.source, self.model_name or backend.name, task_id),
                    hooks,
                    earlier=earlier,
                )
            finally:
                if hooks.shell_states is not None:
                    hooks.shell_states.keep(held.session_id, shell)
                if own_shell is not None or hooks.wrap_up:
                    shell.close()
            outcome = self._after(task, outcome, held, hooks)
            held.finish(success=outcome.success, unsupported=outcome.unsupported)
            return outcome
        finally:
            held.finish()  # the loop's ``end`` is not lost when a hook failed
            if review is not None:
                review.release()
            if own_sink is not None:
                own_sink.close()

    def _after(self, task: str, outcome: Outcome, held: EpisodeSink, hooks: Hooks) -> Outcome:
        """The change set concluded, the summary checked, the user asked: ``outcome``
        with what they said (``Hooks``, in that order)."""
        review, changes = hooks.review, outcome.changes
        changed: list[tuple[str, Path]] | None = None
        if review is not None:
            held.write(review.conclude(outcome.reason))  # before the held ``end``
            changes, changed = review.outcome, review.changed or []
        problems = self._unsupported(task, outcome, changed) if hooks.check_summary else ()
        success: bool | None = None
        cancelled = hooks.cancel is not None and hooks.cancel.is_set()
        if (
            hooks.confirm is not None
            and outcome.reason == "finished"
            and changes not in ("discarded", "dry_run")
            and not cancelled
        ):
            success = hooks.confirm(outcome, problems)
            if success and hooks.history is not None and outcome.commands and not problems:
                hooks.history(task, outcome)
        return dataclasses.replace(outcome, success=success, unsupported=problems, changes=changes)

    def _unsupported(
        self, task: str, outcome: Outcome, changed: list[tuple[str, Path]] | None
    ) -> tuple[str, ...]:
        """What the session does not back of a finished task's summary: the last command
        failed, or a claim no change and no output supports (``agent/support.py``;
        ``changed`` None: the changes are not known, no overlays)."""
        from shellagent.agent.support import Ran, last_failed, unsupported

        if outcome.reason != "finished" or self.config.propose_only:
            return ()
        ran = [Ran(c.command, c.output, c.exit_code) for c in outcome.commands]
        problems: list[str] = []
        failed = last_failed(ran)
        if failed is not None:
            problems.append(f"the last command failed (exit {failed.exit_code})")
        problems += unsupported(outcome.summary, task, ran, changed)
        return tuple(problems)
