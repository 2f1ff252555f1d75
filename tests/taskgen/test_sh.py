"""The pieces checks are made of: they accept right answers in any wording, refuse wrong ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellagent.taskgen.sh import (
    all_of,
    any_token,
    has,
    lacks,
    no_token,
    number,
    path,
    reported,
    size_near,
    token,
)

from .conftest import answer_passes


def test_paths_are_quoted_but_a_leading_tilde_still_expands() -> None:
    assert path("~/My Files/a b") == "~/'My Files/a b'"
    assert path("/srv/x; rm -rf /") == "'/srv/x; rm -rf /'"
    assert path("~") == "~" and path("~/") == "~/"


@pytest.mark.parametrize(
    ("answer", "ok"),
    [
        ("There are 12 files.", True),
        ("12", True),
        ("(12)", True),
        ("It's 12. Done.", True),
        ("13 files in /var/log/app12/x.log", False),
        ("120", False),
        ("twelve", False),
        ("", False),
    ],
)
def test_a_number_must_stand_as_a_whole_token(answer: str, ok: bool) -> None:
    assert answer_passes(number(12), answer) is ok


@pytest.mark.parametrize(
    ("answer", "ok"),
    [
        ("4.3M\t/srv/x", True),
        ("4.3 MB", True),
        ("about 4.5MB.", True),
        ("4400K", True),
        ("4.29 MiB", True),
        ("4500000 bytes", True),
        ("8.6M", False),
        ("2.1M", False),
        ("4.3", False),
        ("45000000 bytes", False),
        ("1.5 G", False),
    ],
)
def test_a_size_is_accepted_in_any_unit_within_the_tolerance(answer: str, ok: bool) -> None:
    assert answer_passes(size_near(4_500_000), answer) is ok


def test_an_address_token_is_not_matched_inside_a_longer_one() -> None:
    assert answer_passes(token("10.0.3.7"), "busiest: 9 10.0.3.7")
    assert not answer_passes(token("10.0.3.7"), "busiest: 10.0.3.71")
    assert answer_passes(any_token(("640", "0640")), "mode 0640.")
    assert not answer_passes(no_token("644"), "it was 644")


def test_names_must_be_there_and_decoys_absent() -> None:
    check = all_of(has("movie.mkv", "song (1).mp3"), lacks("notes.txt"))
    assert answer_passes(check, "movie.mkv and song (1).mp3")
    assert not answer_passes(check, "movie.mkv, song (1).mp3 and notes.txt")
    assert not answer_passes(check, "movie.mkv")


def test_a_reported_value_may_be_in_the_answer_or_in_the_last_output() -> None:
    check = reported(["ERROR disk full"], ["ERROR old one"])
    assert answer_passes(check, "", "10:00 ERROR disk full\n")
    assert answer_passes(check, "the last error: ERROR disk full", "")
    assert not answer_passes(check, "", "ERROR old one\nERROR disk full\n")
    assert not answer_passes(check, "ERROR old one", "")


def test_answer_text_is_data_never_code(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    evil = f"12 $(touch {marker}) `touch {marker}` '; touch {marker}; '"
    assert answer_passes(number(12), evil)
    assert not marker.exists()
    assert not answer_passes(has("x'; exit 0; '"), "nothing here")
