"""Transactions: the agent works on a copy, you review the change set, then it lands.

An ``ask`` session sees the home and working directories through overlays whose upper
layers (``workspace.Workspace``) collect every write; ``changeset.compute`` reads the
upper layers into a ``ChangeSet`` (created, modified, deleted, renamed, mode changes, with
diffs for small text files); ``apply.apply`` moves exactly that change set into place,
outside the sandbox, atomically per file, refusing protected paths and conflicts, and
keeps what it replaced for ``undo``. Nothing touches your files before you said yes, and
what you said yes to can be undone.
"""

from __future__ import annotations

from shellagent.transaction.changeset import Change, ChangeSet, compute
from shellagent.transaction.workspace import Workspace, session_dir, workspaces_root

__all__ = [
    "Change",
    "ChangeSet",
    "Workspace",
    "compute",
    "session_dir",
    "workspaces_root",
]
