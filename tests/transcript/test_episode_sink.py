"""The one sink that holds back ``end``: what comes after the loop is written before it."""

from __future__ import annotations

from shellagent.events import ChangeSetRecord, Check, End, Execution, ModelTurn, SessionStart
from shellagent.testing import MemorySink
from shellagent.transcript import EpisodeSink


def start() -> SessionStart:
    return SessionStart(session="memory", task="t", model="m", backend="b", profile=None)


def test_the_end_waits_for_what_the_owner_writes_after_the_loop() -> None:
    target = MemorySink()
    sink = EpisodeSink(target)
    sink.write(start())
    sink.write(ModelTurn(turn=1, raw="{}", action=None, valid=False, generated_tokens=7))
    sink.write(Execution(turn=1, command="ls", output="a\n", exit_code=0))
    sink.write(End(reason="finished", summary="done", turns=1))
    sink.close()  # the loop is done with it: the real sink stays open
    assert [e.kind for e in target.events] == ["session_start", "model_turn", "execution"]
    assert not target.closed
    record = ChangeSetRecord(outcome="kept", created=1)
    sink.finish(record, success=False, unsupported=("the last command failed (exit 1)",))
    *_, written, end = target.events
    assert isinstance(written, ChangeSetRecord) and (written.outcome, written.created) == (
        "kept",
        1,
    )
    assert isinstance(end, End) and (end.reason, end.success, end.turns) == ("finished", False, 1)
    assert end.unsupported == ("the last command failed (exit 1)",)
    assert (sink.turns, sink.exit_codes, sink.generated_tokens, sink.last_output) == (
        1,
        [0],
        7,
        "a\n",
    )


def test_without_an_end_a_fallback_is_written_with_the_turns_counted_else_none() -> None:
    counted = MemorySink()
    sink = EpisodeSink(counted)
    sink.write(ModelTurn(turn=1, raw="x", action=None, valid=False))
    check = Check(command="test -e x", exit_code=1, success=False)
    sink.finish(check, fallback="error", success=False)
    *_, end = counted.events
    assert isinstance(end, End) and (end.reason, end.turns, end.success) == ("error", 1, False)

    cut_short = MemorySink()
    EpisodeSink(cut_short).finish()  # no end and no fallback: the transcript reads interrupted
    assert cut_short.events == []


def test_finish_writes_the_end_once() -> None:
    target = MemorySink()
    sink = EpisodeSink(target)
    sink.write(End(reason="cancelled", turns=0))
    sink.finish()
    sink.finish()
    assert [e.kind for e in target.events] == ["end"]
