"""Asking the user about a command the policy flagged ``ask``, and the ready-made answers.

The loop calls an ``Approver`` with an ``ApprovalRequest`` (the exact command, the model's
reason, the policy's ``Evaluation``: decision and reasons) and gets an ``Approval`` back, whose
``kind`` is one of:

    approve   run it once                       edit     run ``command`` instead (re-checked)
    refuse    do not run it; ``reason`` goes    always   remember it for ``scope``, then run
              back to the model                 quit     stop the whole task

``AutoApprover`` is ``--yes``: it approves every ``ask`` (the loop never asks about a
``deny``), and the transcript records its answers as ``auto``. ``RefuseApprover`` is what an
unattended run without ``--yes`` gets: every ``ask`` is refused, and the reason says so.
``ChangesApprover`` is ``review = "changes"`` on overlays: what only changes files runs
without a prompt, since the change set shows it before anything lands.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from shellagent.events import Alternative, ApprovalKind, Scope

if TYPE_CHECKING:
    from shellagent.agent.proposal import JobProposal
    from shellagent.policy import Evaluation

__all__ = [
    "Approval",
    "ApprovalKind",
    "ApprovalRequest",
    "Approver",
    "AutoApprover",
    "ChangesApprover",
    "Choice",
    "Chooser",
    "RefuseApprover",
    "Scope",
    "file_changes_only",
    "is_automatic",
]


@dataclass(frozen=True)
class ApprovalRequest:
    """What the user is asked about: the command exactly as it would run, and why."""

    command: str
    why: str
    evaluation: Evaluation  # the policy's, on ``command``
    turn: int
    # Set when the request is a recurring job: ``command`` then holds its commands one per
    # line, and an edit returns them the same way.
    job: JobProposal | None = None

    @property
    def decision(self) -> Evaluation:
        """Deprecated: the policy's evaluation is ``evaluation``."""
        _renamed("ApprovalRequest.decision", "ApprovalRequest.evaluation")
        return self.evaluation


@dataclass(frozen=True)
class Approval:
    """The user's answer: its ``kind`` (approve, edit, refuse, always, quit). ``command`` is
    the edited command (``edit`` only); ``scope`` is required for ``always``; ``reason`` is
    told to the model on ``refuse``."""

    kind: ApprovalKind
    command: str | None = None
    reason: str = ""
    scope: Scope | None = None

    @property
    def decision(self) -> ApprovalKind:
        """Deprecated: the user's answer is ``kind``."""
        _renamed("Approval.decision", "Approval.kind")
        return self.kind


def _renamed(old: str, new: str) -> None:
    warnings.warn(f"{old} is deprecated: use {new}", DeprecationWarning, stacklevel=3)


class Approver(Protocol):
    """Anything that answers an approval request (a terminal prompt, the daemon's client)."""

    def __call__(self, request: ApprovalRequest) -> Approval: ...


@dataclass(frozen=True)
class Choice:
    """Not sure a result is what was asked, or its command was refused: the next recipes
    that may be, for the user to pick one of (``ran`` is "" when nothing ran)."""

    ran: str
    doubts: tuple[str, ...]
    alternatives: tuple[Alternative, ...]
    answer: str = ""


class Chooser(Protocol):
    """A person who may pick one of a ``Choice``'s alternatives: 0 keeps what there is, N
    runs the Nth instead. Automatic approvers have none: nothing unsure is picked for the
    user."""

    def __call__(self, choice: Choice) -> int: ...


def is_automatic(approver: Approver) -> bool:
    """Whether ``approver`` answers without a person (``AutoApprover``, or any approver that
    sets ``automatic = True``): its approvals are recorded as ``auto``, and it never gets to
    install a recurring job."""
    return getattr(approver, "automatic", False) is True


class AutoApprover:
    """Approve every ``ask`` without asking (``ask -y``); the transcript says ``auto``."""

    automatic = True

    def __call__(self, request: ApprovalRequest) -> Approval:
        return Approval("approve", reason="approved automatically (--yes)")


class RefuseApprover:
    """Refuse every ``ask`` with one fixed reason (nobody is there to answer)."""

    def __init__(self, reason: str = "nobody is at the terminal to approve it") -> None:
        self.reason = reason

    def __call__(self, request: ApprovalRequest) -> Approval:
        return Approval("refuse", reason=self.reason)


# Effects a change set cannot show or take back: these keep their per-command prompt.
OUTSIDE_FILES = frozenset(
    {
        "network",
        "network-redirect",
        "lookup",
        "sends-data",
        "fetch",
        "download-to-shell",
        "privilege",
        "changes-state",
    }
)
# The rules whose "ask" means only "this changes files", which the change set shows.
FILE_CHANGE_RULES = frozenset({"file-changes", "writes-files", "sed-write"})
# find actions that run a program on each file (the rest only delete or write files)
FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
# Traits of code running that the policy could not read: never file changes only.
RUNS_CODE = frozenset(
    {"executes", "code-from-stdin", "script-file", "sed-exec", "awk-side-effects", "evaluates"}
)


def file_changes_only(evaluation: Evaluation) -> bool:
    """Whether every reason the policy asks about ``evaluation`` is a file change: each
    segment asked about was asked by a file-change rule alone, and nothing in the line is
    an interpreter, a script given to a shell, code the policy could not read, or an effect
    outside the files (network, privilege, processes, shell state, scheduling …)."""
    from shellagent.policy.programs import INTERPRETERS

    segments = evaluation.segments
    if evaluation.decision != "ask" or not segments:
        return False
    for s in segments:
        if s.program in INTERPRETERS or s.context.endswith(" -c") or s.context == "eval":
            return False
        if (OUTSIDE_FILES | RUNS_CODE) & set(s.traits):
            return False
        rules = FILE_CHANGE_RULES
        if s.program == "find" and not FIND_RUNS & set(s.argv):
            rules = rules | {"find-actions"}  # -delete, -fprint: file changes only
        if s.decision == "ask" and not (s.asked_by and set(s.asked_by) <= rules):
            return False
        if s.decision == "deny":
            return False
    return True


class ChangesApprover:
    """``review = "changes"``: a command the policy asks about only because it changes
    files runs without a prompt (its changes wait in the change set); anything else —
    interpreters, code it cannot read, processes, shell state, scheduling, effects outside
    the files — goes to ``ask_person`` as before."""

    def __init__(self, ask_person: Approver) -> None:
        self.ask_person = ask_person

    def __call__(self, request: ApprovalRequest) -> Approval:
        if request.job is None and file_changes_only(request.evaluation):
            return Approval("approve", reason="file changes only: reviewed in the change set")
        return self.ask_person(request)
