from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from shellagent import paths
from shellagent.events import ChatMessage, End, SessionStart
from shellagent.testing import MemorySink
from shellagent.transcript import (
    Redactor,
    TranscriptError,
    TranscriptSink,
    TranscriptWriter,
    new_session_id,
    read_transcript,
)


def test_transcript_file_is_0600_in_0700_directories() -> None:
    with TranscriptWriter() as writer:
        writer.write(SessionStart(session=writer.session_id, task="t"))
    assert writer.path.parent == paths.transcripts_dir()
    assert writer.path.stat().st_mode & 0o777 == 0o600
    assert paths.transcripts_dir().stat().st_mode & 0o777 == 0o700
    assert paths.data_dir().stat().st_mode & 0o777 == 0o700


def test_transcript_is_0600_even_under_a_permissive_umask() -> None:
    old = os.umask(0)
    try:
        with TranscriptWriter() as writer:
            writer.write(End(reason="finished"))
    finally:
        os.umask(old)
    assert writer.path.stat().st_mode & 0o777 == 0o600


def test_existing_directory_with_wide_mode_is_tightened() -> None:
    paths.transcripts_dir().mkdir(parents=True, mode=0o755)
    paths.transcripts_dir().chmod(0o755)
    TranscriptWriter().close()
    assert paths.transcripts_dir().stat().st_mode & 0o777 == 0o700


def test_writer_never_reuses_an_existing_file() -> None:
    first = TranscriptWriter(session_id="20260101T000000-abcdef")
    first.close()
    with pytest.raises(TranscriptError):
        TranscriptWriter(session_id="20260101T000000-abcdef")


def test_session_ids_sort_by_start_time() -> None:
    ids = [new_session_id(now) for now in (1_000_000_000, 1_700_000_000, 1_800_000_000)]
    assert ids == sorted(ids)
    assert re.fullmatch(r"\d{8}T\d{6}-[0-9a-f]{6}", ids[0])
    assert ids[0].startswith("20010909T014640")


def test_each_event_is_one_stamped_line_on_disk_as_soon_as_written() -> None:
    writer = TranscriptWriter()
    writer.write(SessionStart(session=writer.session_id, task="list"))
    writer.write(ChatMessage(role="user", content="list"))
    # Not closed: the lines must already be there.
    lines = writer.path.read_text().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [0, 1]
    assert all(json.loads(line)["v"] == 1 for line in lines)
    assert all(isinstance(json.loads(line)["ts"], float) for line in lines)
    writer.close()


def test_closed_writer_refuses_more_events() -> None:
    writer = TranscriptWriter()
    writer.close()
    with pytest.raises(TranscriptError):
        writer.write(End(reason="finished"))


def test_an_event_reads_back_as_the_event_written_stamped_with_its_time_and_place() -> None:
    event = ChatMessage(role="assistant", content='{"done": "ok"}', turn=3)
    with TranscriptWriter() as writer:
        writer.write(SessionStart(session=writer.session_id, task="t", source="ask"))
        writer.write(event)
    back = read_transcript(writer.path).events[1]
    assert back == dataclasses.replace(event, ts=back.ts, seq=1)
    assert back.ts is not None and back.ts > 1_700_000_000


def test_writer_and_memory_sink_satisfy_the_sink_protocol() -> None:
    sink = MemorySink()
    sink.write(ChatMessage(role="user", content="hi"))
    sink.close()
    assert isinstance(sink, TranscriptSink)
    with TranscriptWriter() as writer:
        assert isinstance(writer, TranscriptSink)
    assert sink.events[0].seq == 0 and sink.closed


def test_memory_sink_with_a_redactor_shows_what_the_disk_would_get() -> None:
    sink = MemorySink(redactor=Redactor())
    sink.write(ChatMessage(role="user", content="key glpat-abcdefghij0123456789"))
    assert sink.of_type(ChatMessage)[0].content == "key [REDACTED:gitlab_token]"


WRITER_SCRIPT = textwrap.dedent(
    """
    import sys
    from shellagent.events import ChatMessage, SessionStart
    from shellagent.transcript import TranscriptWriter
    w = TranscriptWriter()
    print(w.path, flush=True)
    w.write(SessionStart(session=w.session_id, task="forever"))
    n = 0
    while True:
        n += 1
        w.write(ChatMessage(role="user", content="x" * 5000 + str(n)))
        print(n, flush=True)
    """
)


def test_writer_killed_mid_session_leaves_every_complete_line_readable() -> None:
    with subprocess.Popen(
        [sys.executable, "-c", WRITER_SCRIPT], stdout=subprocess.PIPE, text=True, env=os.environ
    ) as proc:
        assert proc.stdout is not None
        path = Path(proc.stdout.readline().strip())
        acknowledged = 0
        while acknowledged < 50:
            acknowledged = int(proc.stdout.readline())
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL

    transcript = read_transcript(path)
    seqs = [e.seq for e in transcript.events]
    # Everything the writer acknowledged is there, in order, with nothing lost in between.
    assert seqs == list(range(len(seqs)))
    assert len(seqs) >= acknowledged + 1
    assert transcript.outcome == "incomplete" and transcript.success is None
    assert len(transcript.problems) <= 1  # at most the partial line the kill cut


def test_a_line_cut_by_a_crash_is_skipped_and_named() -> None:
    writer = TranscriptWriter()
    writer.write(SessionStart(session=writer.session_id, task="t"))
    writer.write(ChatMessage(role="user", content="t"))
    writer.close()
    data = writer.path.read_bytes()
    writer.path.write_bytes(data[: len(data) - 9])  # cut the last line mid-way
    transcript = read_transcript(writer.path)
    assert [e.kind for e in transcript.events] == ["session_start"]
    assert transcript.problems == [
        f"{writer.path}:2: skipped line: not valid JSON (JSONDecodeError), truncated or corrupt"
    ]


def test_writer_path_does_not_import_pydantic() -> None:
    # The daemon's loop writes on every step; validation is only for reading back.
    code = (
        "import sys, shellagent.transcript.store, shellagent.testing; "
        "print('pydantic' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
