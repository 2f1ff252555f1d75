"""What the agent loop needs of a shell: the ``Shell`` protocol and the ``Grants`` it runs with.

A sandbox ``Sandbox`` implements it, and so does ``shellagent.testing.FakeShell``. The loop
reads the grants to tell the model where it may write, and a recurring job made in a session
inherits them; it never looks at a sandbox profile itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from shellagent.sandbox.shell import CommandResult

__all__ = ["Grants", "Resumable", "Shell"]


@dataclass(frozen=True)
class Grants:
    """What a shell's commands may touch. ``profile`` names the sandbox profile (None for a
    shell that is not a sandbox); ``anywhere_writable`` is a throwaway root, where every
    write vanishes with the sandbox."""

    profile: str | None = None
    workdir: Path | None = None
    writable: tuple[Path, ...] = ()
    anywhere_writable: bool = False
    network: bool = False
    # seen through overlays: writable copies whose changes the user reviews at the end
    overlaid: tuple[Path, ...] = ()


@runtime_checkable
class Shell(Protocol):
    """A persistent shell: state (cwd, variables, functions) survives between commands."""

    @property
    def cwd(self) -> str:
        """The shell's current directory ("" when unknown)."""
        ...

    @property
    def functions(self) -> frozenset[str]:
        """Names of the shell functions defined so far (they can shadow programs)."""
        ...

    @property
    def grants(self) -> Grants: ...

    def run(
        self,
        command: str,
        *,
        timeout: float | None = None,
        on_output: Callable[[str], None] | None = None,
        confined: bool = False,
        judged: Sequence[tuple[int, str]] = (),
    ) -> CommandResult:
        """Run ``command``; ``confined`` runs it where the kernel refuses every write, and
        not at all if it holds a substitution other than those ``judged`` (the policy's
        ``Evaluation.substitutions``)."""
        ...

    def interrupt(self) -> None:
        """Stop the running command as a timeout would; safe from any thread."""
        ...

    def close(self) -> None:
        """End the shell (and its sandbox); closing twice is harmless."""
        ...


@runtime_checkable
class Resumable(Protocol):
    """A shell whose state a later shell can start from (a sandbox ``Sandbox``)."""

    def export_state(self) -> bytes | None:
        """The state (variables, functions, options, umask, cwd), or None when there is
        none to give (no command left one, or the shell is gone)."""
        ...
