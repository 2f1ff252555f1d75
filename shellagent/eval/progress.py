"""The progress line of a run on stderr: done/total, solved/failed/invalid, ETA.

On a terminal the line is rewritten in place; otherwise (a run logged to a file) one line
is printed per finished task, so a background run can be followed with ``tail -f``.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from shellagent.eval.runner import TaskResult


def format_duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class Progress:
    """Counts finished tasks and draws the line; ``update`` is safe from any job thread."""

    def __init__(
        self, total: int, *, stream: TextIO | None = None, live: bool | None = None
    ) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.counts = {"solved": 0, "failed": 0, "invalid": 0, "cancelled": 0, "error": 0}
        self.done = 0
        self.started = time.monotonic()
        self._lock = threading.Lock()

    def line(self, last: TaskResult | None = None) -> str:
        elapsed = time.monotonic() - self.started
        left = self.total - self.done
        eta = "?" if self.done == 0 else format_duration(elapsed / self.done * left)
        c = self.counts
        text = (
            f"[{self.done}/{self.total}] solved {c['solved']} failed {c['failed']} "
            f"invalid {c['invalid']}"
        )
        if c["error"]:
            text += f" errors {c['error']}"
        text += f"  {format_duration(elapsed)} elapsed, ETA {eta}"
        if last is not None and not self.live:
            text += f"  {last.id} {last.status}"
            if last.invalid_reason:
                text += f" ({last.invalid_reason})"
        return text

    def update(self, result: TaskResult) -> None:
        with self._lock:
            self.done += 1
            self.counts[result.status] = self.counts.get(result.status, 0) + 1
            if self.live:
                self.stream.write("\r\x1b[2K" + self.line())
            else:
                self.stream.write(self.line(result) + "\n")
            self.stream.flush()

    def finish(self) -> None:
        with self._lock:
            if self.live and self.done:
                self.stream.write("\n")
                self.stream.flush()
