"""Text from a model, a daemon, a transcript or a job file, made safe to print on a terminal.

Every such string goes through ``reveal`` (or its two views ``shown`` and
``clean_output``) before it reaches the screen, so nothing in it can move the cursor,
redraw a line, reorder the text or hide part of it. A command is shown exactly as it will
run, with anything a terminal would hide or reinterpret (``shellagent.chars``) made
visible as a ``⟨...⟩`` marker and flagged: control characters and escape sequences, bidi
controls, zero-width and other invisible characters, line separators, unusual spaces, and
long runs of spaces that push the rest of a command off screen. The daemon runs the
original bytes, never the marker text.

Standard library only: ``ask`` imports this on its start-up path.
"""

from __future__ import annotations

import re

from shellagent.chars import HIDDEN_RANGES, kind

__all__ = ["SPACE_RUN", "clean_output", "reveal", "shown"]

SPACE_RUN = 8  # this many spaces in a row are shown as a count and flagged

_NAMES = {0: "NUL", 7: "BEL", 8: "BS", 9: "\\t", 10: "\\n", 13: "\\r", 27: "ESC", 127: "DEL"}
_FLAGS = {
    "escape": "terminal escape sequences (ESC)",
    "newline": "a newline: more than one command line",
    "tab": "control characters",
    "return": "control characters",
    "control": "control characters",
    "bidi": "bidirectional text controls (text may display out of order)",
    "separator": "line or paragraph separators",
    "invisible": "zero-width or invisible characters",
    "space": "unusual space characters",
    "unassigned": "unassigned, private or surrogate code points",
}


def _marker(ch: str) -> str:
    code = ord(ch)
    if code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
        return "⟨" + _NAMES.get(code, f"\\x{code:02x}") + "⟩"
    return f"⟨U+{code:04X}⟩"


def _render(text: str, keep: frozenset[str], runs: bool) -> tuple[str, list[str]]:
    """``text`` with every hidden character not in ``keep`` as a marker; what was found.
    ``runs``: long runs of spaces and trailing spaces are shown as a count and flagged."""
    shown: list[str] = []
    flags: dict[str, None] = {}
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == " " and runs:
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
        found = kind(ch)
        if found is not None and found not in keep:
            shown.append(_marker(ch))
            flags[_FLAGS[found]] = None
        elif ch == "⟨":
            shown.append("⟨⟨⟩")  # a literal marker bracket cannot pass for a marker
        else:
            shown.append(ch)
        i += 1
    return "".join(shown), list(flags)


_NOTHING: frozenset[str] = frozenset()
_LINES = frozenset({"newline", "tab"})


def reveal(text: str, *, lines: bool = False) -> tuple[str, list[str]]:
    """``text`` with hidden or deceptive characters made visible, and what was found.

    ``lines=True`` keeps newlines, tabs and runs of spaces as they are (a summary, a page
    laid out in columns); otherwise newlines and tabs are markers too (a command that is
    more than one line is flagged) and long runs of spaces are counted.
    """
    return _render(text, _LINES if lines else _NOTHING, runs=not lines)


def shown(text: object, *, lines: bool = False) -> str:
    """Any value as text safe to print: ``reveal`` without the flags."""
    return reveal(str(text), lines=lines)[0]


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    def one(code: int) -> str:
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"

    return "".join(one(lo) if lo == hi else f"{one(lo)}-{one(hi)}" for lo, hi in ranges)


# What clean_output marks: every hidden character but newline and tab (``HIDDEN_RANGES``,
# which a test holds to ``kind``), and the marker bracket. Output can be long: one regex
# pass finds the few characters to mark instead of classifying every character.
_OUTPUT_MARKED = re.compile(
    "["
    + _char_class(tuple(r for r in HIDDEN_RANGES if r != (0x00, 0x1F)))
    + _char_class(((0x00, 0x08), (0x0B, 0x1F)))
    + "⟨]"
)


def _output_marker(match: re.Match[str]) -> str:
    ch = match.group()
    return "⟨⟨⟩" if ch == "⟨" else _marker(ch)


def clean_output(text: str) -> str:
    """Command output safe to print: escapes, controls, bidi and invisible characters made
    visible; newlines, tabs, spaces (column layouts, localised numbers) and emoji kept."""
    return _OUTPUT_MARKED.sub(_output_marker, text.replace("\r\n", "\n"))
