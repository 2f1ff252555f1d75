"""A figure for each file when the request says each, an age limit for files called old, and
a refusal's reason read with the request only when it says something (the words of a bare
no rank nothing)."""

from __future__ import annotations

import pytest

from shellagent.recipes import DATA_DIR, load
from shellagent.recipes.rank import Ranker
from shellagent.recipes.reading import read_task
from shellagent.recipes.shortlist import ranked_with_reason, shortlist
from shellagent.recipes.values import task_values

from .test_where_people_failed import Shelf

CATALOG = load([DATA_DIR])


@pytest.fixture(scope="module")
def shelf() -> Shelf:
    recipes = dict(CATALOG.recipes)
    return Shelf(recipes, Ranker.train(list(recipes.values())))


def _first(shelf: Shelf, task: str) -> str:
    reading = read_task(task)
    found = shortlist(shelf, reading, lambda: task_values(reading))
    assert found is not None, "no recipe fits"
    return found.usable[0].name


@pytest.mark.slow
def test_a_count_of_each_file_is_not_answered_with_one_total(shelf: Shelf) -> None:
    # the total's words are nearer ("count", "lines", ".conf"); "every" asks one each
    assert _first(shelf, "count lines of every .conf file in /etc/app") != "count_code_lines"
    assert _first(shelf, "how many lines has each .py file here") == "code_lines_per_file"


@pytest.mark.slow
def test_a_total_asked_is_still_one_total(shelf: Shelf) -> None:
    assert _first(shelf, "add up the lines of all the .py files in /src") == "count_code_lines"


@pytest.mark.slow
@pytest.mark.parametrize("reason", ["that is not what I asked", "no", "wrong, try again"])
def test_a_reason_that_says_only_no_ranks_nothing(shelf: Shelf, reason: str) -> None:
    reading = read_task("notes.txt how big")
    values = task_values(reading)
    assert ranked_with_reason(shelf.ranker, shelf.recipes, values, reason) == []


@pytest.mark.slow
def test_a_reason_that_says_what_was_meant_ranks_with_the_request(shelf: Shelf) -> None:
    reading = read_task("what about notes.txt")
    values = task_values(reading)
    ranked = ranked_with_reason(
        shelf.ranker, shelf.recipes, values, "I asked how many lines it has"
    )
    assert "line_count" in [c.name for c in ranked[:3]], [c.name for c in ranked[:5]]


@pytest.mark.slow
@pytest.mark.parametrize(
    "task", ["are there outdated files in ~/tmp", "remove old files from /srv/share"]
)
def test_files_called_old_with_no_age_get_an_age_limit_in_days(shelf: Shelf, task: str) -> None:
    """Neither every file of the folder nor what is older than an hour (minutes' default)."""
    first = shelf.recipes[_first(shelf, task)]
    assert "days" in {slot.type for slot in first.slots.values()}, first.name
