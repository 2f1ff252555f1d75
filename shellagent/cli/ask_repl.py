"""``ask`` with no task: an interactive session, one task or follow-up per line.

Each line runs like ``ask "LINE"`` (same screen, approvals and change-set review), and
every line after the first is a follow-up of the one before (``Ask.continues``): the model
is given a digest of the earlier tasks (``agent/followup.py``), changes kept at a review
carry over to the next task's copy, and the next task starts in the directory the last
one ended in when that directory exists on your side. The line editor is prompt-toolkit's:
history (kept in the state directory), Esc Enter for a new line, Ctrl-C clears the line
(while a task runs it cancels the task), Ctrl-D leaves.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shellagent import paths

PROMPT = "ask> "
GREETING = (
    "shellagent: type a task (Esc Enter for a new line); each line follows up the one "
    "before. Ctrl-C cancels a running task, Ctrl-D leaves."
)

ReadLine = Callable[[str], str]
RunLine = Callable[[argparse.Namespace, Any], int]


def interactive(
    args: argparse.Namespace,
    run: RunLine,
    *,
    ui: Any = None,
    read_line: ReadLine | None = None,
) -> int:
    """Read tasks until Ctrl-D; ``run(args, ui)`` runs one (``ask_client.run_via_daemon``).
    Returns the exit status of the last task (0 when none ran)."""
    from shellagent.cli.ask_ui import AskUI

    ui = ui or AskUI.for_terminal(dry_run=args.dry_run)
    read_line = read_line or _line_editor()
    start = Path.cwd()
    cwd = start
    status = 0
    print(GREETING, file=ui.err)
    while True:
        try:
            line = read_line(PROMPT).strip()
        except KeyboardInterrupt:
            continue  # the line is dropped; the session goes on
        except EOFError:
            return status
        if not line:
            continue
        if line in ("exit", "quit"):
            return status
        ui.last_summary = None
        status = run(argparse.Namespace(**{**vars(args), "task": line, "cwd": str(cwd)}), ui)
        summary = ui.last_summary
        if summary is not None:
            args.continues = summary.session
            cwd = _next_cwd(summary.cwd, cwd, start)


def _next_cwd(ended_in: str | None, current: Path, start: Path) -> Path:
    """Where the next task starts: where the last one ended, when that is a directory of
    yours here too (inside the home directory or where ``ask`` started); otherwise where
    the last one started. A directory made on the copy exists only once it is applied."""
    if not ended_in:
        return current
    ended = Path(ended_in)
    inside = ended.is_relative_to(Path.home()) or ended.is_relative_to(start)
    return ended if inside and ended.is_dir() and os.access(ended, os.X_OK) else current


def _line_editor() -> ReadLine:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    history = paths.ensure_private_dir(paths.state_dir()) / "ask_history"
    session: Any = PromptSession(history=FileHistory(str(history)), key_bindings=bindings)

    def read(prompt: str) -> str:
        text: str = session.prompt(prompt, prompt_continuation="...  ")
        return text

    return read


def usable() -> bool:
    """Whether an interactive session can run: a terminal on stdin and stdout."""
    return sys.stdin.isatty() and sys.stdout.isatty()
