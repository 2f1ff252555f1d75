"""The user's history teaches only what happened: a retrieved example's output belongs to
its command (an example rewritten to the task's paths shows none), a session whose summary
the session does not support is no example, and neither is a session the user undid."""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.agent.examples import OUTPUT_LEFT_OUT
from shellagent.agent.history import history_path
from shellagent.cli.main import main
from shellagent.transcript.export import export
from shellagent.transcript.reader import read_transcript
from tests.daemon.conftest import (
    DaemonProc,
    ask_inprocess,
    cmd,
    done,
    transcript_events,
    write_config,
)


def system_prompt(session: str) -> str:
    return str(next(e["content"] for e in transcript_events(session) if e.get("role") == "system"))


def exported(session: str) -> int:
    path = Path(os.environ["SHELLAGENT_DATA_DIR"]) / "transcripts" / f"{session}.jsonl"
    return export("sft", [read_transcript(path)], io.StringIO()).records


@pytest.fixture(autouse=True)
def confirm_on(no_confirm_question: Path) -> None:
    write_config("")


def test_a_rewritten_example_shows_no_output_and_an_undone_one_is_forgotten(
    daemon: DaemonProc,
    script: Callable[..., str],
    workdir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    downloads, documents = workdir / "Downloads", workdir / "Documents"
    downloads.mkdir()
    documents.mkdir()
    for name, size in (("movie-big.mkv", 9000), ("photo-mid.jpg", 5000)):
        (downloads / name).write_bytes(b"x" * size)
    first = ask_inprocess(
        f"find the five largest files in {downloads} and note it",
        script(
            cmd(f"ls -S {downloads} | head -5"),
            cmd(f"touch {downloads}/noted.txt"),
            done("The largest is movie-big.mkv"),
        ),
        workdir,
        keys=["y", "a", "y"],  # run the touch, apply, "did that do it?" yes
    )
    assert first.summary.verdict == "confirmed"
    assert "movie-big.mkv" in history_path().read_text()  # a worked example now

    again = ask_inprocess(
        f"find the five largest files in {documents} and note it",
        script(cmd(f"ls {documents}"), done("empty")),
        workdir,
        yes=True,
    )
    prompt = system_prompt(again.summary.session)
    assert f"ls -S {documents} | head -5" in prompt  # the example, on the task's own folder
    assert "movie-big.mkv" not in prompt and "photo-mid.jpg" not in prompt
    assert OUTPUT_LEFT_OUT in prompt

    assert exported(first.summary.session) == 1  # a confirmed session: training data
    assert main(["undo", first.summary.session]) == 0
    capsys.readouterr()
    assert exported(first.summary.session) == 0  # the user took it back: no longer
    after = ask_inprocess(
        f"find the five largest files in {downloads} and note it",
        script(cmd(f"ls {downloads}"), done("listed")),
        workdir,
        yes=True,
    )
    assert "noted.txt" not in system_prompt(after.summary.session)


def test_an_unsupported_summary_never_becomes_an_example(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    run = ask_inprocess(
        "count the files here",
        script(cmd("ls"), done("There are 7 files")),
        workdir,
        keys=["y"],  # the user says yes, but no output shows a 7
    )
    assert run.summary.unsupported == ("7 appears in no output",)
    assert not history_path().exists()
