"""Sessions whose applied changes the user took back (``shellagent undo``).

Such a session is neither training data nor a worked example. The undo store is the apply
journal's (``transaction/apply.py``: one directory per apply under ``<state>/undo``, a
``journal.jsonl`` whose ``begin`` line names the session and whose ``undone`` line marks the
undo); it is read here, below the transaction layer, so exports and the example library
need not depend on it.
"""

from __future__ import annotations

import json

from shellagent import paths

__all__ = ["undone_sessions"]


def undone_sessions() -> frozenset[str]:
    """Every session with an undone apply (none when nothing was ever applied)."""
    store = paths.state_dir() / "undo"
    found: set[str] = set()
    try:
        records = list(store.iterdir())
    except OSError:
        return frozenset()
    for record in records:
        session, undone = "", False
        try:
            lines = (record / "journal.jsonl").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                break  # a torn last line of an interrupted apply
            if isinstance(entry, dict):
                session = str(entry.get("begin", session))
                undone = undone or "undone" in entry
        if session and undone:
            found.add(session)
    return frozenset(found)
