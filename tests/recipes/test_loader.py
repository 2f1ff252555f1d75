"""Reading recipe files: a malformed file or recipe is a one-line problem, never a stop."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellagent.recipes import load, user_dir

GOOD = """
[[recipe]]
name = "{name}"
summary = "count the lines of a file"
kind = "question"
phrasings = ["how many lines in {{file}}", "b", "c", "d", "e"]
templates = ["wc -l < {{file}}"]

[recipe.slots]
file = {{ type = "file" }}

[[recipe.tests]]
setup = ["printf 'a\\\\nb\\\\n' > /srv/f"]
args = {{ file = "/srv/f" }}
check = "grep -qx 2 \\"$LAST_OUTPUT\\""
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def good(name: str) -> str:
    return GOOD.format(name=name)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('area = "x"\n[[recipe]\n', "is not valid TOML"),
        ('area = "x"\ncolour = 1\n', "colour: unknown field"),
        (
            'area = "x"\n' + good("bad").replace('kind = "question"', 'kind = "query"'),
            "recipe 'bad': kind: Input should be 'question' or 'action'",
        ),
        (
            'area = "x"\n' + good("bad").replace('type = "file"', 'type = "folder"'),
            "recipe 'bad': slots.file: unknown slot type 'folder'",
        ),
        (
            'area = "x"\n' + good("bad").replace('"b", "c"', '"b {dir}", "c"'),
            "recipe 'bad': phrasings.1: {dir} is not a declared slot",
        ),
        (
            'area = "x"\n' + good("bad").replace("wc -l < {file}", 'wc -l < \\"{file}\\"'),
            "recipe 'bad': templates.0: {file} is inside double quotes",
        ),
        (
            'area = "x"\n' + good("bad").replace('file = "/srv/f"', "file = 3"),
            "recipe 'bad': tests.0.args: slot file: 3 is not a file",
        ),
        (
            'area = "x"\n' + good("bad").replace("summary", "sumary"),
            "recipe 'bad': sumary: unknown field",
        ),
        (
            'area = "x"\n'
            + good("bad").replace(
                'file = { type = "file" }', 'file = { type = "count", default = 0 }'
            ),
            "recipe 'bad': slots.file: slot file: 0 is not a count: must be 1",
        ),
        (
            'area = "x"\n'
            + good("bad").replace(
                "[recipe.slots]", 'family_args = { dirr = "{dir}" }\n[recipe.slots]'
            ),
            "recipe 'bad': family_args: family_args needs a family",
        ),
        (
            'area = "x"\n'
            + good("bad").replace(
                'file = { type = "file" }', 'file = { type = "file", numbers = true }'
            ),
            "recipe 'bad': slots.file: slot file: numbers = true is for a slot of type 'key'",
        ),
    ],
)
def test_a_malformed_file_gives_one_line_naming_file_recipe_and_field(
    tmp_path: Path, text: str, expected: str
) -> None:
    folder = tmp_path / "recipes"
    bad = write(folder, "a.toml", text)
    write(folder, "b.toml", 'area = "y"\n' + good("fine"))
    catalog = load([folder])
    assert list(catalog.recipes) == ["fine"]
    assert len(catalog.problems) == 1
    problem = catalog.problems[0]
    assert "\n" not in problem
    assert problem.startswith(str(bad))
    assert expected in problem


def test_the_line_of_the_bad_field_is_named(tmp_path: Path) -> None:
    text = 'area = "x"\n' + good("one") + good("two").replace('kind = "question"', "kind = 1")
    path = write(tmp_path, "a.toml", text)
    catalog = load([tmp_path])
    assert list(catalog.recipes) == ["one"]
    line = text.splitlines().index("kind = 1") + 1
    assert catalog.problems[0].startswith(f"{path}:{line}: recipe 'two': kind:")


def test_a_name_used_twice_keeps_the_first_and_says_so(tmp_path: Path) -> None:
    first = write(tmp_path / "a", "x.toml", 'area = "x"\n' + good("same"))
    write(tmp_path / "b", "x.toml", 'area = "y"\n' + good("same"))
    catalog = load([tmp_path / "a", tmp_path / "b"])
    assert catalog.recipes["same"].source == str(first)
    assert "already used by" in catalog.problems[0]


def test_user_recipes_load_after_the_shipped_ones() -> None:
    write(user_dir(), "mine.toml", 'area = "mine"\n' + good("my_line_count"))
    catalog = load()
    assert catalog.recipes["my_line_count"].area == "mine"
    assert "largest_files" in catalog.recipes


def test_an_unreadable_file_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_bytes(b'area = "\xff"\n')
    catalog = load([tmp_path])
    assert catalog.problems == (f"{path}: recipe file is not UTF-8 text",)
