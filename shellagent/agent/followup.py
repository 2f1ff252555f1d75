"""Follow-ups: a task that continues an earlier session (``ask -c``, ``ask --resume ID``,
and every line of an interactive ``ask`` after the first).

The model is not handed the earlier sessions' whole conversations: a small model's context
holds a few turns, and the loop's own trimming (``context.py``) keeps the system prompt and
the task whole. Instead the task message starts with a digest of what came before: each
earlier task, the commands that ran with their exit codes and the last lines of their
output, and how it ended, oldest first. The chain is followed back through
``session_start.continues``; tasks that do not fit in ``DIGEST_CHARS`` are dropped oldest
first, and ``Earlier.dropped`` says how many, so the user can be told.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shellagent.errors import InputError, ShellagentError
from shellagent.events import ChangeSetRecord, Execution
from shellagent.transcript.reader import Transcript, find_session, read_transcript

if TYPE_CHECKING:
    from shellagent.sandbox import Shell

__all__ = ["DIGEST_CHARS", "Earlier", "ShellStates", "last_session", "load_earlier"]

DIGEST_CHARS = 1_500  # the digest's share of the task message
CHAIN_MAX = 50  # earlier sessions followed back at most
OUTPUT_LINES = 3  # last lines of each command's output kept
LINE_CHARS = 120
COMMANDS_KEPT = 6  # the last commands of each earlier task
SHELL_STATES_KEPT = 32  # sessions whose final shell state a follow-up can start from


@dataclass(frozen=True)
class Earlier:
    """What a follow-up carries over from the session it continues."""

    session: str  # the session continued (the newest of the chain)
    text: str  # the digest, for the task message
    tasks: int  # earlier tasks in the digest
    dropped: int  # earlier tasks left out because they did not fit
    changes: str  # that session's change-set outcome: "kept" means its copy goes on
    cwd: str | None  # its shell's working directory when it ended


def last_session(directory: Path | None = None) -> str:
    """The newest session started by ``ask`` (what ``ask -c`` continues)."""
    from itertools import groupby

    from shellagent.transcript.reader import transcript_paths

    # Ids sort by their start second; within one second by their first event's time.
    newest_first = sorted(transcript_paths(directory), key=lambda p: p.name, reverse=True)
    for _second, group in groupby(newest_first, key=lambda p: p.name[:15]):
        started = [t for t in map(read_transcript, group) if _by_ask(t)]
        if started:
            return max(started, key=lambda t: t.started or 0.0).session_id
    raise InputError("there is no earlier session to continue", hint='ask "what to do" starts one')


def _by_ask(transcript: Transcript) -> bool:
    start = transcript.start  # not a key binding's proposal, nor a task set's or job's run
    return start is not None and start.source in ("ask", None)


def load_earlier(
    ident: str, directory: Path | None = None, *, budget: int = DIGEST_CHARS
) -> Earlier:
    """The digest of session ``ident`` (an id or a unique prefix) and those it continued."""
    newest = read_transcript(find_session(ident, directory))
    if newest.start is None:
        raise InputError(
            f"session {ident!r} has no start record and cannot be continued",
            hint="`shellagent logs show ID` shows what it holds",
        )
    chain = [newest]
    seen = {newest.session_id}
    while len(chain) < CHAIN_MAX:
        start = chain[-1].start
        link = start.continues if start else None
        if not link or link in seen:
            break
        seen.add(link)
        try:
            chain.append(read_transcript(find_session(link, directory)))
        except InputError:
            break  # an earlier session was deleted: the digest starts after it
    parts: list[str] = []
    used = 0
    for transcript in chain:  # newest first, so the oldest are the ones dropped
        part = _digest(transcript)
        if parts and used + len(part) > budget:
            break
        parts.append(part[: max(budget - used, 200)])
        used += len(parts[-1])
    records = newest.of_type(ChangeSetRecord)
    end = newest.end
    return Earlier(
        session=newest.session_id,
        text="\n".join(reversed(parts)),
        tasks=len(parts),
        dropped=len(chain) - len(parts),
        changes=records[-1].outcome if records else "none",
        cwd=end.cwd if end else None,
    )


def _digest(transcript: Transcript) -> str:
    lines = [f"Earlier task: {transcript.task}"]
    executions = transcript.of_type(Execution)
    if len(executions) > COMMANDS_KEPT:
        lines.append(f"  ({len(executions) - COMMANDS_KEPT} earlier commands not shown)")
    for run in executions[-COMMANDS_KEPT:]:
        code = "timed out" if run.timed_out else f"exit {run.exit_code}"
        lines.append(f"  $ {_clip(run.command)}   ({code})")
        tail = [line for line in run.output.splitlines() if line.strip()][-OUTPUT_LINES:]
        lines.extend(f"    {_clip(line)}" for line in tail)
    end = transcript.end
    if end is None:
        lines.append("  it was interrupted")
    else:
        said = f': "{_clip(end.summary)}"' if end.summary else ""
        lines.append(f"  it ended {transcript.verdict} ({end.reason}){said}")
    return "\n".join(lines)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 1] + "…"


class ShellStates:
    """The final shell states (``Sandbox.export_state``) of the last ``kept`` sessions,
    newest last, so a follow-up's sandbox starts with the variables and functions its
    session left. In memory only: a state may hold values a command set (tokens), so it
    dies with the process that keeps it. Safe from any thread."""

    def __init__(self, kept: int = SHELL_STATES_KEPT) -> None:
        self.kept = kept
        self._states: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session: str) -> bytes | None:
        with self._lock:
            return self._states.get(session)

    def keep(self, session: str, shell: Shell) -> None:
        """Remember ``shell``'s final state for a follow-up of ``session``; a shell that
        cannot export one (not a sandbox, or gone) leaves nothing."""
        from shellagent.sandbox import Resumable

        if not isinstance(shell, Resumable):
            return
        try:
            state = shell.export_state()
        except (OSError, ShellagentError):
            state = None
        if state is None:
            return
        with self._lock:
            self._states[session] = state
            self._states.move_to_end(session)
            while len(self._states) > self.kept:
                self._states.popitem(last=False)
