"""Capped command output: keep a head and a tail, count what was dropped, clean for reading.

A command may print 100 MB or run ``yes`` until it is killed; memory stays bounded because
only ``head`` bytes from the start and ``tail`` bytes from the end are ever kept (plus a
margin on each side of the cut). What is cut away is still looked at, so that the kept text
holds no piece of a secret whose telling part was cut away: see
``shellagent/transcript/redaction/cuts.py``.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shellagent.redaction.cuts import BlockTracker

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), and two-byte escapes (ESC x).
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[@-Z\\-_]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
# C0 and C1 controls other than tab and newline (carriage returns are handled first).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")
# Bytes kept beyond each side of the cut, for the redaction rules (``cuts.MARGIN`` chars).
MARGIN = 1024
# What leaves the buffer is read by the tracker in batches of at least this many bytes.
_BATCH = 64 * 1024


class CappedBuffer:
    """Collects bytes; keeps the first ``head`` and the last ``tail`` bytes."""

    def __init__(self, head: int = 8192, tail: int = 8192) -> None:
        self.head_limit = head
        self.tail_limit = tail
        self._head = bytearray()  # the first head + MARGIN bytes
        self._tail = bytearray()  # the last tail + MARGIN bytes after the first head
        self._tracker: BlockTracker | None = None  # follows what is cut away, once there is
        self._leaving = bytearray()  # cut away, not yet read by the tracker
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit + MARGIN - len(self._head)
        if room > 0:
            self._head += data[:room]
        past_head = self.total - self.head_limit
        if past_head <= 0 or not self.tail_limit:
            return
        if past_head < len(data):
            data = data[len(data) - past_head :]
        keep = self.tail_limit + MARGIN
        if len(data) >= keep:  # the old tail and the front of ``data`` are cut away
            self._cut_away(self._tail, len(self._tail))
            self._cut_away(data, len(data) - keep)
            self._tail = bytearray(data[len(data) - keep :])
            return
        self._tail += data
        excess = len(self._tail) - keep
        if excess > 0:
            self._cut_away(self._tail, excess)
            del self._tail[:excess]

    def _cut_away(self, data: bytes | bytearray, end: int) -> None:
        """``data[:end]`` leaves the buffer: the tracker reads it on its way out."""
        if end <= 0:
            return
        if self._tracker is None:
            self._tracker = _tracker(bytes(self._head[: self.head_limit]))
        if end >= _BATCH:  # large enough to read in place, after what waits
            if self._leaving:
                self._tracker.feed(self._leaving)
                self._leaving.clear()
            self._tracker.feed(data, 0, end)
            return
        self._leaving += data[:end]
        if len(self._leaving) >= _BATCH:
            self._tracker.feed(self._leaving)
            self._leaving.clear()

    @property
    def omitted(self) -> int:
        return max(self.total - self.head_limit - self.tail_limit, 0)

    @property
    def truncated(self) -> bool:
        return self.omitted > 0

    def text(self) -> str:
        """Head and tail decoded and cleaned, with a note where bytes were dropped."""
        head = _decode(self._head[: self.head_limit])
        if not self.tail_limit:
            return head
        if not self.omitted:
            return head + _decode(self._tail)
        from shellagent.redaction.cuts import guard

        tail = self._tail[-self.tail_limit :]
        left = self._tail[: len(self._tail) - self.tail_limit]
        right = self._head[self.head_limit : self.head_limit + min(MARGIN, self.omitted)]
        # The tracker has seen everything before ``left``; it was made when bytes first
        # left the tail, so without one the head is all that came before.
        if self._tracker is not None:
            tracker = self._tracker.copy()
            tracker.feed(self._leaving)
        else:
            tracker = _tracker(bytes(self._head[: self.head_limit]))
        tracker.feed(bytes(left))
        cut = guard(head, _decode(right), _decode(left), _decode(tail), tracker.open_block())
        omitted = self.omitted + len(cut.dropped_head.encode()) + len(cut.dropped_tail.encode())
        sep = "" if cut.head.endswith("\n") or not cut.head else "\n"
        return f"{cut.head}{sep}[… {omitted} bytes omitted …]\n{cut.tail}"


def _tracker(head: bytes) -> BlockTracker:
    from shellagent.redaction.cuts import BlockTracker

    tracker = BlockTracker()
    tracker.feed(head)
    return tracker


def _decode(data: bytes | bytearray) -> str:
    return clean(bytes(data).decode("utf-8", errors="replace"))


def clean(text: str) -> str:
    """What a terminal would leave on screen, near enough: no escapes, no overwritten lines.

    Terminal queries (``ESC [6n``, ``OSC 11;?``) are removed with every other escape, so
    nothing waits for a reply; a carriage return keeps only what was written after it.
    """
    text = _ANSI.sub("", text)
    text = text.replace("\r\n", "\n")
    if "\r" in text:
        text = "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))
    return _CONTROL.sub("", text)


# What a refused write, connection or signal looks like to the programs that tried it
# (EACCES, EPERM and, for a read-only mount, EROFS). False alarms only cost a question.
REFUSAL_MARKERS = (
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
    "PermissionError",
    "EACCES",
    "EPERM",
    "EROFS",
)


def refusal_seen(output: str) -> bool:
    """Whether a command's output shows that something it tried was refused."""
    return any(marker in output for marker in REFUSAL_MARKERS)


def streamer(buf: CappedBuffer, on_output: Callable[[str], None] | None) -> Callable[[bytes], None]:
    """Feed the buffer; stream the head of the output live, then say the rest is elided."""
    if on_output is None:
        return buf.feed
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(chunk: bytes) -> None:
        before = buf.total
        buf.feed(chunk)
        if before < buf.head_limit:
            text = clean(decoder.decode(chunk[: buf.head_limit - before]))
            if text:
                on_output(text)
            if buf.total >= buf.head_limit:
                on_output("\n[… output continues; the end is shown when the command ends …]\n")

    return feed
