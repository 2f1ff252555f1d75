"""The lexicon: every entry's examples, its file format, and one vocabulary in one place."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shellagent.errors import ConfigError
from shellagent.recipes.lexicon import LEXICON_DIR, lexicon, load_lexicon

PACKAGE = Path(__file__).parents[2] / "shellagent"


def test_every_entry_matches_its_examples_and_none_of_its_counter_examples() -> None:
    problems = lexicon().problems()
    assert problems == [], "\n".join(problems)


def test_every_entry_says_what_it_means_and_has_an_example() -> None:
    for entry in lexicon().entries.values():
        assert entry.about and entry.match, entry.name


def test_a_wrong_example_is_reported_with_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "acts.toml"
    path.write_text(
        "[[entry]]\n"
        'name = "delete"\n'
        'about = "remove files"\n'
        'words = ["delete", "remove"]\n'
        'match = ["erase the logs"]\n'
        'not_match = ["remove the logs"]\n'
    )
    problems = load_lexicon([path]).problems()
    assert problems == [
        f"{path}:1: acts.delete: does not match 'erase the logs'",
        f"{path}:1: acts.delete: matches 'remove the logs' (at 'remove')",
    ]


def test_a_value_an_example_says_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "kinds.toml"
    path.write_text(
        "[[entry]]\n"
        'name = "words"\n'
        'about = "kinds of file"\n'
        'values = { pdfs = "pdf", photos = "jpg" }\n'
        'match = ["the PDFs => pdf", "my photos => png"]\n'
    )
    assert load_lexicon([path]).problems() == [
        f"{path}:1: kinds.words: 'my photos' means 'jpg', not 'png'"
    ]


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ('name = "x"\nabout = "x"\nmatch = ["x"]\n', "give words, a pattern or values"),
        ('name = "x"\nabout = "x"\nwords = ["x"]\nmatch = ["x"]\ncolour = 1\n', "colour"),
        ('name = "x"\nabout = "x"\npattern = "(x"\nmatch = ["x"]\n', "does not compile"),
        ('name = "x"\nabout = "x"\npattern = "{a.b}"\nmatch = ["x"]\n', "names no entry"),
    ],
)
def test_a_malformed_entry_is_an_error_naming_its_file(
    tmp_path: Path, body: str, says: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[[entry]]\n" + body)
    with pytest.raises(ConfigError) as caught:
        load_lexicon([path])
    assert says in caught.value.message
    assert caught.value.path == str(path)


def test_a_pattern_names_another_entrys_words() -> None:
    counted = lexicon()["superlatives.counted"]
    assert counted.says("the five largest files")  # "five" from quantities.numbers
    assert counted.says("the top 12 files")
    assert not counted.says("which one is the largest")


# Words of the recipe step's vocabularies that only the lexicon may hold: a second list
# of them in the code is a second place to forget a word.
SAID_ONCE = [r"get\\?s\+rid", r"get rid of", r"\berase\b", r"\bpurge\b", r"\brelocate\b"]


def test_the_vocabularies_are_said_once_in_the_lexicon() -> None:
    sources = [PACKAGE / "agent" / "recipe_step.py", *sorted((PACKAGE / "recipes").glob("*.py"))]
    found = [
        f"{path.relative_to(PACKAGE)}: {word}"
        for path in sources
        for word in SAID_ONCE
        if re.search(word, path.read_text())
    ]
    assert found == []
    data = "".join(p.read_text() for p in LEXICON_DIR.glob("*.toml"))
    assert all(re.search(word, data) for word in (r"get rid of", r"\berase\b", r"\bpurge\b"))
