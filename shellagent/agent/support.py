"""Whether what a session did supports the model's closing summary.

A small model's "done" text is a guess at what should have happened: it says "Created
~/backup.tgz" after ``tar`` exited 2, "Deleted 5 old .log files" after the user refused the
delete. ``unsupported`` reads the summary's checkable claims and names those the session
does not back: a file said to be made or saved that is in no change set and no output, a
deletion when nothing was deleted, a count that appears in no output. Claims it cannot
check (an answer in words) are left alone: the user's "did that do it?" judges those. The
problems are shown instead of a plain "done", recorded on the transcript's ``end``, and
keep the session out of exports and worked examples.

``succeeded`` is how a command's exit status counts: a pipeline whose reader finished early
(``ps aux | head -5``) ends with 141 (SIGPIPE under pipefail) and did its job.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Ran", "echoes_instructions", "last_failed", "succeeded", "unsupported"]

SIGPIPE_EXIT = 128 + 13

_MADE = re.compile(
    r"\b(created?|creating|saved?|saving|wr[io]te|written|writing|made|backed up|"
    r"copied|archived|compressed|generated|exported|stored|put)\b",
    re.IGNORECASE,
)
_DELETED = re.compile(r"\b(deleted?|removed?|cleaned up|cleared|erased|purged)\b", re.IGNORECASE)
_PATHLIKE = re.compile(r"^(?:~|\.{0,2}/|[\w.-]+/)[\w./~+-]*$|^[\w+-][\w.+-]*\.[A-Za-z0-9]{1,6}$")
_NUMBER = re.compile(r"^\d+$")
_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]
_PUNCT = "`'\"“”‘’()[]{}<>,;:!?*"


@dataclass(frozen=True)
class Ran:
    """A command of the session as the check needs it."""

    command: str
    output: str
    exit_code: int | None


def succeeded(command: str, exit_code: int | None, timed_out: bool = False) -> bool:
    """Whether a command's exit counts as success: 0, or 141 for a pipeline (an earlier
    stage stopped by SIGPIPE because its reader had read what it needed)."""
    if timed_out or exit_code is None:
        return False
    return exit_code == 0 or (exit_code == SIGPIPE_EXIT and "|" in command)


def last_failed(ran: Sequence[Ran]) -> Ran | None:
    """The last command, when it failed; None when it succeeded or nothing ran."""
    if ran and not succeeded(ran[-1].command, ran[-1].exit_code):
        return ran[-1]
    return None


def unsupported(
    summary: str,
    task: str,
    ran: Sequence[Ran],
    changed: Iterable[tuple[str, Path]] | None,
) -> tuple[str, ...]:
    """The summary's claims this session does not support, each as a short phrase.

    ``changed`` is the change set as (kind, path) pairs, or None when the session wrote
    straight to the user's files (no overlays) and no change set is known."""
    outputs = "\n".join(r.output for r in ran)
    worked = [r.command for r in ran if succeeded(r.command, r.exit_code)]
    changes = list(changed) if changed is not None else None
    problems: list[str] = []
    for sentence in _sentences(summary):
        if _MADE.search(sentence):
            for path in _paths(sentence):
                if not _path_supported(path, outputs, worked, changes):
                    problems.append(f"no file {path} was made")
        if _DELETED.search(sentence) and not _deleted_supported(sentence, worked, changes):
            problems.append("nothing was deleted")
    for number in _numbers(summary):
        if not _number_supported(number, task, outputs, worked):
            problems.append(f"{number} appears in no output")
    return tuple(dict.fromkeys(problems))


def echoes_instructions(summary: str, instructions: str, outputs: Iterable[str] = ()) -> bool:
    """Whether ``summary`` only repeats words of the model's own instructions (``instructions``,
    its system prompt: the reply format's "what was done, or the answer, with the output
    that shows it", a rule, a worked example's summary) instead of saying anything of this
    session: asked in German, a 135M model answered with the format's own text. Such a
    reply is no answer. Text that a command's output printed too is not an echo."""
    said = _plain(summary)
    if len(said.split()) < ECHO_WORDS or said not in _plain(instructions):
        return False
    return not any(said in _plain(output) for output in outputs)


ECHO_WORDS = 4  # fewer words ("done", "no files found") may be in the prompt by chance


def _plain(text: str) -> str:
    """``text`` lower-case, its words separated by single spaces, without punctuation."""
    return " ".join(t for t in (w.strip(_PUNCT + ".").lower() for w in text.split()) if t)


def _sentences(text: str) -> list[str]:
    # a sentence ends at ". " or ";" or a line end, never inside a file name ("a.txt")
    return [s for s in re.split(r"(?<=[.;:!?])\s+|\n", text) if s.strip()]


def _tokens(text: str) -> list[str]:
    return [t.strip(_PUNCT).rstrip(".") for t in text.split()]


def _paths(sentence: str) -> list[str]:
    return [t for t in _tokens(sentence) if len(t) > 2 and _PATHLIKE.match(t)]


def _numbers(text: str) -> list[str]:
    return [t for t in _tokens(text) if _NUMBER.match(t)]


def _path_supported(
    path: str, outputs: str, worked: Sequence[str], changes: list[tuple[str, Path]] | None
) -> bool:
    name = Path(path.rstrip("/")).name
    if not name or name in (".", ".."):
        return True
    if changes is not None and any(
        p.name == name or path.rstrip("/") in str(p) for _, p in changes
    ):
        return True
    if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", outputs):
        return True
    if changes is None:  # written straight to the user's files: a command that worked
        return any(name in c for c in worked) or Path(path).expanduser().exists()
    return False


def _deleted_supported(
    sentence: str, worked: Sequence[str], changes: list[tuple[str, Path]] | None
) -> bool:
    if re.search(r"\b(no|nothing|none|not|zero)\b", sentence, re.IGNORECASE):
        return True  # "nothing to delete", "no files were removed"
    if changes is not None:
        return any(kind in ("deleted", "renamed") for kind, _ in changes)
    return bool(worked)


def _number_supported(number: str, task: str, outputs: str, worked: Sequence[str]) -> bool:
    pattern = rf"(?<!\d){re.escape(number)}(?!\d)"
    if re.search(pattern, outputs) or re.search(pattern, task):
        return True
    value = int(number)
    if value < len(_WORDS) and re.search(rf"\b{_WORDS[value]}\b", task, re.IGNORECASE):
        return True
    # "head -5" or "-mtime +30" in a command that worked says the count as much as output
    return any(re.search(pattern, c) for c in worked)
