"""The parts a session is run with, by role: what runs it, who approves, where it is
recorded, and the hooks its caller hears and decides through.

``run_task(task, Parts(...), Oversight(...), Recording(...), Hooks(...))`` is the loop with
every part given; ``Agent.run`` builds the first three from its model, policy, sandbox and
transcripts and takes the hooks. The hooks after the loop (``review``, ``confirm``,
``history``, ``shell_states``, ``check_summary``) are ``Agent.run``'s: they are what the
``ask`` experience adds to a bare session, and the daemon passes its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from shellagent.agent.config import AgentConfig
from shellagent.events import ChangeSetRecord, ChangesOutcome, EndReason, EventSource

if TYPE_CHECKING:
    from shellagent.agent.approval import Approver, Chooser
    from shellagent.agent.examples import ExampleLibrary
    from shellagent.agent.followup import ShellStates
    from shellagent.agent.outcome import Outcome
    from shellagent.agent.proposal import JobInstaller
    from shellagent.agent.recipe_step import RecipeBook
    from shellagent.events import TranscriptEvent
    from shellagent.model.backend import Backend
    from shellagent.policy import PolicyEngine
    from shellagent.sandbox import Profile, Shell
    from shellagent.transcript import TranscriptSink

__all__ = ["ChangeReview", "Confirm", "Hooks", "Oversight", "Parts", "Recording", "Remember"]


@dataclass(frozen=True)
class Parts:
    """What runs the task: the model, the shell its commands run in, the policy that
    judges them, the limits, and where worked examples and recipes come from (none: the
    prompt shows the reply format only, and the model writes every command itself)."""

    backend: Backend
    shell: Shell
    policy: PolicyEngine
    config: AgentConfig = AgentConfig()
    examples: ExampleLibrary | None = None
    recipes: RecipeBook | None = None


@dataclass(frozen=True)
class Oversight:
    """Who approves: the ``approver`` answers every command the policy asks about; the
    ``job_installer`` installs a recurring job the user approved (none: the model is told
    jobs cannot be made here)."""

    approver: Approver
    job_installer: JobInstaller | None = None
    # a person who may pick another recipe when a result is unsure (none: nobody is asked)
    chooser: Chooser | None = None


@dataclass(frozen=True)
class Recording:
    """Where the session is recorded, and as what: ``session_start`` names the source,
    the model and the task-set id."""

    sink: TranscriptSink
    source: EventSource = "ask"
    model_name: str = ""
    task_id: str | None = None


class ChangeReview(Protocol):
    """The change-set review of a session whose sandbox sees the files through overlays
    (``shellagent.transaction.Review``): its sandbox profile, and what became of the
    changes once the loop is over and nothing writes into the overlays any more."""

    @property
    def session(self) -> str:
        """The session the overlays belong to (``shellagent apply SESSION``)."""
        ...

    @property
    def outcome(self) -> ChangesOutcome: ...

    @property
    def changed(self) -> list[tuple[str, Path]] | None:
        """The change set as (kind, path) once ``conclude`` read it."""
        ...

    def profile(self, base: Profile) -> Profile:
        """``base`` with its write grants turned into overlays."""
        ...

    def conclude(self, reason: EndReason) -> ChangeSetRecord:
        """Show the change set and apply, discard or keep it; its transcript event."""
        ...

    def release(self) -> None:
        """The review is over: an apply, a discard or a follow-up may have the overlays."""
        ...


Confirm = Callable[["Outcome", tuple[str, ...]], "bool | None"]
"""Asks "did that do it?" about a finished session (its outcome and what the session does
not back of its summary): True, False, or None when nobody answered."""

Remember = Callable[[str, "Outcome"], None]
"""Keeps a session the user confirmed as a worked example (``agent/history.py``)."""


@dataclass(frozen=True)
class Hooks:
    """What the caller hears while the task runs and decides after it.

    The loop (``run_task``) uses ``cancel`` (set from any thread: the running command is
    interrupted and the session ends ``cancelled``), ``on_event`` (each transcript event as
    written), ``on_output`` (live command output) and ``on_token`` (the model's reply as it
    is generated).

    ``Agent.run`` also uses the rest, in this order once the loop is over: the shell's final
    state goes to ``shell_states`` (for a follow-up's sandbox); the ``review`` concludes the
    change set; with ``check_summary`` the summary is checked against what the session
    showed (``agent/support.py``); ``confirm`` asks whether a finished session did it, and
    ``history`` keeps one the user confirmed whose summary the session backs. The
    transcript's ``end`` is written last, with the answer and what is not backed.
    """

    cancel: threading.Event | None = None
    on_event: Callable[[TranscriptEvent], None] | None = None
    on_output: Callable[[str], None] | None = None
    on_token: Callable[[str], None] | None = None
    review: ChangeReview | None = None
    confirm: Confirm | None = None
    history: Remember | None = None
    shell_states: ShellStates | None = None
    check_summary: bool = False

    @property
    def wrap_up(self) -> bool:
        """Whether ``Agent.run`` has work after the loop: then the session's shell is
        closed as soon as the loop ends, whoever opened it (its state kept first), so
        nothing writes through it while the changes are reviewed or the user is asked."""
        after = (self.review, self.confirm, self.history, self.shell_states)
        return self.check_summary or any(hook is not None for hook in after)
