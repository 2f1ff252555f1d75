"""The change-set review of an ``ask`` session (docs/transactions.md).

The session's sandbox sees the home directory and its other writable directories through
overlays (``transaction.Workspace``), so every write lands in an upper layer and nothing
touches the user's files. After every command that could have written, the change set so
far is read and the real side of each new change fingerprinted (a later apply refuses a
file that changed on the host meanwhile). At the end the change set is shown and, as the
user or the request says, applied (outside the sandbox, with the user's own rights, never
re-running a command), discarded, or kept for ``shellagent apply SESSION``.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shellagent.errors import ShellagentError
from shellagent.events import ChangesDecision, ChangeSetRecord, ChangesOutcome

if TYPE_CHECKING:
    from shellagent.agent import Approval, ApprovalRequest, Approver
    from shellagent.policy import Evaluation
    from shellagent.sandbox import Profile
    from shellagent.transaction import ChangeSet, Workspace

log = logging.getLogger("shellagent.daemon")

DIFF_SENT_MAX = 256 * 1024  # the diff a client can page through; the rest is counted
PATHS_RECORDED = 50  # changed paths kept in the transcript's ``changes`` event


def overlay_problem() -> str | None:
    """Why this machine cannot run sessions on overlays, or None when it can."""
    from shellagent.sandbox import find_bwrap

    try:
        bwrap = find_bwrap()
    except ShellagentError as exc:
        return exc.message
    if not bwrap.has_overlay:
        return f"bwrap at {bwrap.path} is older than 0.9 and cannot mount overlays"
    return None


@dataclass
class Review:
    """One session's overlays and what became of them."""

    workspace: Workspace
    outcome: ChangesOutcome = "none"
    resumed: bool = False  # the kept overlays of an earlier session, continued

    @classmethod
    def create(cls, session: str, profile: Profile) -> Review:
        """Overlays over the home directory and every directory ``profile`` may write,
        held (locked) by this review until ``release``; kept change sets too old to
        matter are dropped first."""
        from shellagent.transaction import Workspace
        from shellagent.transaction.workspace import expire_kept

        try:
            expire_kept()
        except (OSError, ShellagentError) as exc:
            log.warning("expiring old kept change sets: %s", exc)
        lowers = [Path.home(), *profile.writable]
        workdir = profile.workdir
        return cls(Workspace.create(session, [p for p in lowers if p.is_dir()], workdir=workdir))

    @classmethod
    def resume(cls, session: str, profile: Profile) -> Review | None:
        """The kept overlays of ``session``, for a follow-up that goes on where it stopped;
        None when they are gone (applied, discarded) or do not cover what ``profile`` may
        write (the follow-up runs in another directory)."""
        from shellagent.transaction import Workspace

        try:
            workspace = Workspace.open(session)
        except ShellagentError:
            return None
        lowers = [t.lower for t in workspace.trees]
        needed = [p.resolve() for p in (Path.home(), *profile.writable) if p.is_dir()]
        if not all(any(p.is_relative_to(lower) for lower in lowers) for p in needed):
            return None
        try:
            workspace.hold()  # an apply or discard of it may be running right now
        except ShellagentError:
            return None
        return cls(workspace, resumed=True)

    def release(self) -> None:
        """No sandbox works on the overlays any more and the review is over: let an apply,
        a discard or a follow-up have them."""
        self.workspace.release()

    def profile(self, base: Profile) -> Profile:
        """``base`` with its write grants turned into overlays."""
        return dataclasses.replace(base, writable=(), overlays=self.workspace.overlays())

    def changes(self) -> ChangeSet:
        """The change set so far; the real side of each new change is fingerprinted."""
        from shellagent.transaction import compute
        from shellagent.transaction.apply import Baseline

        changes = compute(self.workspace)
        Baseline(self.workspace).note(changes)
        return changes

    def space_problem(self, changes: ChangeSet) -> str | None:
        """Why the session must stop writing: its upper layers passed the cap, or the
        disk under them is nearly full (the upper layers are on the host's disk)."""
        import os

        cap = changes_cap_bytes()
        if changes.stored_bytes > cap:
            return (
                f"the session's changes take {_gib(changes.stored_bytes)}, more than the "
                f"{_gib(cap)} a session may keep (SHELLAGENT_CHANGES_CAP_GB sets it): the "
                "task stops here, its changes are kept for review"
            )
        try:
            st = os.statvfs(self.workspace.trees[0].upper)
        except (OSError, IndexError):
            return None
        free = st.f_bavail * st.f_frsize
        if free < min(DISK_RESERVE_BYTES, st.f_blocks * st.f_frsize // 20):
            return (
                f"only {_gib(free)} is left on the disk that holds the session's changes: "
                "the task stops here, its changes are kept for review"
            )
        return None

    def finish(self, changes: ChangeSet, decision: ChangesDecision | None) -> tuple[str, int]:
        """Apply, discard or keep ``changes``; the line to show and how many landed."""
        from shellagent.transaction.apply import apply

        session = self.workspace.session
        if decision == "apply":
            try:
                result = apply(self.workspace, changes)
            except ShellagentError as exc:
                self.outcome = "refused"
                self.release()
                hint = f" ({exc.hint})" if exc.hint else ""
                return f"{exc.message}; kept{hint}", 0
            self.workspace.remove()
            self.outcome = "applied"
            return (
                f"applied {result.applied} change{'' if result.applied == 1 else 's'}; "
                f"undo with `shellagent undo {session}`",
                result.applied,
            )
        if decision == "discard":
            self.discard()
            return "discarded: your files are as they were", 0
        self.outcome = "kept"
        self.release()
        return (
            f"kept, not applied: `shellagent apply {session}` shows and applies them, "
            f"`--discard` drops them",
            0,
        )

    def discard(self, outcome: ChangesOutcome = "discarded") -> None:
        self.workspace.remove()
        self.outcome = outcome

    def record(self, changes: ChangeSet, reason: str = "") -> ChangeSetRecord:
        return ChangeSetRecord(
            outcome=self.outcome,
            created=changes.count("created"),
            modified=changes.count("modified") + changes.count("mode"),
            deleted=changes.count("deleted"),
            renamed=changes.count("renamed"),
            paths=tuple(str(c.path) for c in list(changes)[:PATHS_RECORDED]),
            reason=reason,
        )


CHANGES_CAP_BYTES = 8 << 30
DISK_RESERVE_BYTES = 1 << 30


def changes_cap_bytes() -> int:
    """The most a session's upper layers may hold (``SHELLAGENT_CHANGES_CAP_GB``)."""
    import os

    try:
        return int(float(os.environ["SHELLAGENT_CHANGES_CAP_GB"]) * (1 << 30))
    except (KeyError, ValueError):
        return CHANGES_CAP_BYTES


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MiB"


def diff_text(changes: ChangeSet) -> str:
    text = changes.diff()
    if len(text) > DIFF_SENT_MAX:
        rest = text[DIFF_SENT_MAX:].count("\n")
        text = text[:DIFF_SENT_MAX] + f"\n… {rest} more lines (shellagent apply SESSION --diff)\n"
    return text


def interrupted_note() -> str | None:
    """A line about an apply that died midway (the daemon was killed), or None."""
    from shellagent.transaction.apply import interrupted

    try:
        records = interrupted()
    except OSError:
        return None
    if not records:
        return None
    r = records[0]
    return (
        f"an apply of session {r.session} was interrupted: {len(r.done)} of {r.total} changes "
        f"landed, each file whole; `shellagent undo {r.session}` takes them back"
    )


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
        if s.decision == "ask" and not (s.asked_by and set(s.asked_by) <= FILE_CHANGE_RULES):
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
        from shellagent.agent import Approval

        if request.job is None and file_changes_only(request.evaluation):
            return Approval("approve", reason="file changes only: reviewed in the change set")
        return self.ask_person(request)
