"""Capped command output: keep a head and a tail, count what was dropped, clean for reading.

A command may print 100 MB or run ``yes`` until it is killed; memory stays bounded because
only ``head`` bytes from the start and ``tail`` bytes from the end are ever kept.
"""

from __future__ import annotations

import re

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


class CappedBuffer:
    """Collects bytes; keeps the first ``head`` and the last ``tail`` bytes."""

    def __init__(self, head: int = 8192, tail: int = 8192) -> None:
        self.head_limit = head
        self.tail_limit = tail
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data and self.tail_limit:
            self._tail += data
            if len(self._tail) > self.tail_limit:
                del self._tail[: len(self._tail) - self.tail_limit]

    @property
    def omitted(self) -> int:
        return self.total - len(self._head) - len(self._tail)

    @property
    def truncated(self) -> bool:
        return self.omitted > 0

    def text(self) -> str:
        """Head and tail decoded and cleaned, with a note where bytes were dropped."""
        head = clean(self._head.decode("utf-8", errors="replace"))
        if not self._tail:
            return head
        tail = clean(self._tail.decode("utf-8", errors="replace"))
        if not self.omitted:
            return head + tail
        sep = "" if head.endswith("\n") or not head else "\n"
        return f"{head}{sep}[… {self.omitted} bytes omitted …]\n{tail}"


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
