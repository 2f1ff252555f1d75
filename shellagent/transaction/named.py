"""A place that runs code later which the request itself names (issue 40, items 6 and 7).

``chmod +x ~/bin/cleanup.sh``, asked for by name, used to be denied outright like any
write to ``~/bin``. A protected place the user names in the request is theirs to change,
but not silently, and never by ``-y``:

- ``named_places`` finds the paths the request's text names that the apply would hold back
  (``guard.py``: startup places, settings, directories on PATH, install trees, git's code
  paths, workspace hooks; not secrets and not shellagent's own);
- ``NamedPolicy`` turns the policy's ``deny`` of a command into ``ask`` when the only rule
  that denied it is the one about protected places and every protected place it writes is
  named; the segment is then asked by ``NAMED_RULE``, never remembered by "always", and
  ``NAMED_RULE`` is what tells the approval to want an explicit key (``-y`` refuses it,
  ``daemon/explicit.py``);
- the sandbox leaves the named places writable on the copy (``Overlay.named``);
- the apply still holds the change back until ``shellagent apply SESSION --include PATH``.

Only with overlays: without a copy to work on, the deny stands.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
from pathlib import Path

from shellagent.policy import Decision, Evaluation, PolicyEngine, Segment, ShellState
from shellagent.policy.pathclass import Places
from shellagent.transaction.guard import Guard

__all__ = ["NAMED_RULE", "PROTECTED_RULE", "NamedPolicy", "named_in", "named_places"]

NAMED_RULE = "protected-named"  # the id a segment is asked by when it writes a named place
PROTECTED_RULE = "protected-writes"  # the presets' rule that denies writes to such places
TIERS = frozenset({"startup", "config", "path", "git", "workspace"})  # not secret, never


def named_places(task: str, cwd: Path, home: Path | None = None) -> tuple[Path, ...]:
    """The paths ``task`` names (``~/bin/cleanup.sh``, ``/home/u/.bashrc``,
    ``./.envrc``, ``.git/hooks/pre-commit``) that the apply holds back until named, each
    with its parent resolved. Only what is written out: a folder the text describes in
    words is not a name."""
    guard = Guard(home)
    base = home if home is not None else Path.home()
    found: list[Path] = []
    for word in _words(task):
        if "/" not in word and not word.startswith((".", "~")):
            continue
        if word == "~" or word.startswith("~/"):
            path = base / word[2:]
        else:
            path = Path(os.path.expanduser(word))
        if not path.is_absolute():
            path = cwd / path
        path = Path(os.path.normpath(path))
        try:
            path = Path(os.path.realpath(path.parent)) / path.name
        except OSError:
            continue
        why = guard.reason(path)
        if why is not None and why.tier in TIERS:
            found.append(path)
    return tuple(dict.fromkeys(found))


def _words(task: str) -> list[str]:
    """Path-like words of a request: shell-split when it parses, else split on spaces;
    quotes and trailing punctuation of prose (``~/.bashrc,``) dropped."""
    try:
        words = shlex.split(task)
    except ValueError:
        words = task.split()
    return [re.sub(r"[,;:!?)\]'\"`]+$", "", w).lstrip("(['\"`") for w in words]


def named_in(evaluation: Evaluation) -> tuple[str, ...]:
    """The named places ``evaluation`` asks about (what the approval shows), if any."""
    found: list[str] = []
    for segment in evaluation.segments:
        if NAMED_RULE in segment.asked_by:
            found += segment.writes
    return tuple(dict.fromkeys(found))


class NamedPolicy(PolicyEngine):
    """``engine``'s judgement, with a deny that only protects places the request names
    turned into an ``ask`` (``NAMED_RULE``). ``named`` may be set later (once the session
    is known to run on a copy); empty, nothing changes."""

    def __init__(self, engine: PolicyEngine, named: tuple[Path, ...] = ()) -> None:
        super().__init__(
            engine.policy,
            workspace=Path(engine.workspace) if engine.workspace is not None else None,
            writable=[Path(w) for w in engine.writable],
            home=Path(engine.home),
            always=engine.always,
        )
        self.starting_repo = engine.starting_repo
        self.named = named
        self._denies = {r.id for r in engine.policy.rules if r.decision == Decision.DENY}

    def check(self, command: str, state: ShellState | None = None) -> Evaluation:
        evaluation = super().check(command, state)
        if not self.named or evaluation.decision != Decision.DENY:
            return evaluation
        cwd = state.cwd if state is not None and state.cwd is not None else None
        places = Places(self.home, self.workspace, str(cwd) if cwd else None)
        segments = []
        for segment in evaluation.segments:
            if segment.decision != Decision.DENY:
                segments.append(segment)
                continue
            eased = self._ease(segment, places)
            if eased is None:
                return evaluation  # denied for another reason: the whole line stays denied
            segments.append(eased)
        decision = max((s.decision for s in segments), default=Decision.ASK)
        reasons = tuple(
            f"{s.key}: {r}" for s in segments if s.decision == decision for r in s.reasons
        )
        return dataclasses.replace(
            evaluation, decision=decision, reasons=reasons, segments=tuple(segments)
        )

    def _ease(self, segment: Segment, places: Places) -> Segment | None:
        """``segment`` asked about instead of denied, when the only rule that denied it
        protects places and every protected place it writes is named; else None."""
        if not segment.rules or {r for r in segment.rules if r in self._denies} != {PROTECTED_RULE}:
            return None
        writes = []
        for written in segment.writes:
            if "protected" not in places.classify(written):
                continue
            resolved = places.resolve(written)
            if resolved is None:
                return None
            path = Path(resolved)
            try:
                path = Path(os.path.realpath(path.parent)) / path.name
            except OSError:
                return None
            if path not in self.named:
                return None
            writes.append(written)
        if not writes:
            return None
        shown = ", ".join(writes)
        why = (
            f"changes {shown}, which your request names: a place that runs code later. It "
            "runs on the copy only if you approve it with its own key (never with -y), and "
            "lands only with `shellagent apply SESSION --include PATH`"
        )
        return dataclasses.replace(
            segment,
            decision=Decision.ASK,
            reasons=(why,),
            rules=(*segment.rules, NAMED_RULE),
            asked_by=(NAMED_RULE,),
            rememberable=False,
            read_only=False,
        )
