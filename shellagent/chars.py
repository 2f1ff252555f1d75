"""Characters a terminal hides or reinterprets, named once for everything that shows text.

A model (or whoever wrote a transcript or a job file) can put characters in a string that
a terminal does not show as themselves: escape sequences that move the cursor and redraw
lines, carriage returns, bidi controls that reorder what follows, zero-width and other
invisible characters (variation selectors among them), line separators, spaces that look
like a word break and are not, and combining marks that sit on no letter (``ls\u0338``
draws a stroke through the character before it; ``/\u0338`` is not a slash to the eye).
Three places need the same answer about them: the action parser and its grammar (which
refuse them in what a model writes), the job store (job names), and the display (which
shows each as a visible marker). ``kind`` is that answer; ``check_text`` turns it into a
one-line ``InputError`` naming the field, the character and where it is. A combining mark
is judged by what precedes it (``lone_mark``): after a letter it can combine with (of its
own script, or any letter for the generic diacritics, with other marks stacked between),
it is text (``é`` written as ``e`` and U+0301); anywhere else it reshapes a character that
is not a letter, and is refused.

Standard library only: ``ask`` imports this on its start-up path.
"""

from __future__ import annotations

import unicodedata

from shellagent.errors import InputError

__all__ = [
    "HIDDEN_RANGES",
    "INVISIBLE",
    "NON_ASCII_SPACES",
    "VARIATION_SELECTORS",
    "check_text",
    "describe",
    "kind",
    "lone_mark",
]

ESC = 0x1B
# Directional formatting characters (UAX #9): embeddings, overrides, isolates and marks.
BIDI = frozenset({0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)})
# Letters (category Lo) that every font draws as nothing: the Hangul fillers.
INVISIBLE = frozenset({0x115F, 0x1160, 0x3164, 0xFFA0})
NON_ASCII_SPACES = frozenset({0x00A0, 0x1680, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000})
# Marks (category Mn) that draw nothing and pick another glyph for the character before
# them: the variation selectors, their supplement, and Mongolian's free variation selectors.
VARIATION_SELECTORS = frozenset(
    {*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0), *range(0x180B, 0x180E), 0x180F}
)

# Every code point of categories Cc, Cf, Zl and Zp as of Unicode 16, plus the invisible
# fillers and the variation selectors, as inclusive ranges: the grammar excludes them from
# model text. A test keeps this in step with the running Python's ``unicodedata`` (a
# superset of it, and nothing in it that is an assigned visible character), so the grammar
# and ``kind`` agree. (A lone combining mark depends on its neighbour, which a character
# class cannot see: ``check_text`` refuses it.)
HIDDEN_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x001F),
    (0x007F, 0x009F),
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x2028, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
    (0xE0100, 0xE01EF),
)

# What each kind is called in messages and warnings.
WORDS = {
    "newline": "a newline",
    "tab": "a tab",
    "escape": "a terminal escape character (ESC)",
    "return": "a carriage return",
    "control": "a control character",
    "bidi": "a bidirectional text control",
    "separator": "a line or paragraph separator",
    "invisible": "a zero-width or invisible character",
    "space": "an unusual space character",
    "unassigned": "an unassigned, private-use or surrogate code point",
    "mark": "a combining mark on no letter it belongs to",
}


def kind(ch: str) -> str | None:
    """What ``ch`` is, if a terminal would not show it as itself; None for visible text.

    One of: newline, tab, escape, return, control, bidi, separator, invisible, space,
    unassigned. The ordinary space is visible text here (runs of spaces are the display's
    business).
    """
    code = ord(ch)
    if code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
        return {10: "newline", 9: "tab", ESC: "escape", 13: "return"}.get(code, "control")
    if code < 0xA0:
        return None
    if code in BIDI:
        return "bidi"
    if code in VARIATION_SELECTORS:
        return "invisible"
    category = unicodedata.category(ch)
    if category in ("Zl", "Zp"):
        return "separator"
    if category == "Cf" or code in INVISIBLE:
        return "invisible"
    if code in NON_ASCII_SPACES or category == "Zs":
        return "space"
    if category in ("Cs", "Co", "Cn"):
        return "unassigned"
    return None


def describe(ch: str, found: str | None = None) -> str:
    """``a newline (U+000A)``: how a message names a hidden character."""
    found = found or kind(ch)
    return f"{WORDS.get(found or '', 'a character')} (U+{ord(ch):04X})"


STACKED_MAX = 8  # marks on one letter (Vietnamese uses two, Zalgo text dozens)


def lone_mark(text: str, index: int) -> bool:
    """Whether ``text[index]``, a combining mark (category Mn, Mc or Me), sits on no letter
    it can combine with: the character before it (over at most ``STACKED_MAX`` marks) is
    not a letter, or is a letter of another script (a mark named for a script, such as
    ``DEVANAGARI VOWEL SIGN AA``, goes with that script's letters; the generic ones, named
    ``COMBINING …``, with any letter)."""
    mark = text[index]
    if not unicodedata.category(mark).startswith("M"):
        return False
    at = index - 1
    while at >= 0 and index - at <= STACKED_MAX and unicodedata.category(text[at])[0] == "M":
        at -= 1
    if at < 0 or index - at > STACKED_MAX:
        return True
    base = text[at]
    if not unicodedata.category(base).startswith("L"):
        return True
    mark_name = unicodedata.name(mark, "")
    if mark_name.startswith("COMBINING") or not mark_name:
        return False
    return mark_name.split(" ", 1)[0] != unicodedata.name(base, "").split(" ", 1)[0]


def check_text(
    value: str,
    *,
    what: str,
    limit: int,
    lines: bool = False,
    spaces: bool = True,
    hint: str | None = None,
) -> str:
    """``value`` if it is text a terminal shows as it is, else ``InputError``.

    Refused everywhere: control characters, escapes, carriage returns, bidi controls,
    zero-width and invisible characters (variation selectors too), line separators, lone
    surrogates, combining marks on no letter (``lone_mark``). ``lines``
    allows newlines and tabs (a command, a summary); ``spaces=False`` also refuses
    non-ASCII spaces (in a command they look like a word break and are not one).
    Private-use and unassigned code points pass: a newer emoji is unassigned to an older
    Python. ``limit`` is in characters. The message never repeats the value itself.
    """
    if len(value) > limit:
        raise InputError(
            f"{what} is {len(value)} characters long; the limit is {limit}",
            hint=hint or "shorten it",
        )
    for index, ch in enumerate(value):
        found = kind(ch)
        if found is None:
            if ord(ch) >= 0x300 and lone_mark(value, index):
                raise InputError(
                    f"{what} contains {describe(ch, 'mark')} at character {index + 1}",
                    hint=hint or "use one line of visible text",
                )
            continue
        if lines and found in ("newline", "tab"):
            continue
        if found == "space" and spaces:
            continue
        if found == "unassigned" and not 0xD800 <= ord(ch) <= 0xDFFF:
            continue
        raise InputError(
            f"{what} contains {describe(ch)} at character {index + 1}",
            hint=hint or "use one line of visible text",
        )
    return value
