"""Review 3's recipe findings: free text that becomes a jq or bc program (L3) keeps to a
fixed grammar, and ``git_switch_branch`` can never take a file name for a branch (L9)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from shellagent.recipes import DATA_DIR, TYPES, SlotError, load, render

CATALOG = load([DATA_DIR])


@pytest.mark.parametrize(
    "value",
    [
        ".",
        ".items[].name",
        ".items[] | select(.n > 2) | .name",
        'select(.city == "Berlin") | .name',
        ".a.b[0].c?",
        '.["a key"]',
        ".[-1]",
        "keys",
        ".[] | length",
        "map(.name)",
        "to_entries",
    ],
)
def test_a_jq_filter_of_paths_pipes_and_simple_selects_is_accepted(value: str) -> None:
    assert TYPES["jq_filter"].validate(value) == value


@pytest.mark.parametrize(
    "value",
    [
        "$ENV",
        "env",
        "$ENV.HOME",
        "input",
        "inputs",
        "[range(1e9)]",
        "range(10)",
        "..",
        "recurse",
        "until(false; .)",
        "def f: f; f",
        'import "x" as y; .',
        '"\\(.a)"',
        "@sh",
        ".a as $x | $x",
        "input_filename",
        "$__loc__",
        'getpath(["a"])',
        ".a + .b",
    ],
)
def test_a_jq_program_beyond_that_grammar_is_refused(value: str) -> None:
    with pytest.raises(SlotError, match="is not a jq_filter"):
        TYPES["jq_filter"].validate(value)


@pytest.mark.parametrize("value", ["(1200+34)*2/4", "1024*3.5", "2^10", "2 ^ 10", "-5 + 3 % 2"])
def test_arithmetic_is_accepted(value: str) -> None:
    assert TYPES["arithmetic"].validate(value) == value


@pytest.mark.parametrize(
    "value",
    ["while(1){}", "read()", "scale=5", "a", "9^9^9", "(2)^10", "2^1000", "2^(3)", "1;2", ""],
)
def test_bc_input_beyond_arithmetic_is_refused(value: str) -> None:
    with pytest.raises(SlotError, match="is not a arithmetic"):
        TYPES["arithmetic"].validate(value)


def test_jq_query_renders_a_safe_filter_and_refuses_a_program(tmp_path: Path) -> None:
    recipe = CATALOG.recipes["jq_query"]
    data = tmp_path / "data.json"
    data.write_text(json.dumps({"items": [{"name": "a", "n": 1}, {"name": "b", "n": 5}]}))
    command = render(recipe, {"file": str(data), "query": ".items[] | select(.n > 2) | .name"})
    done = subprocess.run(["/bin/bash", "-c", command], capture_output=True, text=True)
    assert done.stdout == "b\n"
    for program in ("$ENV", "[range(1e9)]", "input", "env | .HOME"):
        with pytest.raises(SlotError, match="jq_filter"):
            render(recipe, {"file": str(data), "query": program})


def test_calculate_renders_arithmetic_and_refuses_a_program() -> None:
    recipe = CATALOG.recipes["calculate"]
    done = subprocess.run(
        ["/bin/bash", "-c", render(recipe, {"text": "2^10 + (7+5)/4"})],
        capture_output=True,
        text=True,
    )
    assert done.stdout.strip() == "1027.00000000000000000000"
    for program in ("while(1){}", "9^9^9", 'print "x"'):
        with pytest.raises(SlotError, match="arithmetic"):
            render(recipe, {"text": program})


def _repo(root: Path) -> Path:
    repo = root / "r"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "notes.txt").write_text("committed\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@x"]
    subprocess.run([*git, "add", "notes.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    subprocess.run([*git, "branch", "develop"], check=True)
    (repo / "notes.txt").write_text("my unsaved work\n")
    return repo


def test_git_switch_branch_never_takes_a_file_for_a_branch(tmp_path: Path) -> None:
    recipe = CATALOG.recipes["git_switch_branch"]
    repo = _repo(tmp_path)
    for template in range(len(recipe.templates)):
        command = render(recipe, {"repo": str(repo), "branch": "notes.txt"}, template)
        done = subprocess.run(["/bin/bash", "-c", command], capture_output=True, text=True)
        assert done.returncode != 0, command
        assert (repo / "notes.txt").read_text() == "my unsaved work\n", command


@pytest.mark.parametrize("template", [0, 1])
def test_git_switch_branch_still_switches_to_a_branch(tmp_path: Path, template: int) -> None:
    recipe = CATALOG.recipes["git_switch_branch"]
    repo = _repo(tmp_path)
    command = render(recipe, {"repo": str(repo), "branch": "develop"}, template)
    subprocess.run(["/bin/bash", "-c", command], check=True, capture_output=True)
    current = subprocess.run(
        ["git", "-C", str(repo), "branch", "--show-current"], capture_output=True, text=True
    )
    assert current.stdout == "develop\n"
    assert (repo / "notes.txt").read_text() == "my unsaved work\n"
