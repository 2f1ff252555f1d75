"""Everyday kinds of request a first trial answered wrongly: a sort of file said in words
("photos", "documents", "songs") is every extension of it in any case, a CSV column's
total takes its header in any case and decimals, a folder's size is one figure, a name
with spaces is a file, and an unquoted word to look for is offered to the pattern."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from shellagent.recipes.compose import COUNT, compose_pick, pick_named
from shellagent.recipes.fitness import category_of, sort_unsaid
from shellagent.recipes.lexicon import lexicon
from shellagent.recipes.rank import Ranker
from shellagent.recipes.reading import read_task
from shellagent.recipes.shortlist import shortlist
from shellagent.recipes.values import candidates_for, task_values

from .test_where_people_failed import CATALOG, USERS, Shelf, run

SORTS = {
    "pictures_under": "pictures",
    "documents_under": "documents",
    "videos_under": "videos",
    "audio_under": "audio",
    "move_images_to_folder": "pictures",
}


@pytest.mark.parametrize(("recipe", "sort"), SORTS.items())
def test_a_recipe_of_a_sort_of_file_names_exactly_the_lexicons_extensions(
    recipe: str, sort: str
) -> None:
    template = CATALOG.get(recipe).templates[0]
    named = re.findall(r"-iname '\*\.(\w+)'", template)
    assert sorted(named) == sorted(lexicon()[f"kinds.{sort}"].words)
    assert category_of(CATALOG.get(recipe)) == sort


def _files(home: Path, names: list[str]) -> None:
    for name in names:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("x\n")


@pytest.mark.parametrize("user", USERS)
def test_how_many_photos_counts_every_picture_format_in_any_case_below_the_folder(
    tmp_path: Path, user: str
) -> None:
    _files(tmp_path, ["a.jpg", "B.PNG", "trip/c.heic", "d.JPEG", "notes.txt", "clip.mp4"])
    _files(tmp_path, ["scan.pdf", "photos.zip"])
    counted = compose_pick(CATALOG.get("pictures_under"), COUNT, None)
    assert counted is not None
    command = counted.templates[0].replace("{dir}", ".")
    done = run_command(command, tmp_path, user)
    assert done == "4"


def run_command(command: str, cwd: Path, user: str) -> str:
    """``command`` as a recipe of its own, run like the shipped ones."""
    import subprocess

    from ..unprivileged import AS_NOBODY, give_to_nobody, make_traversable

    if user == "nobody":
        if os.getuid() != 0:
            pytest.skip("already unprivileged: the root runs cover this user")
        make_traversable(cwd)
        give_to_nobody(cwd)
    prefix = AS_NOBODY if user == "nobody" else []
    done = subprocess.run(
        [*prefix, "/bin/bash", "--norc", "-c", command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("user", USERS)
def test_the_latest_document_is_the_newest_of_any_document_format_not_a_newer_photo(
    tmp_path: Path, user: str
) -> None:
    _files(tmp_path, ["cv.pdf", "old/letter.DOCX", "notes.md", "holiday.jpg"])
    for name, days in (("cv.pdf", 30), ("old/letter.DOCX", 2), ("notes.md", 9), ("holiday.jpg", 0)):
        stamp = (tmp_path / name).stat().st_mtime - days * 86400
        os.utime(tmp_path / name, (stamp, stamp))
    newest = pick_named("newest")
    assert newest is not None
    picked = compose_pick(CATALOG.get("documents_under"), newest, None)
    assert picked is not None
    assert run_command(picked.templates[0].replace("{dir}", "."), tmp_path, user) == (
        "./old/letter.DOCX"
    )


@pytest.mark.parametrize("recipe", ["csv_sum_column", "csv_average_column"])
def test_a_csv_column_is_found_by_its_header_in_any_case_with_decimals(
    tmp_path: Path, recipe: str
) -> None:
    rows = [
        "date,Amount,qty",
        "2024-01-02,1234567.25,3",
        '2024-01-03,"$20.50",1',
        "2024-01-04,0.25,2",
    ]
    (tmp_path / "spent.csv").write_text("\r\n".join(rows) + "\r\n")
    done = run(recipe, {"file": "spent.csv", "field": "amount"}, tmp_path, "root")
    assert done.returncode == 0, done.stderr
    total = 1234567.25 + 20.50 + 0.25
    expected = "1234588" if recipe == "csv_sum_column" else f"{total / 3:.2f}"
    assert done.stdout.strip() == expected


@pytest.mark.parametrize(
    ("task", "sorts"),
    [
        ("how many photos are in ~/Pictures/trip?", ("pictures",)),
        ("what's my latest document in ~/Documents", ("documents",)),
        ("how many songs are in my Music folder", ("audio",)),
        ("how big is the Music folder", ()),
        ("how many documents are in my Documents", ("documents",)),
        ("how many .jpg photos are in ~/Pictures", ()),  # the extension said wins
    ],
)
def test_a_sort_of_file_is_read_from_its_words_not_from_a_folders_name(
    task: str, sorts: tuple[str, ...]
) -> None:
    assert read_task(task).categories == sorts


def test_a_quoted_name_with_spaces_is_a_file_and_a_quoted_phrase_is_not() -> None:
    assert "report final.docx" in read_task("rename 'report final.docx' to report-final.docx").files
    phrase = read_task("count the lines with 'error in main.py' in app.log")
    assert phrase.files == ("app.log",) and phrase.look_for == ("error in main.py",)


def test_an_unquoted_word_to_look_for_is_offered_before_the_files_name() -> None:
    reading = read_task("how many lines in app.log mention timeout")
    assert candidates_for("pattern", task_values(reading))[0] == "timeout"


@pytest.mark.parametrize(
    ("task", "recipe", "unsaid"),
    [
        ("how many PDFs are in my Documents?", "documents_under", True),  # one extension
        ("how big is the Music folder", "audio_under", True),  # a folder's name
        ("move the images (.jpg and .png) to ~/Pictures", "move_images_to_folder", False),
        ("how many pics are in ~/Pictures", "pictures_under", False),
        ("how many PDFs are in my Documents?", "files_under", False),  # of no sort
    ],
)
def test_a_recipe_of_a_sort_of_file_is_offered_only_when_the_task_says_the_sort(
    task: str, recipe: str, unsaid: bool
) -> None:
    assert sort_unsaid(CATALOG.get(recipe), read_task(task)) is unsaid


@pytest.fixture(scope="module")
def shelf() -> Shelf:
    recipes = dict(CATALOG.recipes)
    return Shelf(recipes, Ranker.train(list(recipes.values())))


ASKED = [
    ("how many photos are in ~/Pictures/trip?", "pictures_under_count"),
    ("Count the documents in /srv/share/papers", "documents_under_count"),
    ("how many videos do I have in ~/Videos", "videos_under_count"),
    ("show me the most recent photo in ~/Pictures", "pictures_under_newest"),
    ("what's my latest document in ~/Documents", "documents_under_newest"),
    ("which is the oldest pdf in /srv/docs", "list_by_extension_oldest"),
    ("how much space does ~/Music take", "dir_size"),
    ("how big is the Music folder", "dir_size"),
    ("how many PDFs are in my Documents?", "files_under_by_ext_count"),
    # a question about one extension: the selection that fits is narrowed to it
    ("which .pdf files under /srv/share are bigger than 2 MB?", "find_larger_than_by_ext"),
    ("list the .csv files in ~/data smaller than 10k", "find_smaller_than_by_ext"),
    ("Which .txt files in /srv/notes were changed in the last 3 days?", "recently_modified_by_ext"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("task", "right"), ASKED, ids=[t for t, _ in ASKED])
def test_an_everyday_kind_of_request_ranks_its_recipe_first(
    shelf: Shelf, task: str, right: str
) -> None:
    reading = read_task(task)
    found = shortlist(shelf, reading, lambda: task_values(reading))
    assert found is not None, "no recipe fits"
    assert found.usable[0].name == right, [c.name for c in found.usable[:3]]
    if right.endswith("_by_ext"):
        assert "-name '*." in found.recipes[right].templates[0]
