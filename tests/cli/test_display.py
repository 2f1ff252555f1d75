"""Nothing a model, a daemon or a transcript wrote reaches the terminal raw.

Checked at two levels: ``AskUI`` writing into a StringIO, every event with hostile text in
every field; and the real ``ask`` command, a subprocess talking over a real Unix socket to
a stand-in daemon (same user, private socket) that sends the same hostile events.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shellagent import protocol
from shellagent.chars import HIDDEN_RANGES, kind
from shellagent.cli.ask_ui import AskUI
from shellagent.cli.display import clean_output, reveal, shown
from shellagent.events import WIRE_EVENTS, ApprovalNeeded, Proposed, WireEvent

# Erase the line above, return to column 0 and draw a harmless command (security review
# H5); then a bidi override, a zero-width space, a line separator and a C1 CSI.
SPOOF = "tidy\x1b[1A\x1b[2K\r[1] $ ls -la ~/Documents\u202egnp.exe\u200b\u2028\x9b2J"
SGR = re.compile(r"\x1b\[[0-9;]*m")  # colour codes: the only escapes ask writes itself


def raw_hidden(text: str) -> list[str]:
    """Characters in ``text`` a terminal would not show as themselves (newlines aside)."""
    return sorted(
        {f"U+{ord(c):04X}" for c in SGR.sub("", text) if kind(c) not in (None, "newline")}
    )


def _hostile_value(hint: Any, name: str) -> Any:
    """The spoof wherever the field's type lets a daemon put text; a valid value elsewhere."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return _hostile_value(options[0], name)
    if origin is typing.Literal:
        return typing.get_args(hint)[0]
    if hint is str:
        if name == "command":
            return "ls " + SPOOF
        if name == "summary":
            return SPOOF + "\nsecond line"
        if name == "data":
            return SPOOF + "\n"
        return SPOOF
    if origin is tuple:
        return (_hostile_value(typing.get_args(hint)[0], name),) * 2
    if hint is bool:
        return name == "timed_out"
    if hint in (int, float):
        return 1
    if origin is dict:
        return {}
    if dataclasses.is_dataclass(hint):  # a record inside an event: hostile all through
        return hostile_record(hint)
    raise AssertionError(f"no hostile value for {name}: {hint!r}")


def hostile_record(cls: Any) -> Any:
    hints = typing.get_type_hints(cls)
    return cls(**{f.name: _hostile_value(hints[f.name], f.name) for f in dataclasses.fields(cls)})


def hostile(kind_: str, **fixed: Any) -> WireEvent:
    """An event of ``kind_`` with the spoof in every text field a daemon could fill."""
    event: WireEvent = dataclasses.replace(hostile_record(WIRE_EVENTS[kind_]), **fixed)
    return event


@pytest.mark.parametrize("color", [False, True])
def test_every_event_with_hostile_text_in_every_field_prints_nothing_hidden(color: bool) -> None:
    out, err = io.StringIO(), io.StringIO()
    ui = AskUI(out=out, err=err, color=color)
    for event in protocol.EVENT_TYPES:
        ui.event(hostile(event))
    for decision in ("auto", "refuse", "always", "edit"):
        ui.event(hostile("approval", decision=decision))
    ui.event(hostile("invalid", stop="end"))
    ui.event(hostile("summary", reason="finished"))
    request = hostile("approval_request", command="rm -rf ~/Documents")
    assert isinstance(request, ApprovalNeeded)
    answer = ui.approve(request)
    assert answer.decision == "refuse"
    text = out.getvalue() + err.getvalue()
    assert raw_hidden(text) == []
    for marker in ("⟨ESC⟩", "⟨\\r⟩", "⟨U+202E⟩", "⟨U+200B⟩", "⟨U+2028⟩", "⟨\\x9b⟩"):
        assert marker in text
    assert "$ rm -rf ~/Documents" in text  # the command asked about is shown, as it is
    assert "second line" in text  # a summary keeps its own lines


def test_without_the_escaping_the_check_would_see_the_spoof() -> None:
    """Positive control: the check above finds the raw characters when they are there."""
    assert raw_hidden(SPOOF) == ["U+000D", "U+001B", "U+009B", "U+200B", "U+2028", "U+202E"]


def test_a_why_that_redraws_the_screen_cannot_hide_the_command() -> None:
    out = io.StringIO()
    AskUI(out=out).event(
        Proposed(turn=1, command="rm -rf ~/Documents", why=SPOOF, decision="ask", reasons=())
    )
    lines = out.getvalue().splitlines()
    assert lines[0] == "[1] $ rm -rf ~/Documents"
    assert lines[1].startswith("    why: tidy⟨ESC⟩[1A⟨ESC⟩[2K⟨\\r⟩[1] $ ls")
    assert len(lines) == 3  # why stays on one line: the separator did not make a new one


def test_reveal_shown_and_clean_output_share_one_classification() -> None:
    for ch in ("\x1b", "\r", "\x00", "\x9b", "\u202e", "\u200b", "\u2028", "\ufeff"):
        assert ch not in reveal(f"a{ch}b")[0]
        assert ch not in shown(f"a{ch}b", lines=True)
        assert ch not in clean_output(f"a{ch}b")
    assert shown("a\nb", lines=True) == "a\nb"
    assert shown("a\nb") == "a⟨\\n⟩b"
    assert clean_output("col1    col2\n\tx 1\u202f234 🎉\n") == "col1    col2\n\tx 1\u202f234 🎉\n"
    assert reveal("printf ⟨ESC⟩") == ("printf ⟨⟨⟩ESC⟩", [])  # a marker cannot be faked


# -- the real ask command, against a stand-in daemon ----------------------------------


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="sa-", dir="/tmp"))
    run = base / "run"
    run.mkdir(mode=0o700)
    monkeypatch.setenv("SHELLAGENT_RUNTIME_DIR", str(run))
    yield run
    shutil.rmtree(base, ignore_errors=True)


def serve_hostile_events(path: Path, received: list[dict[str, Any]]) -> threading.Thread:
    """A daemon stand-in on ``path``: reads the task, answers with hostile events, then an
    approval request and, once answered, a summary."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.chmod(path, 0o600)
    listener.listen(1)

    def serve() -> None:
        conn, _ = listener.accept()
        reader = conn.makefile("rb")
        received.append(json.loads(reader.readline()))
        for event in ("accepted", "proposed", "output", "result", "invalid", "error"):
            conn.sendall(protocol.encode_event(hostile(event)))
        conn.sendall(protocol.encode_event(hostile("approval_request")))
        received.append(json.loads(reader.readline()))
        conn.sendall(protocol.encode_event(hostile("summary", reason="finished", exit_code=0)))
        reader.close()
        conn.close()
        listener.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def test_the_ask_command_prints_hostile_daemon_text_escaped(runtime: Path, tmp_path: Path) -> None:
    received: list[dict[str, Any]] = []
    server = serve_hostile_events(runtime / protocol.SOCKET_NAME, received)
    proc = subprocess.run(
        [sys.executable, "-m", "shellagent.cli.ask", "tidy up"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "TERM": "xterm-256color"},
    )
    server.join(10)
    assert received[0]["type"] == "ask" and received[1]["decision"] == "refuse"
    assert proc.returncode == 0, proc.stderr
    assert raw_hidden(proc.stdout) == [] and raw_hidden(proc.stderr) == []
    assert "⟨ESC⟩[1A⟨ESC⟩[2K⟨\\r⟩" in proc.stdout and "⟨U+202E⟩" in proc.stdout


def test_a_malformed_line_from_the_daemon_is_one_line_of_error(
    runtime: Path, tmp_path: Path
) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(runtime / protocol.SOCKET_NAME))
    listener.listen(1)

    def serve() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(b"\x1b[2Jnot json\n")
        conn.close()

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    proc = subprocess.run(
        [sys.executable, "-m", "shellagent.cli.ask", "-y", "t"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    server.join(10)
    listener.close()
    # a daemon that cannot be understood is an environment problem (the exit-code table)
    assert proc.returncode == 3 and proc.stderr.count("\n") == 1, proc.stderr
    assert "does not understand" in proc.stderr and raw_hidden(proc.stderr) == []


def test_logs_show_and_list_print_a_hostile_transcript_escaped(tmp_path: Path) -> None:
    from shellagent.transcript import Redactor, TranscriptWriter
    from tests.transcript.scripted import Turn, play

    work = tmp_path / "work"
    work.mkdir()
    writer = TranscriptWriter(redactor=Redactor())
    turns = [
        Turn(cmd="printf '\\033[2J\\033[31mred\\r\\n'", why=SPOOF),
        Turn(raw=SPOOF),
        Turn(done=SPOOF + "\nline two"),
    ]
    play(writer, "task " + SPOOF, turns, cwd=work)
    session = writer.session_id
    for args in (["logs", "show", session], ["logs", "list"]):
        proc = subprocess.run(
            [sys.executable, "-m", "shellagent", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        assert raw_hidden(proc.stdout) == [], args
    assert "⟨ESC⟩" in proc.stdout or "⟨U+202E⟩" in proc.stdout  # the task, in the table


def test_clean_output_marks_exactly_the_hidden_characters_kind_names() -> None:
    """clean_output finds characters with one regex; it must agree with ``kind`` on every
    code point (newlines, tabs, unusual spaces and unassigned ones are kept in output,
    except those a newer Unicode made format controls, which HIDDEN_RANGES lists)."""
    kept = (None, "newline", "tab", "space", "unassigned")
    future = {
        c for lo, hi in HIDDEN_RANGES for c in range(lo, hi + 1) if kind(chr(c)) == "unassigned"
    }
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF or code == 0x0D:  # \r\n handling aside
            continue
        ch = chr(code)
        marked = clean_output(ch) != ch
        assert marked == (kind(ch) not in kept or ch == "⟨" or code in future), f"U+{code:04X}"
    assert clean_output("a\rb\r\n") == "a⟨\\r⟩b\n"
