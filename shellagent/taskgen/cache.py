"""The verification cache: verdicts by task key, in an append-only JSONL file.

A verdict is appended (and flushed) as soon as it is known, so a run that is interrupted
keeps everything it finished and the next run starts where it stopped. Regenerating a set
from the same seed gives the same keys, so only new or changed tasks are verified again.
A torn last line (the process was killed mid-write) is ignored.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from shellagent.taskgen.verify import Verdict


def default_cache_path() -> Path:
    from shellagent import paths

    return paths.cache_dir() / "taskgen" / "verdicts.jsonl"


class VerifyCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._known: dict[str, Verdict] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    verdict = Verdict.from_json(json.loads(line))
                except (ValueError, KeyError, TypeError):
                    continue
                self._known[verdict.key] = verdict

    def __len__(self) -> int:
        return len(self._known)

    def get(self, key: str) -> Verdict | None:
        return self._known.get(key)

    def put(self, verdict: Verdict) -> None:
        line = json.dumps(verdict.to_json(), ensure_ascii=False) + "\n"
        with self._lock:
            self._known[verdict.key] = verdict
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(line)
