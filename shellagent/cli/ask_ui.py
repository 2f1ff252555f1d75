"""What ``ask`` shows and asks: events as text (or JSON lines), the approval prompt.

Standard library only at import time. prompt-toolkit is imported inside ``approve``,
the first time a prompt is actually shown.

A command is shown exactly as it will run, with anything a terminal would hide or
reinterpret made visible and flagged (``reveal``): control characters and escape
sequences, bidi controls, zero-width and other invisible characters, line separators,
unusual spaces and long runs of spaces that push the rest of a command off screen.
Each becomes a ``⟨...⟩`` marker; the daemon runs the original bytes, never the marker text.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import IO, Any

SPACE_RUN = 8  # this many spaces in a row are shown as a count and flagged
OUTPUT_LINES = 200  # live output shown per command; the rest is counted

_NAMES = {0: "NUL", 7: "BEL", 8: "BS", 9: "\\t", 10: "\\n", 13: "\\r", 27: "ESC", 127: "DEL"}
_BIDI = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def _marker(code: int) -> str:
    return "⟨" + _NAMES.get(code, f"\\x{code:02x}") + "⟩"


def reveal(text: str) -> tuple[str, list[str]]:
    """``text`` with hidden or deceptive characters made visible, and what was found."""
    import unicodedata

    shown: list[str] = []
    flags: dict[str, None] = {}
    i = 0
    while i < len(text):
        ch = text[i]
        code = ord(ch)
        if ch == " ":
            j = i
            while j < len(text) and text[j] == " ":
                j += 1
            run = j - i
            if run >= SPACE_RUN:
                shown.append(f"⟨{run} spaces⟩")
                flags[f"a run of {run} spaces (it can push text out of sight)"] = None
            elif j == len(text):
                shown.append(f"⟨{run} trailing space{'s' if run > 1 else ''}⟩")
                flags["trailing spaces"] = None
            else:
                shown.append(" " * run)
            i = j
            continue
        category = unicodedata.category(ch)
        if code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
            shown.append(_marker(code))
            if code == 27:
                flags["terminal escape sequences (ESC)"] = None
            elif code == 10:
                flags["a newline: more than one command line"] = None
            else:
                flags["control characters"] = None
        elif code in _BIDI:
            shown.append(f"⟨U+{code:04X}⟩")
            flags["bidirectional text controls (text may display out of order)"] = None
        elif category in ("Zl", "Zp"):
            shown.append(f"⟨U+{code:04X}⟩")
            flags["line or paragraph separators"] = None
        elif category == "Cf" or code in (0x115F, 0x1160, 0x3164, 0xFFA0):
            shown.append(f"⟨U+{code:04X}⟩")
            flags["zero-width or invisible characters"] = None
        elif category == "Zs":
            shown.append(f"⟨U+{code:04X}⟩")
            flags["unusual space characters"] = None
        elif category in ("Cs", "Co", "Cn"):
            shown.append(f"⟨U+{code:04X}⟩")
            flags["unassigned, private or surrogate code points"] = None
        elif ch == "⟨":
            shown.append("⟨⟨⟩")  # a literal marker bracket cannot pass for a marker
        else:
            shown.append(ch)
        i += 1
    return "".join(shown), list(flags)


def clean_output(text: str) -> str:
    """Command output safe to print: escapes and control characters made visible."""
    text = text.replace("\r\n", "\n")
    out = []
    for ch in text:
        code = ord(ch)
        if ch in "\n\t" or (code >= 0x20 and code != 0x7F and not 0x80 <= code < 0xA0):
            out.append(ch)
        else:
            out.append(_marker(code))
    return "".join(out)


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
SCOPE_WORDS = {
    "session": "for the rest of this task",
    "directory": "in this directory and below",
    "everywhere": "everywhere, from now on",
}


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
    ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.json_lines = json_lines
        self.can_prompt = can_prompt
        self.style = _Style(color)
        self.spinner = Spinner(self.err, spinner and not json_lines)
        self.dry_run = dry_run
        self.pt_input = pt_input
        self.pt_output = pt_output
        self._lines = 0
        self._hidden = 0
        self._ended_line = True
        self._proposed = ""

    @classmethod
    def for_terminal(cls, *, json_lines: bool = False, dry_run: bool = False) -> AskUI:
        tty = sys.stdin.isatty() and sys.stdout.isatty()
        return cls(
            json_lines=json_lines,
            can_prompt=tty and not json_lines,
            color=color_enabled(sys.stdout),
            spinner=sys.stderr.isatty(),
            dry_run=dry_run,
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

    def event(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if self.json_lines:
            self._print(json.dumps(message, ensure_ascii=True))
            return
        if kind == "thinking":
            self.spinner.start("thinking")
            return
        if kind == "queued":
            self.spinner.start(f"waiting for the model ({message.get('position')} ahead)")
            return
        if kind == "output":
            self._output(str(message.get("data", "")))
            return
        self.stop_spinner()
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(message)

    def _on_accepted(self, m: dict[str, Any]) -> None:
        self._print(self.style("2", f"session {m.get('session')} · model {m.get('model')}"))

    def _on_invalid(self, m: dict[str, Any]) -> None:
        what = {
            "repeat": "the model's reply was cut: it kept repeating itself",
            "length": "the model's reply was cut at the token limit",
        }.get(str(m.get("stop")), f"the model's reply was not an action: {m.get('raw', '')!r:.80}")
        self._print(self.style("33", f"[{m.get('turn')}] {what}; asking again"))

    def _on_proposed(self, m: dict[str, Any]) -> None:
        shown, flags = reveal(str(m.get("command", "")))
        self._proposed = str(m.get("command", ""))
        self._lines = self._hidden = 0
        self._print(f"[{m.get('turn')}] $ {self.style.marked(shown)}")
        if m.get("why"):
            self._print(self.style("2", f"    why: {m['why']}"))
        decision = str(m.get("decision"))
        colour = {"allow": "32", "ask": "33", "deny": "31"}.get(decision, "0")
        reasons = "; ".join(str(r) for r in m.get("reasons") or [])
        self._print(
            f"    policy: {self.style(colour, decision)}" + (f" ({reasons})" if reasons else "")
        )
        for flag in flags:
            self._print(self.style("1;31", f"    ! warning: contains {flag}"))
        if self.dry_run and decision != "deny":
            self._print(self.style("2", "    (dry run: not run)"))

    def _on_approval(self, m: dict[str, Any]) -> None:
        decision = m.get("decision")
        reason = m.get("reason") or ""
        if decision == "auto":
            self._print(self.style("2", "    approved (-y)"))
        elif decision == "refuse":
            self._print(f"    refused{': ' + reason if reason else ''}")
        elif decision == "always":
            self._print(f"    always allowed {SCOPE_WORDS.get(str(m.get('scope')), '')}: {reason}")
        elif decision == "edit":
            shown, _ = reveal(str(m.get("edited") or ""))
            self._print(f"    edited to: {self.style.marked(shown)}")

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

    def _on_result(self, m: dict[str, Any]) -> None:
        if not self._ended_line:
            self._print()
            self._ended_line = True
        if self._hidden:
            self._print(self.style("2", f"    … {self._hidden} more lines not shown"))
        extra = ", timed out" if m.get("timed_out") else ""
        code = m.get("exit_code")
        colour = "32" if code == 0 else "31"
        self._print(self.style(colour, f"    [exit {code}{extra}, {m.get('duration_s')}s]"))

    def _on_summary(self, m: dict[str, Any]) -> None:
        verdict = VERDICTS.get(str(m.get("reason")), str(m.get("reason")))
        summary = m.get("summary") or ""
        self._print()
        self._print(self.style("1", verdict) + (f": {summary}" if summary else ""))
        commands = m.get("commands") or []
        codes = m.get("exit_codes") or []
        for i, command in enumerate(commands):
            shown, _ = reveal(str(command))
            code = codes[i] if i < len(codes) else "?"
            self._print(f"  ran: {self.style.marked(shown)}  [exit {code}]")
        if m.get("error"):
            self._print(f"  error: {m['error']}")
        session = m.get("session")
        self._print(
            self.style(
                "2",
                f"  {m.get('turns')} replies, {len(commands)} commands; "
                f"transcript {session} (shellagent logs show {session})",
            )
        )

    def _on_error(self, m: dict[str, Any]) -> None:
        self.err.write(f"error: {m.get('message')}\n")
        self.err.flush()

    # -- approval ------------------------------------------------------------------------

    def approve(self, m: dict[str, Any]) -> dict[str, Any]:
        """Ask y/n/e/a/q about the command in ``m``; the answer as approval fields."""
        self.stop_spinner()
        command = str(m.get("command", ""))
        if self.json_lines:
            self._print(json.dumps(m, ensure_ascii=True))
        if command != self._proposed:  # never ask about a command not shown just above
            self._on_proposed(m)
        if not self.can_prompt:
            self._print("    refused: nobody can answer here (rerun with -y to approve)")
            return {"decision": "refuse", "reason": "ask is not attached to a terminal"}
        key = self._key("    run it? [y]es [n]o [e]dit [a]lways [q]uit ", "ynaeq")
        if key == "y":
            return {"decision": "approve"}
        if key == "n":
            why = self._line("    why not? (optional, told to the model) ")
            return {"decision": "refuse", "reason": why.strip()}
        if key == "e":
            edited = self._line("    edit: ", default=command)
            if not edited.strip():
                return {"decision": "refuse", "reason": "the user cleared the command"}
            if edited == command:
                return {"decision": "approve"}
            shown, flags = reveal(edited)
            for flag in flags:
                self._print(self.style("1;31", f"    ! warning: the edit contains {flag}"))
            return {"decision": "edit", "edited": edited}
        if key == "a":
            scope_key = self._key(
                "    always allow where? [s]ession [d]irectory [e]verywhere ", "sde"
            )
            scope = {"s": "session", "d": "directory", "e": "everywhere"}[scope_key]
            shown, _ = reveal(command)
            self._print(
                f"    always allow {self.style.marked(shown)} "
                f"{SCOPE_WORDS[scope]}" + (f" ({os.getcwd()})" if scope == "directory" else "")
            )
            return {"decision": "always", "scope": scope}
        return {"decision": "quit"}

    def _session(self) -> Any:
        from prompt_toolkit import PromptSession

        return PromptSession(input=self.pt_input, output=self.pt_output)

    def _key(self, message: str, keys: str) -> str:
        """One key among ``keys`` (any case); Ctrl-C raises KeyboardInterrupt, Ctrl-D is q."""
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
        result: str = self._session().prompt(message, key_bindings=bindings)
        return result

    def _line(self, message: str, default: str = "") -> str:
        result: str = self._session().prompt(message, default=default)
        return result
