"""One real run with the embedded model through a warm daemon."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellagent.events import Accepted, Thinking
from tests.daemon.conftest import ask_inprocess, start_daemon, stop


@pytest.mark.model
def test_the_embedded_model_proposes_through_a_warm_daemon(workdir: Path) -> None:
    d = start_daemon()
    try:
        run = ask_inprocess(
            "list the files here", "default", workdir, yes=True, dry_run=True, max_turns=2
        )
        summary = run.summary
        model_gave_up = summary.reason == "error" and "not actions" in summary.error
        assert summary.reason in ("finished", "turn_limit", "repeated_failure") or model_gave_up
        assert run.of(Thinking)
        assert run.of(Accepted)[0].model
    finally:
        stop(d)
