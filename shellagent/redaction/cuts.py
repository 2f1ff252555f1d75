"""Cutting output so that what is kept can still be redacted on its own.

Output is cut twice on its way to a transcript: the sandbox keeps a head and a tail of each
command's output (``sandbox/output.py``), and the agent loop cuts that to the observation
budget (``agent/observation.py``). The transcript writer redacts what it is given, so a cut
must not keep a piece of a secret whose telling part was cut away: a key's base64 lines
without their ``BEGIN … PRIVATE KEY`` line, the end of a token without its prefix, a password
without the ``--password`` before it. Two rules make the kept text safe to redact alone:

1. A cut never splits a secret. Where a redaction rule's match (its context included) or a
   word of up to ``WORD`` characters straddles the cut, all of it goes to the omitted side.
   The rules see ``MARGIN`` characters of what was cut away and ``WINDOW`` of what is kept
   on each side: more than any match but a key block's (and known values are words).
2. A key block open where the kept tail starts (its ``BEGIN`` line omitted) is omitted up to
   its end: its ``END`` line, or the first line that cannot be part of it. ``BlockTracker``
   follows every byte that is cut away to know whether a block is open.

What the model sees is the same cut, so it may see a few characters less than the budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shellagent.redaction.scan import Hit
from shellagent.redaction.shapes import BEGIN, BODY_LINE, END, PUTTY_END, PUTTY_START
from shellagent.redaction.spans import find

MARGIN = 1024  # characters of what is cut away, on each side, that a rule may need
WINDOW = 4096  # characters of what is kept, on each side, that the rules look at
WORD = 256  # a whitespace-free run up to this long is never split
_LINE_MAX = 8192  # a longer line cannot be part of a key block

_BEGIN_B = re.compile(BEGIN.encode())
_END_B = re.compile(END.encode())
_BODY_B = re.compile(BODY_LINE.encode())
_PUTTY_START_B, _PUTTY_END_B = PUTTY_START.encode(), PUTTY_END.encode()
_END = re.compile(END)
_BODY = re.compile(BODY_LINE)
_MARKERS = (b"-----BEGIN", _PUTTY_START_B)
_CARRY = 64  # bytes kept between chunks, so that a marker split across them is still seen


class BlockTracker:
    """Follows a stream of bytes and knows whether a private key block is open at its end.

    Outside a block it only searches for ``-----BEGIN`` and ``Private-Lines:`` (at the speed
    of ``bytes.find``); inside one it reads line by line until the block ends.
    """

    def __init__(self) -> None:
        self.kind: str | None = None  # "pem" or "putty" while inside a block
        self._pending = bytearray()  # the unfinished line, or the carry outside a block

    def copy(self) -> BlockTracker:
        other = BlockTracker()
        other.kind, other._pending = self.kind, bytearray(self._pending)
        return other

    def feed(self, data: bytes | bytearray, start: int = 0, end: int | None = None) -> None:
        """Read ``data[start:end]``; outside a block, without copying it."""
        end = len(data) if end is None else end
        if start >= end:
            return
        if self.kind is None and len(self._pending) <= _CARRY:
            # A marker may begin in the carry and end in ``data``, or lie in ``data``.
            seam = bytes(self._pending) + bytes(data[start : start + _CARRY])
            at = _first_marker(seam, 0, len(self._pending))
            if at is not None:
                self._pending = bytearray(seam[at:])
                start = min(start + _CARRY, end)
            else:
                at = _first_marker(data, start, end)
                if at is None:
                    self._pending = bytearray(data[max(start, end - _CARRY) : end])
                    return
                self._pending, start = bytearray(), at
        self._read(data[start:end])

    def _read(self, data: bytes | bytearray) -> None:
        pending = self._pending
        pending += data
        while pending:
            if self.kind is None:
                at = _first_marker(pending, 0, len(pending))
                if at is None:
                    del pending[: max(len(pending) - _CARRY, 0)]
                    return
                del pending[:at]
            newline = pending.find(b"\n")
            if newline < 0:
                if len(pending) <= _LINE_MAX:
                    return  # wait for the end of the line
                line, rest = bytes(pending), b""
            else:
                line, rest = bytes(pending[:newline]), bytes(pending[newline + 1 :])
            pending[:] = rest
            self._line(line)

    def _line(self, line: bytes) -> None:
        if self.kind == "putty":
            if line.startswith(_PUTTY_END_B):
                self.kind = None
                return
            if _BODY_B.fullmatch(line):
                return
            self.kind = None
        elif self.kind == "pem":
            if len(line) <= _LINE_MAX and not _END_B.search(line) and _BODY_B.fullmatch(line):
                return
            self.kind = None
        self._open(line)

    def _open(self, line: bytes) -> None:
        """A line outside a block: does a block start on it and run past its end?"""
        if line.startswith(_PUTTY_START_B):
            self.kind = "putty"
            return
        begins = list(_BEGIN_B.finditer(line))
        if begins and not _END_B.search(line, begins[-1].end()):
            self.kind = "pem"

    def open_block(self) -> str | None:
        """The kind of block open at the end of what was fed, an unfinished line included."""
        partial = bytes(self._pending)
        if self.kind == "pem":
            return None if _END_B.search(partial) else "pem"
        if self.kind == "putty":
            return None if partial.startswith(_PUTTY_END_B) else "putty"
        line = partial[partial.rfind(b"\n") + 1 :]
        if line.startswith(_PUTTY_START_B):
            return "putty"
        begins = list(_BEGIN_B.finditer(line))
        if begins and not _END_B.search(line, begins[-1].end()):
            return "pem"
        return None


def _first_marker(data: bytes | bytearray, start: int, end: int) -> int | None:
    """Where the first ``-----BEGIN`` or ``Private-Lines:`` begins in ``data[start:end]``
    (a marker may run past ``end``)."""
    found = [i for i in (data.find(m, start, end + len(m) - 1) for m in _MARKERS) if i >= 0]
    found = [i for i in found if i < end]
    return min(found) if found else None


@dataclass(frozen=True)
class Cut:
    head: str  # what is kept of the start
    tail: str  # what is kept of the end
    dropped_head: str  # taken off the end of the head to keep a secret whole
    dropped_tail: str  # taken off the start of the tail


def guard(head: str, right: str, left: str, tail: str, block: str | None) -> Cut:
    """Move a cut so that ``head`` and ``tail`` can be redacted on their own.

    ``right`` is what followed ``head`` and ``left`` what preceded ``tail`` (up to ``MARGIN``
    characters of each, from the part cut away); ``block`` is the kind of key block open
    where ``tail`` starts (``BlockTracker.open_block``).
    """
    right, left = right[:MARGIN], left[-MARGIN:]
    near_head = head[-WINDOW:]
    keep_head = len(head) - len(near_head) + _retreat(near_head + right, len(near_head))
    start = _advance(left + tail[:WINDOW], len(left)) - len(left)
    if block is not None:
        start = max(start, _block_end(tail, block))
    return Cut(head[:keep_head], tail[start:], head[keep_head:], tail[:start])


def cut_text(text: str, head: int, tail: int) -> Cut:
    """``text`` cut to at most its first ``head`` and last ``tail`` characters, guarded."""
    tail_start = max(len(text) - tail, head)
    tracker = BlockTracker()
    tracker.feed(text[:tail_start].encode("utf-8", "surrogatepass"))
    return guard(
        text[:head],
        text[head : min(head + MARGIN, tail_start)],
        text[max(tail_start - MARGIN, head) : tail_start],
        text[tail_start:],
        tracker.open_block(),
    )


def _retreat(text: str, cut: int) -> int:
    """``cut`` moved back until no secret and no word it splits is kept before it."""
    hits = find(text)  # known values are words, which are kept whole anyway
    moved = True
    while moved:
        moved = False
        for hit in _straddling(hits, cut):
            cut, moved = hit.outer_start, True
        start = _word_start(text, cut)
        if start < cut:
            cut, moved = start, True
    return cut


def _advance(text: str, cut: int) -> int:
    """``cut`` moved forward until no secret and no word it splits is kept after it."""
    hits = find(text)  # known values are words, which are kept whole anyway
    moved = True
    while moved:
        moved = False
        for hit in _straddling(hits, cut):
            cut, moved = hit.outer_end, True
        end = _word_end(text, cut)
        if end > cut:
            cut, moved = end, True
    return cut


def _straddling(hits: list[Hit], cut: int) -> list[Hit]:
    return [h for h in hits if h.outer_start < cut < h.outer_end]


def _word_start(text: str, cut: int) -> int:
    """Where the whitespace-free run that ``cut`` falls inside starts (``cut`` if none, or if
    the run is longer than ``WORD``)."""
    if cut == 0 or cut >= len(text) or text[cut - 1].isspace() or text[cut].isspace():
        return cut
    start = cut
    while start > 0 and not text[start - 1].isspace() and cut - start <= WORD:
        start -= 1
    return start if cut - start <= WORD else cut


def _word_end(text: str, cut: int) -> int:
    if cut == 0 or cut >= len(text) or text[cut - 1].isspace() or text[cut].isspace():
        return cut
    end = cut
    while end < len(text) and not text[end].isspace() and end - cut <= WORD:
        end += 1
    return end if end - cut <= WORD else cut


def _block_end(tail: str, kind: str) -> int:
    """Where the key block open at the start of ``tail`` ends in it."""
    at, first = 0, True
    while at < len(tail):
        newline = tail.find("\n", at)
        end = len(tail) if newline < 0 else newline
        line = tail[at:end]
        if kind == "pem" and (m := _END.search(line)):
            return at + m.end()
        if kind == "putty" and line.startswith(PUTTY_END):
            return end
        if not first and not _BODY.fullmatch(line):
            return at
        first = False  # the first line is the rest of one begun before the cut
        at = end + 1
    return len(tail)
