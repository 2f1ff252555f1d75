"""Any model gets the recipes in ``ask``, as in ``eval``: whether the recipe step runs is
the ``ask.recipes`` setting, not the model's name."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.recipes import DATA_DIR, load
from shellagent.recipes.rank import Ranker
from tests.daemon.conftest import DaemonProc, ask_inprocess, done, transcript_events, write_config

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped recipes' ranker, trained once (what `shellagent recipes index` does)."""
    cache = tmp_path_factory.mktemp("ranker")
    Ranker.build(list(load([DATA_DIR]).recipes.values()), cache)
    return cache


def _origins(session: str) -> list[str]:
    return [
        (e.get("action") or {}).get("origin", "")
        for e in transcript_events(session)
        if e["type"] == "model_turn"
    ]


@pytest.mark.parametrize("setting", ["auto", "off"])
def test_a_served_model_gets_the_recipes_unless_they_are_off(
    setting: str,
    trained: Path,
    daemon: DaemonProc,
    script: Callable[..., str],
    workdir: Path,
) -> None:
    shutil.copytree(trained, os.environ["SHELLAGENT_CACHE_DIR"], dirs_exist_ok=True)
    write_config(f'[ask]\nconfirm = false\nrecipes = "{setting}"\n')
    (workdir / "notes.txt").write_text("one\ntwo\nthree\n")
    reply = json.dumps({"use": "line_count", "args": {"file": "notes.txt"}})
    run = ask_inprocess("count the lines of notes.txt", script(reply, done("3")), workdir)
    origins = _origins(run.summary.session)
    if setting == "auto":
        assert origins[0] == "recipe"
        assert run.summary.summary.strip().startswith("3")
    else:
        assert "recipe" not in origins  # the model's own commands only
