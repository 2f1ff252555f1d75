"""The digest a follow-up is given, and which session ``ask -c`` continues."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellagent.agent.followup import last_session, load_earlier
from shellagent.errors import InputError
from shellagent.events import End, Execution, SessionStart
from shellagent.transcript import TranscriptWriter


def _session(
    directory: Path, ident: str, task: str, *, source: str = "ask", continues: str | None = None
) -> None:
    with TranscriptWriter(ident, directory=directory, fsync=False) as sink:
        sink.write(SessionStart(session=ident, task=task, source=source, continues=continues))  # type: ignore[arg-type]
        sink.write(Execution(turn=1, command=f"echo {task}", output=f"{task}\n", exit_code=0))
        sink.write(End(reason="finished", summary=f"did {task}", turns=1, cwd="/work"))


def test_the_last_session_is_the_newest_ask_even_within_one_second(tmp_path: Path) -> None:
    # ids of one second sort by their random part: "-ffffff" started first here
    _session(tmp_path, "20261123T101500-ffffff", "first")
    _session(tmp_path, "20261123T101500-000000", "second")
    _session(tmp_path, "20261123T101501-aaaaaa", "an eval task", source="eval")
    assert last_session(tmp_path) == "20261123T101500-000000"


def test_no_session_to_continue_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no earlier session to continue"):
        last_session(tmp_path)


def test_the_digest_follows_the_chain_oldest_first(tmp_path: Path) -> None:
    _session(tmp_path, "20261123T100000-aaaaaa", "one")
    _session(tmp_path, "20261123T100100-bbbbbb", "two", continues="20261123T100000-aaaaaa")
    earlier = load_earlier("20261123T100100", tmp_path)
    assert earlier.session == "20261123T100100-bbbbbb" and earlier.tasks == 2
    assert earlier.dropped == 0 and earlier.cwd == "/work" and earlier.changes == "none"
    assert earlier.text.index("Earlier task: one") < earlier.text.index("Earlier task: two")
    assert (
        '  $ echo one   (exit 0)\n    one\n  it ended unverified (finished): "did one"'
        in earlier.text
    )
    tight = load_earlier("20261123T100100", tmp_path, budget=150)
    assert tight.tasks == 1 and tight.dropped == 1 and "Earlier task: two" in tight.text
