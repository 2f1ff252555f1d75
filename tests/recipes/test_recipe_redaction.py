"""A recipe made from a session (``recipes add``) holds no secret of its task or commands,
redacted with the transcript's rules when the recipe is made: also from a transcript an
earlier shellagent wrote with fewer rules (review 3, M3: eight task-text shapes reached
``mine.toml``)."""

from __future__ import annotations

from typing import Any

from shellagent.events import End, Execution, SessionStart
from shellagent.recipes import user_dir
from shellagent.transcript import Redactor
from shellagent.transcript.store import TranscriptWriter
from tests.transcript.secret_structures import SECRETS

from .test_cli import cli

PIECE = 12
# one-line secrets of the structural corpus, in the task text and a command
IN_TASK = [s for s in SECRETS if "\n" not in s.text][:12]


def leaked(secret: str, text: str) -> bool:
    if len(secret) <= PIECE:
        return secret in text
    return any(secret[i : i + PIECE] in text for i in range(len(secret) - PIECE + 1))


class _Unredacted(Redactor):
    """An earlier shellagent's writer, as far as these shapes go: it found none of them."""

    def redact_value(self, value: Any) -> Any:
        return value


def test_a_recipe_from_a_transcript_written_in_clear_holds_no_secret() -> None:
    task = "check the logins: " + " ; ".join(s.text for s in IN_TASK)
    command = "grep -c login /srv/app.log # " + IN_TASK[0].text
    with TranscriptWriter(fsync=False, redactor=_Unredacted()) as writer:
        writer.write(SessionStart(session=writer.session_id, task=task))
        writer.write(Execution(turn=1, command=command, output="3\n", exit_code=0))
        writer.write(End(reason="finished", success=True))
    assert IN_TASK[0].secrets[0] in writer.path.read_text()  # the transcript holds them
    done = cli("add", "--from", writer.session_id)
    written = (user_dir() / "mine.toml").read_text()
    assert "[REDACTED:" in written
    for shown in (written, done.stdout):
        left = [s.name for s in IN_TASK if any(leaked(x, shown) for x in s.secrets)]
        assert not left, left
