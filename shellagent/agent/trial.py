"""Trying a command that changes files on a throwaway copy of the working directory.

The recipe step (``recipe_step``) tries the renderings it is unsure between before it shows
one. A read-only rendering runs confined in the session's own shell; a writer runs here: in
a new sandbox where the working directory is an overlay whose upper layer is a fresh
temporary directory, so every write lands in that directory and is thrown away with it.
The real files are the overlay's lower layer: read, never written. Each trial gets its own
sandbox and its own upper layer, so one trial cannot see another's changes.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shellagent.sandbox import CommandResult

__all__ = ["OverlayTrial"]


@dataclass(frozen=True)
class OverlayTrial:
    """A ``recipe_step.WriterTrial``: runs a command on an overlay copy of ``cwd``.

    ``scratch`` is where the upper layers go (a directory on disk outside every tree that
    is overlaid: overlayfs refuses an upper layer inside its lower one)."""

    scratch: Path = Path("/var/tmp")

    def __call__(self, command: str, cwd: str, timeout: float) -> CommandResult | None:
        from shellagent.sandbox import Overlay, Sandbox, get_profile

        here = Path(cwd or ".").resolve()
        if here == Path("/") or not here.is_dir():
            return None  # the whole file system cannot be one overlay's lower layer
        top = Path(tempfile.mkdtemp(prefix="shellagent-trial-", dir=self.scratch))
        try:
            upper, work = top / "upper", top / "work"
            upper.mkdir()
            work.mkdir()
            # The default profile with no write grant: the overlay is the only writable tree.
            profile = dataclasses.replace(
                get_profile("default", cwd=here),
                writable=(),
                workdir=here,
                overlays=(Overlay(here, upper, work),),
                host_view=False,
            )
            with Sandbox(profile, timeout=timeout) as session:
                return session.run(command, timeout=timeout)
        finally:
            shutil.rmtree(top, ignore_errors=True)
