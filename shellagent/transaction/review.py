"""The change-set review of an ``ask`` session (docs/transactions.md).

The session's sandbox sees the home directory and its other writable directories through
overlays (``transaction.Workspace``), so every write lands in an upper layer and nothing
touches the user's files. After every command that could have written, the change set so
far is read and the real side of each new change fingerprinted (a later apply refuses a
file that changed on the host meanwhile). At the end the change set is shown and, as the
user or the request says, applied (outside the sandbox, with the user's own rights, never
re-running a command), discarded, or kept for ``shellagent apply SESSION``.

A ``Review`` is what ``Agent.run`` takes as ``Hooks.review`` (``agent.parts.ChangeReview``):
the sandbox is opened on its ``profile``, and ``conclude`` runs once the loop is over. Who
decides is the caller's ``decide`` (the daemon asks its client; without one the changes
are kept, never applied unasked), and ``on_done`` hears the result.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from shellagent.errors import ShellagentError
from shellagent.events import ChangesDecision, ChangeSetRecord, ChangesOutcome, EndReason

if TYPE_CHECKING:
    from shellagent.sandbox import Profile
    from shellagent.transaction.changeset import ChangeSet
    from shellagent.transaction.workspace import Workspace

__all__ = [
    "Review",
    "changes_cap_bytes",
    "diff_text",
    "interrupted_note",
    "open_reviewed",
    "overlay_problem",
]

log = logging.getLogger("shellagent.daemon")

S = TypeVar("S")
Decide = Callable[["ChangeSet", EndReason], "ChangesDecision | None"]
"""Who decides about a non-empty change set (the session ended for the reason given):
apply, discard or keep it; None keeps it."""
Done = Callable[[ChangesOutcome, str, int], None]
"""Hears what became of the change set: the outcome, the line to show, how many landed."""

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
    decide: Decide | None = None
    on_done: Done | None = None
    dry_run: bool = False  # shown, then discarded whatever ``decide`` says
    changed: list[tuple[str, Path]] | None = None  # the change set, once concluded
    # places that run code later which the request names: writable on the copy
    # (``transaction/named.py``); the apply still wants them named with --include
    named: tuple[Path, ...] = ()

    @property
    def session(self) -> str:
        return self.workspace.session

    @classmethod
    def create(cls, session: str, profile: Profile) -> Review:
        """Overlays over the home directory and every directory ``profile`` may write,
        held (locked) by this review until ``release``; kept change sets too old to
        matter are dropped first."""
        from shellagent.transaction.workspace import Workspace, expire_kept

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
        from shellagent.transaction.workspace import Workspace

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
        """``base`` with its write grants turned into overlays, capped while commands run
        (``space_problem`` then stops the task after the command the cap stopped)."""
        from shellagent.sandbox import DiskCap

        return dataclasses.replace(
            base,
            writable=(),
            overlays=self.workspace.overlays(self.named),
            disk_cap=DiskCap(changes_cap_bytes()),
        )

    def changes(self) -> ChangeSet:
        """The change set so far; the real side of each new change is fingerprinted."""
        from shellagent.transaction.apply import Baseline
        from shellagent.transaction.changeset import compute

        changes = compute(self.workspace)
        Baseline(self.workspace).note(changes)
        return changes

    def space_problem(self, changes: ChangeSet) -> str | None:
        """Why the session must stop writing: its upper layers passed the cap, or the
        disk under them is nearly full (the upper layers are on the host's disk). The
        sandbox holds both while commands run (``DiskCap``); this ends the task after."""
        import os

        from shellagent.sandbox import disk_reserve_bytes

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
        if free < disk_reserve_bytes(st):
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

    def conclude(self, reason: EndReason) -> ChangeSetRecord:
        """Once nothing writes into the overlays: read the change set, let ``decide``
        choose, apply, discard or keep it, tell ``on_done``; the transcript's record."""
        changes = self.changes()
        self.changed = [(c.kind, c.path) for c in changes]
        if not changes:
            self.discard("none")
            return self.record(changes)
        decision = self.decide(changes, reason) if self.decide is not None else None
        if self.dry_run:
            self.discard("dry_run")
            message, applied = "dry run: nothing was applied", 0
        else:
            message, applied = self.finish(changes, decision)
        if self.on_done is not None:
            self.on_done(self.outcome, message, applied)
        return self.record(changes, message if self.outcome == "refused" else "")

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


def changes_cap_bytes() -> int:
    """The most a session's upper layers may hold (``SHELLAGENT_CHANGES_CAP_GB``)."""
    from shellagent.sandbox import changes_cap_bytes as cap

    return cap()


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


def open_reviewed(
    session: str,
    profile: Profile,
    open_shell: Callable[[Profile], S],
    *,
    resume: str | None = None,
    named: tuple[Path, ...] = (),
) -> tuple[S, Review] | str:
    """A sandbox (``open_shell``) on overlays for ``session``, and its review; a follow-up
    goes on with the changes session ``resume`` kept, when they cover ``profile``;
    ``named``: protected places the request names, writable on the copy. The reason, when
    this machine cannot run one on overlays."""
    problem = overlay_problem()
    if problem is not None:
        return problem
    resumed = Review.resume(resume, profile) if resume else None
    for review in (resumed, None):
        review = review or Review.create(session, profile)
        review.named = named
        try:
            shell = open_shell(review.profile(profile))
        except ShellagentError as exc:
            problem = exc.message
            if not review.resumed:
                review.discard("none")
                return problem
        else:
            return shell, review
    return problem or "the overlays could not be opened"
