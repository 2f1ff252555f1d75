"""Follow-ups and the interactive session, through a real daemon and sandbox: a task that
continues an earlier session is given a digest of it, records the link, and works on the
changes that session kept; ``ask -c``, ``ask --resume`` and ``ask`` with no task."""

from __future__ import annotations

import argparse
import io
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shellagent import protocol
from shellagent.cli.ask import build_parser
from shellagent.cli.ask_client import run_via_daemon
from shellagent.cli.ask_repl import _next_cwd, interactive
from shellagent.events import ChangesDone, Note, Summary
from tests.daemon.conftest import (
    UNCHECKED,
    DaemonProc,
    RecordingUI,
    ask_cli,
    ask_inprocess,
    cmd,
    done,
    transcript_events,
)


def _task_message(session: str) -> str:
    users = [e for e in transcript_events(session) if e.get("role") == "user"]
    return str(users[0]["content"])


def _start(session: str) -> dict[str, Any]:
    return transcript_events(session)[0]


def test_a_follow_up_is_given_the_earlier_task_and_records_the_link(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    first = ask_inprocess(
        "count the lines", script(cmd("echo lines-counted-42"), done("there are 42")), workdir
    )
    assert first.code == UNCHECKED and _start(first.summary.session).get("continues") is None
    second = ask_inprocess(
        "and double it", script(done("84"), done("84")), workdir, continues=first.summary.session
    )
    assert second.summary.reason == "finished"  # (exit 1: no output shows 84)
    message = _task_message(second.summary.session)
    assert message.startswith("Earlier in this conversation:")
    assert "Earlier task: count the lines" in message
    assert "$ echo lines-counted-42   (exit 0)" in message and "    lines-counted-42" in message
    assert message.endswith("Task: and double it")
    assert _start(second.summary.session)["continues"] == first.summary.session
    notes = [e.message for e in second.of(Note) if "continuing session" in e.message]
    assert notes == [
        f"continuing session {first.summary.session}: 1 earlier task in the model's context; "
        "its shell variables and functions carry over"
    ]
    # a third follows the chain back through the second
    third = ask_inprocess("thanks", script(done("ok"), done("ok")), workdir, continues="last")
    message = _task_message(third.summary.session)
    assert message.index("count the lines") < message.index("and double it")


def test_a_follow_up_goes_on_with_the_changes_its_session_kept(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    first = ask_inprocess(
        "write a note", script(cmd("echo kept-text > note.txt"), done("written")), workdir, yes=True
    )
    assert first.of(ChangesDone)[0].outcome == "kept"
    assert not (workdir / "note.txt").exists()  # kept on the copy, not applied
    second = ask_inprocess(
        "show it", script(cmd("cat note.txt"), done("shown")), workdir, continues="last", yes=True
    )
    assert second.summary.exit_codes == (0,)
    assert "kept-text" in second.out  # the second task sees the first one's kept change
    notes = " ".join(e.message for e in second.of(Note))
    assert "its kept changes are in this copy" in notes
    assert not (workdir / "note.txt").exists()


def test_the_digest_leaves_out_the_oldest_tasks_and_says_so(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    previous = None
    for n in range(12):
        words = f"task number {n} " + "x" * 150
        run = ask_inprocess(
            words, script(done(f"did {n}"), done(f"did {n}")), workdir, continues=previous
        )
        previous = run.summary.session
    last = ask_inprocess("and now?", script(done("ok"), done("ok")), workdir, continues=previous)
    notes = " ".join(e.message for e in last.of(Note))
    assert "older ones left out: they no longer fit" in notes
    message = _task_message(last.summary.session)
    assert "task number 11" in message and "task number 0 " not in message
    assert len(message) < 2_000


def test_ask_c_follows_up_the_last_session_and_resume_names_one(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    first = ask_cli("--model", script(cmd("echo one"), done("one")), "say one", cwd=workdir)
    assert first.returncode == UNCHECKED, first.stderr
    second = ask_cli("--model", script(done("two"), done("two")), "-c", "now two", cwd=workdir)
    assert second.returncode == UNCHECKED, second.stderr
    assert "continuing session" in second.stderr
    starts = [json.loads(p.read_text().splitlines()[0]) for p in _transcripts()]
    assert len(starts) == 2
    (older,) = [s for s in starts if s["task"] == "say one"]
    (newer,) = [s for s in starts if s["task"] == "now two"]
    assert newer["continues"] == older["session"]
    third = ask_cli(
        "--model", script(done("3"), done("3")), "--resume", older["session"], "again", cwd=workdir
    )
    assert third.returncode == UNCHECKED, third.stderr
    missing = ask_cli(
        "--model", script(done("x"), done("x")), "--resume", "19990101T000000", "x", cwd=workdir
    )
    assert missing.returncode == 2 and "no session '19990101T000000'" in missing.stderr
    both = ask_cli("-c", "--resume", "abc", "x", cwd=workdir)
    assert both.returncode == 2 and "pick one" in both.stderr


def test_no_task_without_a_terminal_is_a_usage_error(workdir: Path) -> None:
    result = ask_cli(cwd=workdir)
    assert result.returncode == 2
    assert "not a terminal" in result.stderr and 'ask "what to do"' in result.stderr


def _transcripts() -> list[Path]:
    from shellagent.paths import transcripts_dir

    return sorted(transcripts_dir().glob("*.jsonl"))


@pytest.fixture
def by_task(tmp_path: Path) -> Callable[[dict[str, list[str]]], str]:
    def write(replies: dict[str, list[str]]) -> str:
        path = tmp_path / "by_task.json"
        path.write_text(json.dumps({"by_task": replies}))
        return f"scripted:{path}"

    return write


def _lines(*lines: str) -> Callable[[str], str]:
    queue: Iterator[str] = iter(lines)

    def read(prompt: str) -> str:
        line = next(queue, None)
        if line is None:
            raise EOFError
        if line == "^C":
            raise KeyboardInterrupt
        return line

    return read


def test_the_interactive_session_runs_each_line_as_a_follow_up_of_the_last(
    daemon: DaemonProc,
    by_task: Callable[[dict[str, list[str]]], str],
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    (workdir / "sub").mkdir()
    model = by_task(
        {
            "list the files": [cmd("cd sub && ls"), done("listed")],
            "where am i": [cmd("pwd"), done("in sub")],
        }
    )
    monkeypatch.chdir(workdir)
    args: argparse.Namespace = build_parser().parse_args(["--model", model])
    with create_pipe_input() as pipe:
        ui = RecordingUI(
            [],
            out=io.StringIO(),
            err=io.StringIO(),
            can_prompt=True,
            pt_input=pipe,
            pt_output=DummyOutput(),
        )
        code = interactive(
            args, run_via_daemon, ui=ui, read_line=_lines("list the files", "^C", "", "where am i")
        )
    assert code == UNCHECKED  # Ctrl-D after the last task: its status
    summaries = [e for e in ui.events if isinstance(e, Summary)]
    assert [s.reason for s in summaries] == ["finished", "finished"]
    assert summaries[0].cwd == str(workdir / "sub")
    second = transcript_events(summaries[1].session)
    assert second[0]["continues"] == summaries[0].session
    assert second[0]["cwd"] == str(workdir / "sub")  # the next task starts where the last ended
    assert "Earlier task: list the files" in _task_message(summaries[1].session)


def test_the_next_task_starts_only_in_a_directory_that_exists_on_the_host(tmp_path: Path) -> None:
    start = tmp_path
    (start / "real").mkdir()
    assert _next_cwd(str(start / "real"), start, start) == start / "real"
    assert _next_cwd(str(start / "made-on-the-copy"), start, start) == start
    assert _next_cwd("/tmp", start, start) == start  # the sandbox's private /tmp is not yours
    assert _next_cwd(None, start / "real", start) == start / "real"


def test_the_user_is_told_once_the_conversation_no_longer_fits_the_context(
    daemon: DaemonProc, tmp_path: Path, workdir: Path
) -> None:
    big = "head -c 1500 /dev/zero | tr '\\0' x"
    path = tmp_path / "small-context.json"
    replies = [cmd(f"{big}; echo {i}") for i in range(6)] + [done("ok"), done("ok")]
    path.write_text(json.dumps({"replies": replies, "context_size": 1400}))
    run = ask_inprocess("fill the context", f"scripted:{path}", workdir, yes=True)
    assert run.code == UNCHECKED
    notes = [e.message for e in run.of(Note) if "no longer fits" in e.message]
    assert len(notes) == 1, [e.message for e in run.of(Note)]


def test_a_follow_up_starts_from_the_shell_state_its_session_left(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    first = ask_inprocess(
        "set things up",
        script(cmd("export GREETING=hello-there; shout() { echo LOUD; }"), done("set")),
        workdir,
        yes=True,
    )
    assert first.summary.exit_codes == (0,)
    second = ask_inprocess(
        "use them",
        script(cmd('echo "$GREETING"; shout'), done("used")),
        workdir,
        continues=first.summary.session,
        yes=True,
    )
    assert "hello-there\nLOUD" in second.out
    notes = " ".join(e.message for e in second.of(Note))
    assert "its shell variables and functions carry over" in notes
    # a new conversation starts clean
    fresh = ask_inprocess(
        "new", script(cmd('echo "[${GREETING:-unset}]"'), done("x")), workdir, yes=True
    )
    assert "[unset]" in fresh.out


def test_after_an_apply_the_next_task_runs_on_the_applied_files_with_the_shell_state(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    first = ask_inprocess(
        "write it",
        script(cmd("echo applied-text > out.txt; export STEP=two"), done("written")),
        workdir,
        yes=True,
        apply=True,
    )
    assert first.of(ChangesDone)[0].outcome == "applied"
    assert (workdir / "out.txt").read_text() == "applied-text\n"
    second = ask_inprocess(
        "read it",
        script(cmd('cat out.txt; echo "step $STEP"'), done("read")),
        workdir,
        continues="last",
        yes=True,
    )
    assert "applied-text\nstep two" in second.out
    notes = " ".join(e.message for e in second.of(Note))
    assert "kept changes" not in notes  # nothing was left to carry: it was applied


def test_ask_c_follows_up_the_last_task_not_a_key_bindings_proposal(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    real = ask_cli("--model", script(cmd("echo real"), done("real")), "the real task", cwd=workdir)
    assert real.returncode == UNCHECKED, real.stderr
    listing = script(cmd("ls -la"), done("listed"), done("listed"))
    proposed = ask_cli("--model", listing, "--propose", "list here", cwd=workdir)
    assert proposed.stdout.strip() == "ls -la"
    starts = [json.loads(p.read_text().splitlines()[0]) for p in _transcripts()]
    assert sorted(s["source"] for s in starts) == ["ask", "propose"]
    (propose_start,) = [s for s in starts if s["source"] == "propose"]
    kinds: list[str] = []
    deadline = time.monotonic() + 15
    while "end" not in kinds and time.monotonic() < deadline:  # the daemon finishes it
        time.sleep(0.05)
        kinds = [e["type"] for e in transcript_events(propose_start["session"])]
    assert "end" in kinds, " ".join(kinds)
    assert "execution" not in kinds  # an allowed proposal is not run, not even on a copy
    follow = ask_cli("--model", script(done("ok"), done("ok")), "-c", "and then", cwd=workdir)
    assert follow.returncode == UNCHECKED, follow.stderr
    (real_start,) = [s for s in starts if s["source"] == "ask"]
    assert f"continuing session {real_start['session']}" in follow.stderr


def test_a_request_the_daemon_rejects_ends_ask_at_once_with_the_fix(
    daemon: DaemonProc, workdir: Path
) -> None:
    """As when an older daemon is still running after an upgrade: it refuses a field it does
    not know, and ask says so instead of waiting forever."""
    from shellagent.cli.ask_client import Connection, connect, follow, socket_path
    from shellagent.errors import EnvironmentProblem

    conn = Connection(connect(socket_path()))
    try:
        conn.sock.sendall(
            protocol.encode("ask", task="x", cwd=str(workdir), field_from_the_future=1)
        )
        ui = RecordingUI([], out=io.StringIO(), err=io.StringIO())
        with pytest.raises(EnvironmentProblem, match="did not take the task") as caught:
            follow(conn, ui)
        assert "shellagent daemon stop" in caught.value.show()
    finally:
        conn.close()
    # ask itself leaves out the fields it does not use, so such a daemon still serves it
    plain = ask_cli("--model", "scripted:/nonexistent.json", "hello", cwd=workdir)
    assert plain.returncode == 3 and "cannot read script" in plain.stderr
    assert "did not take the task" not in plain.stderr  # a failed task is not a refusal
