"""What the policy says about a command: the ``Decision``, per ``Segment`` and for the line.

``Decision`` is the verdict, ordered from the most to the least permissive
(``ALLOW < ASK < DENY``), so ``max()`` of several is the strictest; its values are the words
policy files, transcripts and ``--json`` output use (``"allow"``, ``"ask"``, ``"deny"``).
A ``Segment`` is one simple command of the line with its own decision and reasons; an
``Evaluation`` is what ``PolicyEngine.check`` returns for the whole line: the strictest
segment's decision, the reasons that led to it, and every segment.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from shellagent.events import Verdict
from shellagent.jsontypes import JsonObject

__all__ = ["Decision", "Evaluation", "Segment"]


class Decision(enum.StrEnum):
    """The policy's verdict on a command: allow it, ask the user first, or never run it.

    Members are ordered by strictness, ``ALLOW < ASK < DENY``, so the verdict on a line made
    of several commands is ``max()`` of theirs; comparing with a plain string reads the
    string as a decision first (``Decision.ASK > "allow"``; ``"maybe"`` raises ValueError).
    A member *is* its word (``Decision.ASK == "ask"``, ``f"{Decision.ASK}" == "ask"``,
    ``json.dumps`` writes ``"ask"``), so code and files that use the words keep working.

        >>> max(Decision.ALLOW, Decision.DENY, Decision.ASK)
        <Decision.DENY: 'deny'>
        >>> Decision("ask") is Decision.ASK
        True

    ``ALLOW``  runs without asking (read-only commands may run where writes are refused).
    ``ASK``    is shown to the user with the reasons; it runs only when they approve it.
    ``DENY``   never runs; the model is told why. No approval and no "always" overrides it.
    """

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"

    @property
    def rank(self) -> int:
        """0 for ``ALLOW``, 1 for ``ASK``, 2 for ``DENY``: the order ``max()`` follows."""
        return _RANKS[self]

    @property
    def word(self) -> Verdict:
        """The decision as the transcript and the wire spell it (``events.Verdict``)."""
        return _WORDS[self]

    # str's comparisons would order the words alphabetically; these order by strictness.
    def __lt__(self, other: str) -> bool:
        return self.rank < Decision(other).rank

    def __le__(self, other: str) -> bool:
        return self.rank <= Decision(other).rank

    def __gt__(self, other: str) -> bool:
        return self.rank > Decision(other).rank

    def __ge__(self, other: str) -> bool:
        return self.rank >= Decision(other).rank


_RANKS = {decision: rank for rank, decision in enumerate(Decision)}
_WORDS: dict[Decision, Verdict] = {
    Decision.ALLOW: "allow",
    Decision.ASK: "ask",
    Decision.DENY: "deny",
}


@dataclass(frozen=True)
class Segment:
    """One simple command as it will run, with the decision on it."""

    key: str  # exact normalised text; what "always allow" stores
    argv: tuple[str, ...]  # after unwrapping wrappers
    program: str
    decision: Decision
    reasons: tuple[str, ...]
    executable: str | None = None  # resolved path when argv0 contained a slash
    wrappers: tuple[str, ...] = ()
    assignments: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    context: str = ""
    traits: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()  # ids of the rules that decided
    rememberable: bool = True
    # allowed by rules that claim it changes nothing (``read_only = true``), with no write,
    # no effect its spec knows of, and not because the user said "always": such segments
    # run where the kernel refuses writes
    read_only: bool = False
    effects: tuple[str, ...] = ()  # what its options and operands change, by its spec
    # why it is asked about: the ids of the rules that chose "ask", or "structure" (its
    # shape: a substitution, a dangerous variable …), "spec" (options the spec cannot
    # read), "effects" (a read-only rule skipped for an effect), "run-time-arguments"
    asked_by: tuple[str, ...] = ()

    def to_dict(self) -> JsonObject:
        """The segment as ``policy check --json`` and the transcript's ``policy`` line show it."""
        return {
            "argv": list(self.argv),
            "program": self.program,
            "decision": self.decision.word,
            "reasons": list(self.reasons),
            "executable": self.executable,
            "wrappers": list(self.wrappers),
            "assignments": list(self.assignments),
            "writes": list(self.writes),
            "context": self.context,
            "traits": list(self.traits),
            "rules": list(self.rules),
            "key": self.key,
            "read_only": self.read_only,
            "effects": list(self.effects),
        }


@dataclass(frozen=True)
class Evaluation:
    """The policy's answer for one command line (``PolicyEngine.check``).

    ``decision`` is the strictest of the segments' decisions (or ``ASK`` when bash may not
    parse the line as shown, or no command was found); ``reasons`` are the reasons of the
    segments that decided it, each prefixed with the segment's text; ``segments`` holds every
    simple command of the line, scripts given to ``bash -c``/``eval`` included, in the order
    they were found; ``command`` is the line as checked.
    """

    decision: Decision
    reasons: tuple[str, ...]
    segments: tuple[Segment, ...]
    command: str = ""
    # carried variables the command expands whose values are worth showing beside it
    # (name, value): a value is code when bash evaluates it, and the line does not show it
    carried: tuple[tuple[str, str], ...] = ()
    # (byte offset in the line's UTF-8, kind) of every command substitution, process
    # substitution ("c") and arithmetic expansion ("a") whose commands and values were
    # judged: the sandbox refuses to run a read-only line holding any other
    # (``Sandbox.run(judged=…)``)
    substitutions: tuple[tuple[int, str], ...] = ()

    @property
    def read_only(self) -> bool:
        """Allowed only because every part claims to change nothing: run it read-only."""
        return self.decision == Decision.ALLOW and all(s.read_only for s in self.segments)

    def to_dict(self) -> JsonObject:
        """``{"decision", "reasons", "read_only", "segments"}``: ``policy check --json``."""
        return {
            "decision": self.decision.word,
            "reasons": list(self.reasons),
            "read_only": self.read_only,
            "segments": [s.to_dict() for s in self.segments],
        }
