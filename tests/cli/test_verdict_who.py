"""The last line says who wrote what it quotes: a recipe's line is no word of the model's."""

from __future__ import annotations

import pytest

from shellagent.cli.ask_ui import AskUI
from shellagent.events import Summary


def summary(origin: str, verdict: str) -> Summary:
    return Summary(
        reason="finished",
        summary="Done with the recipe archive_create: tar -czf x.tar.gz docs",
        turns=1,
        session="20261129T000000-abcdef",
        commands=("tar -czf x.tar.gz docs",),
        exit_codes=(0,),
        error="",
        exit_code=1,
        transcript="/tmp/t.jsonl",
        verdict=verdict,
        origin=origin,
    )


@pytest.mark.parametrize("verdict", ["kept", "discarded", "failed"])
def test_a_recipes_line_is_quoted_as_the_recipes_and_the_models_as_the_models(
    verdict: str,
) -> None:
    ui = AskUI()
    by_recipe = ui.verdict_line(summary("recipe archive_create", verdict))
    assert "(the recipe's line: Done with the recipe archive_create" in by_recipe
    assert "the model said" not in by_recipe
    by_model = ui.verdict_line(summary("free", verdict))
    assert "(the model said: Done with the recipe" in by_model
