"""What ``ask`` shows and asks: events as text (or JSON lines), the approval prompt.

Standard library only at import time. prompt-toolkit is imported inside ``approve``,
the first time a prompt is actually shown. Events arrive as the dataclasses of
``shellagent.events`` and are dispatched on their type.

Every string in an event (the command, the model's reason and summary, the policy's
reasons, errors, output) is printed through ``shellagent.cli.display``: a command is shown
exactly as it will run, with hidden characters as flagged ``⟨...⟩`` markers, and nothing
a model wrote can move the cursor or redraw the lines around the approval prompt.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import IO, Any, TextIO

from shellagent import protocol
from shellagent.cli.display import clean_output, reveal, shown
from shellagent.events import (
    Accepted,
    ApprovalKind,
    ApprovalNeeded,
    ApprovalReply,
    ChangesDecision,
    ChangesDone,
    ChangesReady,
    ChoiceRequest,
    ConfirmAnswer,
    ConfirmRequest,
    Decided,
    Failure,
    InvalidReply,
    Note,
    Output,
    Proposed,
    Queued,
    Result,
    Scope,
    Summary,
    Thinking,
    WireEvent,
    to_dict,
)

OUTPUT_LINES = 200  # live output shown per command; the rest is counted
SIGPIPE_EXIT = 141  # a pipeline whose reader stopped early (``agent/support.py``)


def plural(n: int, word: str, words: str = "") -> str:
    """``1 command``, ``2 commands``."""
    return f"{n} {word if n == 1 else (words or word + 's')}"


def _controlling_terminal() -> tuple[TextIO, TextIO] | None:
    """The controlling terminal, open for reading and for writing, or None."""
    try:
        reader = open("/dev/tty", encoding="utf-8", errors="replace")  # noqa: SIM115
        writer = open("/dev/tty", "w", encoding="utf-8", errors="replace")  # noqa: SIM115
    except OSError:
        return None
    return reader, writer


def color_enabled(stream: IO[str]) -> bool:
    """Colour only on a terminal, and never with NO_COLOR set or TERM=dumb."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class _Style:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled and text else text

    def marked(self, shown: str) -> str:
        """Markers in reverse video, so they stand out from the command's own text."""
        if not self.enabled:
            return shown
        out, depth = [], 0
        for ch in shown:
            if ch == "⟨":
                depth += 1
                if depth == 1:
                    out.append("\x1b[7m")
            out.append(ch)
            if ch == "⟩" and depth:
                depth -= 1
                if depth == 0:
                    out.append("\x1b[0m")
        return "".join(out)


class Spinner:
    """``⠋ thinking 1.2s`` on stderr while the model works; nothing when not a terminal."""

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, stream: IO[str], enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled
        self.text = ""
        self._since = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, text: str) -> None:
        if not self.enabled:
            return
        self.text = text
        if self._thread is not None:
            return
        self._since = time.monotonic()
        self._stop.clear()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        self.stream.write("\r\x1b[K")
        self.stream.flush()

    def _spin(self) -> None:
        frame = 0
        while not self._stop.wait(0.1):
            elapsed = time.monotonic() - self._since
            self.stream.write(
                f"\r{self.FRAMES[frame % len(self.FRAMES)]} {self.text} {elapsed:.1f}s\x1b[K"
            )
            self.stream.flush()
            frame += 1


VERDICTS = {
    "finished": "done",
    "turn_limit": "out of turns",
    "repeated_failure": "gave up",
    "user_quit": "quit",
    "cancelled": "cancelled",
    "error": "error",
}
REFUSALS_BEFORE_ASKING = 2  # from the second refusal on, ask what would help instead

# "run ls", "execute ls -la": a reason that only names the command says nothing
_ECHO_VERBS = ("run ", "running ", "execute ", "executing ", "use ", "using ", "call ")


def echoes(why: str, command: str) -> bool:
    """Whether the model's reason only repeats the command (``why: run ls`` for ``ls``)."""
    text = " ".join(why.lower().split()).rstrip(".")
    for verb in _ECHO_VERBS:
        text = text.removeprefix(verb)
    text = text.strip("`'\" ")
    cmd = " ".join(command.lower().split())
    return not text or text == cmd or (len(text) >= 2 and cmd.startswith(text))


# Where an "always" holds, as the policy's always-allow store matches it: the directory
# exactly (never the ones below), and only "everywhere" anywhere else.
SCOPE_WORDS = {
    "session": "in this directory for the rest of this task",
    "directory": "in this directory (not below it), from now on",
    "everywhere": "everywhere, from now on",
}


def _reply(
    m: ApprovalNeeded,
    decision: ApprovalKind,
    *,
    reason: str = "",
    edited: str | None = None,
    scope: Scope | None = None,
) -> ApprovalReply:
    """The answer to the approval request ``m``: it echoes the command asked about."""
    return ApprovalReply(
        id=m.id, decision=decision, command=m.command, edited=edited, reason=reason, scope=scope
    )


class AskUI:
    """Renders the daemon's events and answers its approval requests."""

    def __init__(
        self,
        *,
        out: IO[str] | None = None,
        err: IO[str] | None = None,
        json_lines: bool = False,
        can_prompt: bool = False,
        color: bool = False,
        spinner: bool = False,
        dry_run: bool = False,
        pt_input: Any = None,
        pt_output: Any = None,
        human: IO[str] | None = None,
    ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        # Where the words around a question go when stdout carries JSON lines: the
        # controlling terminal when there is one, else stderr (never into the JSON stream).
        self.human = human or (self.err if json_lines else self.out)
        self.json_lines = json_lines
        self.can_prompt = can_prompt
        self.style = _Style(color)
        self.spinner = Spinner(self.err, spinner and not json_lines)
        self.dry_run = dry_run
        self._overlay = False
        self.cancelling = False  # Ctrl-C was pressed: a stopped command was cancelled
        self.pt_input = pt_input
        self.pt_output = pt_output
        self._lines = 0
        self._hidden = 0
        self._ended_line = True
        self._proposed = ""
        self._step = 0  # proposals shown in this task: each gets the next number
        self._refusals = 0  # commands the user refused in this task
        # after "no, it did not do it": the recipe picked to run next, and the session it
        # follows up (``ask_client.run_on``)
        self.picked: str | None = None
        self.last_session: str | None = None
        self._refused = 0  # commands refused in this task, by the user or for want of one
        self._would = ""  # a dry run's change set, in words ("2 deleted")
        self.last_summary: Summary | None = None  # how the latest task ended

    @classmethod
    def for_terminal(cls, *, json_lines: bool = False, dry_run: bool = False) -> AskUI:
        """Questions on the terminal: stdin and stdout, or, when stdout is piped (``ask
        --json … | jq``) but stdin is a terminal, the controlling terminal ``/dev/tty``."""
        if sys.stdin.isatty() and sys.stdout.isatty() and not json_lines:
            return cls(
                can_prompt=True,
                color=color_enabled(sys.stdout),
                spinner=sys.stderr.isatty(),
                dry_run=dry_run,
            )
        tty = _controlling_terminal() if sys.stdin.isatty() else None
        if tty is None:
            return cls(json_lines=json_lines, color=color_enabled(sys.stdout), dry_run=dry_run)
        from prompt_toolkit.input import create_input
        from prompt_toolkit.output import create_output

        return cls(
            json_lines=json_lines,
            can_prompt=True,
            color=not json_lines and color_enabled(sys.stdout),
            spinner=sys.stderr.isatty() and not json_lines,
            dry_run=dry_run,
            pt_input=create_input(stdin=tty[0]),
            pt_output=create_output(stdout=tty[1]),
            human=tty[1],
        )

    def _print(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def note(self, text: str) -> None:
        self.stop_spinner()
        self.err.write(f"note: {text}\n")
        self.err.flush()

    def stop_spinner(self) -> None:
        self.spinner.stop()

    # -- events --------------------------------------------------------------------------

    def event(self, event: WireEvent) -> None:
        if isinstance(event, Summary):
            self.last_summary = event
        if self.json_lines:
            self._print(json.dumps({"v": protocol.VERSION, **to_dict(event)}, ensure_ascii=True))
            return
        if isinstance(event, Thinking):
            self.spinner.start("thinking")
            return
        if isinstance(event, Queued):
            ahead = event.position
            self.spinner.start(
                f"waiting for the model ({plural(ahead, 'other task')} first)"
                if ahead > 0
                else "waiting for the model to load"
            )
            return
        if isinstance(event, Output):
            self._output(event.data)
            return
        self.stop_spinner()
        if isinstance(event, Accepted):
            self._print(
                self.style("2", f"session {shown(event.session)} · model {shown(event.model)}")
            )
            self._overlay = event.overlay
            self._step = self._refusals = self._refused = 0
            self._would = ""
            if event.overlay:
                self._print(
                    self.style(
                        "2",
                        "a dry run: commands work on a copy of your files, and nothing "
                        "is applied at the end"
                        if self.dry_run
                        else "commands work on a copy of your files: nothing changes "
                        "until you apply the change set at the end",
                    )
                )
        elif isinstance(event, ChangesReady):
            self._on_changes(event)
        elif isinstance(event, ChangesDone):
            colour = {"applied": "32", "refused": "31"}.get(event.outcome, "33")
            self._print(self.style(colour, shown(event.message)))
        elif isinstance(event, InvalidReply):
            self._on_invalid(event)
        elif isinstance(event, Proposed):
            self._on_proposed(event)
        elif isinstance(event, Decided):
            self._on_decided(event)
        elif isinstance(event, Result):
            self._on_result(event)
        elif isinstance(event, Summary):
            self._on_summary(event)
        elif isinstance(event, Failure | Note):
            label = "note" if isinstance(event, Note) else "error"
            self.err.write(f"{label}: {shown(event.message)}\n")
            self.err.flush()

    def _on_invalid(self, m: InvalidReply) -> None:
        preview = shown(m.raw if len(m.raw) <= 80 else m.raw[:79] + "…")
        what = {
            "repeat": "the model's reply was cut: it kept repeating itself",
            "length": "the model's reply was cut at the token limit",
        }.get(m.stop, f"the model's reply was not an action: {preview}")
        self._print(self.style("33", f"    {what}; asking again"))

    def _on_proposed(self, m: Proposed | ApprovalNeeded) -> None:
        command, flags = reveal(m.command)
        self._proposed = m.command
        self._lines = self._hidden = 0
        self._step += 1
        self._print(f"[{self._step}] $ {self.style.marked(command)}")
        origin = m.origin if isinstance(m, Proposed) else None
        if origin == "user":  # typed or edited at the prompt: no reason of the model's
            self._print(self.style("2", "    written by you"))
        else:
            why = shown(m.why) if m.why and not echoes(m.why, m.command) else ""
            if origin == "model":  # recipes were tried and none did it
                why = f"(written by the model, no recipe) {why}".rstrip()
            if why:
                self._print(self.style("2", "    why: ") + self.style.marked(why))
        colour = {"allow": "32", "ask": "33", "deny": "31"}.get(m.decision, "0")
        reasons = shown("; ".join(m.reasons))
        self._print(
            f"    policy: {self.style(colour, m.decision)}" + (f" ({reasons})" if reasons else "")
        )
        for flag in flags:
            self._print(self.style("1;31", f"    ! warning: contains {flag}"))
        if self.dry_run and m.decision != "deny" and not self._overlay:
            self._print(self.style("2", "    (dry run: not run)"))

    def _on_decided(self, m: Decided) -> None:
        reason = shown(m.reason or "")
        if m.decision == "auto":
            self._print(self.style("2", "    approved (-y)"))
        elif m.decision == "refuse":
            self._refused += 1
            self._print(f"    refused{': ' + reason if reason else ''}")
        elif m.decision == "always":
            if m.scope is None:  # it could not be remembered: run this once, and said so
                self._print(self.style("33", f"    {reason or 'not always allowed; run once'}"))
            else:
                self._print(f"    always allowed {SCOPE_WORDS[m.scope]}: {reason}")
        elif m.decision == "edit":
            edited, _ = reveal(m.edited or "")
            self._print(f"    edited to: {self.style.marked(edited)}")

    def _output(self, data: str) -> None:
        self.stop_spinner()
        text = clean_output(data)
        for line in text.splitlines(keepends=True):
            if self._lines >= OUTPUT_LINES:
                self._hidden += 1
                continue
            self.out.write(line)
            if line.endswith("\n"):
                self._lines += 1
            self._ended_line = line.endswith("\n")
        self.out.flush()

    def _on_result(self, m: Result) -> None:
        if not self._ended_line:
            self._print()
            self._ended_line = True
        if self._hidden:
            self._print(self.style("2", f"    … {self._hidden} more lines not shown"))
        if self.cancelling and m.timed_out:  # stopped by Ctrl-C, not by its time limit
            self._print(self.style("33", f"    [cancelled after {m.duration_s}s]"))
            return
        extra = ", timed out" if m.timed_out else ""
        worked = m.exit_code == 0 or (m.exit_code == SIGPIPE_EXIT and "|" in m.command)
        if m.exit_code != 0 and worked and not m.timed_out:
            extra = ": the reader of a pipe finished first, which is fine"
        colour = "32" if worked and not m.timed_out else "31"
        self._print(self.style(colour, f"    [exit {m.exit_code}{extra}, {m.duration_s}s]"))
        if m.refused:
            self._print(
                self.style(
                    "33",
                    "    the policy allowed this as read-only, but the kernel stopped it "
                    "changing something; it will be asked about from now on",
                )
            )

    def _on_summary(self, m: Summary) -> None:
        self.last_session = m.session or None
        self._print()
        for i, command in enumerate(m.commands):
            ran, _ = reveal(command)
            code = m.exit_codes[i] if i < len(m.exit_codes) else "?"
            self._print(f"  ran: {self.style.marked(ran)}  [exit {code}]")
        if m.error:
            self._print(f"  error: {self.style.marked(shown(m.error))}")
        session = shown(m.session)
        self._print(
            self.style(
                "2",
                f"  {plural(m.turns, 'reply', 'replies')}, {plural(len(m.commands), 'command')}; "
                f"transcript {session} (shellagent logs show {session})",
            )
        )
        if m.advice:
            self._print(self.style("2", "  " + self.style.marked(shown(m.advice))))
        if self._unsure(m) and m.alternatives:
            self._print("  other ways to read it:")
            for line in self.alternative_lines(m):
                self._print(line)
        # Last, so the screen's last word is what is known about the outcome.
        self._print(self.verdict_line(m))

    @staticmethod
    def _unsure(m: Summary) -> bool:
        """A finished task whose result was not claimed and nobody confirmed."""
        return m.reason == "finished" and not m.claimed and m.verdict != "confirmed"

    def alternative_lines(self, m: Summary | ChoiceRequest | ConfirmRequest) -> list[str]:
        """The next recipes that fit, one line each with their command, and what a
        read-only one printed when it was tried."""
        lines = []
        for i, alt in enumerate(m.alternatives, 1):
            command, _ = reveal(alt.command)
            lines.append(f"    {i}) {shown(alt.says)}: {self.style.marked(command)}")
            if alt.output:
                first = shown(alt.output.splitlines()[0])[:100]
                more = len(alt.output.splitlines()) - 1
                lines.append(
                    self.style("2", f"       → {first}" + (f" (+{more} lines)" if more else ""))
                )
        return lines

    def verdict_line(self, m: Summary) -> str:
        """The task's outcome in one line, no stronger than what is known: the user's
        answer first, then what the session does not support of the model's summary."""
        summary = self.style.marked(shown(m.summary, lines=True))
        # who wrote it: a recipe's line is no word of the model's
        who = "the recipe's line" if m.origin.startswith("recipe") else "the model said"
        said = f" ({who}: {summary})" if summary else ""
        if m.reason != "finished":
            verdict = VERDICTS.get(m.reason, shown(m.reason))
            return self.style("1", verdict) + (f": {summary}" if summary else "")
        if m.verdict == "failed":
            return self.style("1;31", "failed: you said it did not do it") + said
        if m.verdict == "scheduled":  # the job is the result; the first run was a preview
            return self.style("1", "scheduled") + (f": {summary}" if summary else "")
        if m.verdict == "discarded":  # whatever the model said, nothing of it was kept
            return self.style("1", "discarded: your files are as they were") + said
        if m.verdict == "dry_run":  # whatever the model said, it was said of a copy
            if not self._overlay:
                done = "nothing was run and nothing changed"
            elif self._would:
                done = f"nothing was changed; on the copy it would change: {shown(self._would)}"
            else:
                done = "nothing was changed, and it would change nothing"
            return self.style("1", f"dry run: {done}") + said
        if m.verdict == "kept":
            return (
                self.style("1", "not applied yet: the changes are kept for later")
                + f" (shellagent apply {shown(m.session)})"
                + said
            )
        if m.verdict == "confirmed":
            return self.style("1", "done (confirmed)") + (f": {summary}" if summary else "")
        if m.unsupported:
            problems = shown("; ".join(m.unsupported))
            return self.style("1;33", f"not shown to be done: {problems}") + said
        if self._refused and not m.commands:
            what = "the command was" if self._refused == 1 else "the commands were"
            return self.style("1;33", f"not done: {what} refused and nothing ran") + said
        if self._unsure(m) and m.ran:
            doubts = shown("; ".join(m.doubts)) or "nothing showed it was"
            answer = f"\n  {summary}" if summary else ""
            return (
                self.style("1;33", "not sure this is what you asked")
                + f": ran {shown(m.ran)}; it may not be what you meant ({doubts})"
                + answer
            )
        if self._unsure(m) and not m.doubts:  # the result says it is not done ("… does not exist")
            return self.style("1;33", "not done") + (f": {summary}" if summary else "")
        # Nobody checked (-y, no terminal, "skip"): the model's word, not a result.
        return self.style("1", "unverified, the model says") + (f": {summary}" if summary else "")

    def _on_changes(self, m: ChangesReady) -> None:
        # File names were written inside the sandbox: shown, never obeyed.
        if m.lines:
            self._would = m.summary
        if not m.lines:
            self._print(self.style("2", f"    changes so far (not applied): {shown(m.summary)}"))
            return
        self._print()
        self._print(self.style("1", "what this changes in your files:"))
        for line in m.lines:
            # each word escaped, the padding that aligns the sizes kept as it is
            text = " ".join(shown(part) for part in line.split(" "))
            self._print(self.style("31", text) if line.startswith("!") else text)

    # -- approval ------------------------------------------------------------------------

    def choose(self, m: ChoiceRequest) -> int:
        """Not sure (or refused): the next recipes, one key each; 0 keeps what there is.
        Without a person at a terminal nothing is picked."""
        self.stop_spinner()
        if not self.can_prompt or self.json_lines:
            return 0
        self._print()
        if m.ran:
            doubts = shown("; ".join(m.doubts)) or "nothing showed it was"
            self._print(
                self.style("1;33", "not sure this is what you asked")
                + f": ran {shown(m.ran)} ({doubts})"
            )
            if m.answer:
                for line in shown(m.answer, lines=True).splitlines()[:8]:
                    self._print(f"  {line}")
        else:
            self._print(self.style("1", shown("; ".join(m.doubts))))
        self._print("other ways to do it:")
        for line in self.alternative_lines(m):
            self._print(line)
        keys = "".join(str(i) for i in range(1, len(m.alternatives) + 1))
        what = "keep this answer" if m.ran else "none of them"
        key = self._key(f"[k] {what}, or [{keys[0]}-{keys[-1]}] run that one instead ", keys + "k")
        return int(key) if key.isdigit() else 0

    def pick_after_no(self, m: ConfirmRequest) -> int:
        """After "no": the other recipes that may be what was asked, one key each; the one
        picked runs next, as a follow-up of this session (``picked``). 0: none."""
        if not m.alternatives or not self.can_prompt or self.json_lines:
            return 0
        self._print("other ways to do it:")
        for line in self.alternative_lines(m):
            self._print(line)
        keys = "".join(str(i) for i in range(1, len(m.alternatives) + 1))
        key = self._key(
            f"[k] none of them, or [{keys[0]}-{keys[-1]}] run that one next ", keys + "k"
        )
        if not key.isdigit():
            return 0
        self.picked = m.alternatives[int(key) - 1].recipe
        return int(key)

    def confirm(self, m: ConfirmRequest) -> ConfirmAnswer:
        """Did that do it? ``yes``, ``no`` or ``skip`` (the session stays unverified)."""
        self.stop_spinner()
        if not self.can_prompt or self.json_lines:
            return "skip"
        self._print()
        self._print(
            self.style("1", "the model says: ") + self.style.marked(shown(m.summary, lines=True))
        )
        if m.unsupported:
            problems = shown("; ".join(m.unsupported))
            self._print(self.style("1;33", f"but the session does not show it: {problems}"))
        key = self._key("did that do it? [y]es [n]o [s]kip ", "yns")
        answers: dict[str, ConfirmAnswer] = {"y": "yes", "n": "no"}
        return answers.get(key, "skip")

    def review_changes(self, m: ChangesReady) -> ChangesDecision:
        """Ask what to do with the change set in ``m``: apply, discard or keep."""
        self.stop_spinner()
        if self.json_lines:
            self.event(m)
        with self._to_human():
            self._on_changes(m)
            return self._review(m)

    def _review(self, m: ChangesReady) -> ChangesDecision:
        if not self.can_prompt:
            return "keep"
        while True:
            key = self._key(
                "apply these changes? [a]pply [d]iff [n]o, discard [k]eep for later ", "adnk"
            )
            if key == "d":
                self._print(shown(m.diff, lines=True).rstrip("\n"))
                continue
            if key == "q":  # Ctrl-D: leave the changes for later
                return "keep"
            decisions: dict[str, ChangesDecision] = {"a": "apply", "n": "discard", "k": "keep"}
            return decisions[key]

    def approve(self, m: ApprovalNeeded) -> ApprovalReply:
        """Ask y/n/e/a/q about the command in ``m``; the answer to send."""
        self.stop_spinner()
        command = m.command
        if self.json_lines:
            self.event(m)
        with self._to_human():
            return self._approve(m, command)

    def _approve(self, m: ApprovalNeeded, command: str) -> ApprovalReply:
        if command != self._proposed:  # never ask about a command not shown just above
            self._on_proposed(m)
        for item in m.carried:  # values the line expands but does not show
            name, _, value = item.partition("=")
            self._print(
                self.style("33", f"    carried: {shown(name)} = ") + self.style.marked(shown(value))
            )
        if m.job:
            return self._approve_job(m, command)
        if not self.can_prompt:
            self._print("    refused: nobody can answer here (rerun with -y to approve)")
            return _reply(m, "refuse", reason="ask is not attached to a terminal")
        question, keys = "    run it? [y]es [n]o [e]dit [a]lways [q]uit [?] explain ", "ynaeq?"
        if m.named:  # a place that runs code later, named by the request: its own key
            for place in m.named:
                self._print(self.style("1;33", f"    ! {shown(place)}: runs code later"))
            self._print(
                "      it changes on the copy only; it lands only with "
                "`shellagent apply SESSION --include PATH`"
            )
            question = "    run it on the copy? [!] yes, change that place [n]o [e]dit [q]uit "
            keys = "!neq?"
        while True:
            key = self._key(question, keys)
            if key != "?":
                break
            self._print(shown(self._explain(command), lines=True))
        if key in ("y", "!"):
            return _reply(m, "approve")
        if key == "n":
            self._refusals += 1
            if self._refusals >= REFUSALS_BEFORE_ASKING:
                return self._after_refusals(m, command)
            why = self._line("    why not? (optional, told to the model) ")
            return _reply(m, "refuse", reason=why.strip())
        if key == "e":
            edited = self._line("    edit: ", default=command)
            if not edited.strip():
                return _reply(m, "refuse", reason="the user cleared the command")
            if edited == command:
                return _reply(m, "approve")
            _, flags = reveal(edited)
            for flag in flags:
                self._print(self.style("1;31", f"    ! warning: the edit contains {flag}"))
            return _reply(m, "edit", edited=edited)
        if key == "a":
            scope_key = self._key(
                "    always allow where? [s]ession [d]irectory [e]verywhere ", "sde"
            )
            scopes: dict[str, Scope] = {"s": "session", "d": "directory", "e": "everywhere"}
            # what was remembered, if anything, is the daemon's answer (``_on_decided``)
            return _reply(m, "always", scope=scopes[scope_key])
        return _reply(m, "quit")

    def _approve_job(self, m: ApprovalNeeded, command: str) -> ApprovalReply:
        """Install a recurring job? The job in words (when, where, what it writes) under its
        commands; y installs, n does not, e edits its commands (one per line), q quits."""
        self._print(self.style("1", "    the job: ") + self.style.marked(shown(m.why)))
        if not self.can_prompt:
            self._print("    not installed: nobody can answer here")
            return _reply(m, "refuse", reason="ask is not attached to a terminal")
        while True:
            key = self._key("    install this job? [y]es [n]o [e]dit [q]uit [?] explain ", "yneq?")
            if key != "?":
                break
            self._print(shown(self._explain(command), lines=True))
        if key == "y":
            return _reply(m, "approve")
        if key == "n":
            why = self._line("    why not? (optional) ")
            return _reply(m, "refuse", reason=why.strip())
        if key == "e":
            edited = self._line("    edit (one command per line): ", default=command)
            if not edited.strip():
                return _reply(m, "refuse", reason="the user cleared the job")
            return _reply(m, "approve") if edited == command else _reply(m, "edit", edited=edited)
        return _reply(m, "quit")

    def _after_refusals(self, m: ApprovalNeeded, command: str) -> ApprovalReply:
        """The user keeps refusing: ask what would help instead of letting the model guess."""
        self._print(
            self.style("33", f"    that is {self._refusals} commands refused in this task.")
        )
        key = self._key(
            "    what now? [h]int for the model [e]dit a command yourself [s]top the task ", "hes"
        )
        if key == "e":
            edited = self._line("    edit: ", default=command)
            if edited.strip() and edited != command:
                return _reply(m, "edit", edited=edited)
            return _reply(m, "refuse", reason="the user cleared the command")
        if key == "h":
            hint = self._line("    hint (told to the model): ")
            return _reply(m, "refuse", reason=hint.strip())
        return _reply(m, "quit")

    def _explain(self, command: str) -> str:
        from pathlib import Path

        from shellagent.cli.cmd_explain import explain
        from shellagent.errors import ShellagentError

        try:
            return explain(command, Path.cwd())
        except ShellagentError as exc:
            return f"    cannot explain it here: {exc.message}"

    @contextlib.contextmanager
    def _to_human(self) -> Iterator[None]:
        """Print the words around a question where the person reads them."""
        out, self.out = self.out, self.human
        try:
            yield
        finally:
            self.out = out

    def _session(self) -> Any:
        from prompt_toolkit import PromptSession

        return PromptSession(input=self.pt_input, output=self.pt_output)

    def _key(self, message: str, keys: str) -> str:
        """One key among ``keys`` (any case); Ctrl-C raises KeyboardInterrupt, Ctrl-D is q."""
        return read_key(self._session(), message, keys)

    def _line(self, message: str, default: str = "") -> str:
        result: str = self._session().prompt(message, default=default)
        return result


def read_key(session: Any, message: str, keys: str) -> str:
    """One key among ``keys`` (any case) read with the prompt-toolkit ``session``; Ctrl-C
    raises KeyboardInterrupt, Ctrl-D is ``q``, any other key is ignored."""
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()

    def accept(key: str) -> Any:
        return lambda event: event.app.exit(result=key)

    for key in keys:
        bindings.add(key)(accept(key))
        bindings.add(key.upper())(accept(key))
    bindings.add("c-d")(accept("q"))
    bindings.add("c-c")(lambda event: event.app.exit(exception=KeyboardInterrupt()))
    bindings.add("<any>")(lambda event: None)
    bindings.add("enter")(lambda event: None)
    result: str = session.prompt(message, key_bindings=bindings)
    return result
