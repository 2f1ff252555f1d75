"""Slot types and the renderer: values are validated, then quoted for where they stand."""

from __future__ import annotations

import subprocess

import pytest

from shellagent.recipes import TYPES, Recipe, Slot, SlotError, render, sed_re, sed_repl
from shellagent.recipes.template import problems


def recipe(template: str, **types: str) -> Recipe:
    slots = {name: Slot(name, kind) for name, kind in types.items()}
    return Recipe("r", "s", "action", ("p",) * 5, (template,), slots)


def bash_words(command: str) -> list[str]:
    """What bash makes of ``command``'s words (the command is printf'd, never run)."""
    done = subprocess.run(
        ["/bin/bash", "--norc", "-c", f"printf '%s\\0' {command}"],
        capture_output=True,
        env={"HOME": "/home/u", "PATH": "/usr/bin:/bin"},
        cwd="/",
        timeout=10,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.decode().split("\0")[:-1]


@pytest.mark.parametrize(
    ("kind", "given", "stored"),
    [
        ("ext", ".log", "log"),
        ("ext", "*.PDF", "PDF"),
        ("signal", "sigterm", "TERM"),
        ("size", "10m", "10M"),
        ("size", "500k", "500k"),
        ("count", 7, "7"),
        ("count", "007", "7"),
        ("days", "0", "0"),
        ("mode", "u+x", "u+x"),
        ("mode", "0644", "0644"),
        ("schedule", "30 2 * * 1-5", "30 2 * * 1-5"),
        ("schedule", "@daily", "@daily"),
        ("time", "23:59", "23:59"),
        ("date", "2024-02-29", "2024-02-29"),
        ("branch", "feature/x-1", "feature/x-1"),
        ("archive", "~/b.tar.gz", "~/b.tar.gz"),
    ],
)
def test_a_type_accepts_and_normalizes(kind: str, given: object, stored: str) -> None:
    assert TYPES[kind].validate(given) == stored


@pytest.mark.parametrize(
    ("kind", "given"),
    [
        ("count", 0),
        ("count", "-1"),
        ("count", "3; id"),
        ("port", 70000),
        ("ext", "tar.gz"),
        ("name", "-rf"),
        ("glob", "-rf"),
        ("glob", "a/b"),
        ("mode", "4755"),
        ("mode", "u+s"),
        ("time", "24:00"),
        ("date", "2023-02-29"),
        ("branch", "a..b"),
        ("branch", "x;id"),
        ("archive", "backup.rar"),
        ("file", "a\nb"),
        ("pattern", "a\rb"),
        ("user", "Root"),
        ("signal", "SEGV"),
        ("count", True),
    ],
)
def test_a_type_refuses_with_a_clear_error(kind: str, given: object) -> None:
    with pytest.raises(SlotError, match=f"is not a {kind}"):
        TYPES[kind].validate(given)


def test_every_type_has_a_regex_its_values_match() -> None:
    import re

    samples = {"dir": "~/x", "count": "3", "ext": "log", "schedule": "@daily", "mode": "644"}
    for name, value in samples.items():
        assert re.fullmatch(TYPES[name].regex, value), name
    for kind in TYPES.values():
        re.compile(kind.regex)


@pytest.mark.parametrize(
    "value",
    ["; rm -rf ~", "$(touch /tmp/pwned)", "`id`", "-rf", "'", '"', "a b", "~user", "*", "\\"],
)
def test_a_path_is_one_literal_word_whatever_it_holds(value: str) -> None:
    command = render(recipe("ls -l {dir} x", dir="dir"), {"dir": value})
    expected = "./" + value if value.startswith("-") else value
    assert bash_words(command) == ["ls", "-l", expected, "x"]


def test_a_home_path_keeps_its_tilde_and_quotes_the_rest() -> None:
    r = recipe("ls {dir}", dir="dir")
    assert render(r, {"dir": "~/my dir"}) == "ls ~/'my dir'"
    assert bash_words(render(r, {"dir": "~/my dir"})) == ["ls", "/home/u/my dir"]
    assert bash_words(render(r, {"dir": "~"})) == ["ls", "/home/u"]


def test_a_path_glued_to_an_option_uses_home() -> None:
    r = recipe("tar --file={out} x", out="output")
    assert bash_words(render(r, {"out": "~/a b.tar"})) == ["tar", "--file=/home/u/a b.tar", "x"]


@pytest.mark.parametrize("value", ["; rm -rf ~", "$(id)", "`id`", "'", '"', "a b", "-rf"])
def test_free_text_stays_one_word(value: str) -> None:
    command = render(recipe("grep -c -e {p} f", p="pattern"), {"p": value})
    assert bash_words(command) == ["grep", "-c", "-e", value, "f"]


def test_inside_single_quotes_a_value_is_inserted_with_quotes_escaped() -> None:
    r = Recipe(
        "r",
        "s",
        "question",
        ("p",) * 5,
        ("find . -name '*.{ext}' -o -name '{g}'",),
        {"ext": Slot("ext", "ext"), "g": Slot("g", "glob")},
    )
    command = render(r, {"ext": "log", "g": "it's*"})
    assert bash_words(command) == ["find", ".", "-name", "*.log", "-o", "-name", "it's*"]


def test_sed_filters_make_any_text_literal_for_sed(tmp_path: object) -> None:
    old, new = "a/b.*[x]^$\\'", "&c/\\'d"
    r = recipe(
        "printf '%s\\n' {old} | sed 's/{old|sed_re}/{new|sed_repl}/g'", old="text", new="text"
    )
    done = subprocess.run(
        ["/bin/bash", "-c", render(r, {"old": old, "new": new})], capture_output=True, text=True
    )
    assert done.stdout == new + "\n"
    assert sed_re("a.b") == "a\\.b" and sed_repl("&") == "\\&"


@pytest.mark.parametrize(
    ("template", "types", "why"),
    [
        ('echo "{t}"', {"t": "text"}, "inside double quotes"),
        ('echo "$(ls {d})"', {"d": "dir"}, "inside double quotes"),
        ("echo $'{t}'", {"t": "text"}, "inside double quotes or $'...'"),
        ("awk '/{p}/' f", {"p": "pattern"}, "inside single quotes"),
        ("cat '{f}'", {"f": "file"}, "inside single quotes"),
        ("grep -c {p} f", {"p": "pattern"}, "put -e or -- before a pattern"),
        ("echo 'x", {}, "never closed"),
        ("sed 's/{p|upper}/x/' f", {"p": "pattern"}, "unknown filter"),
    ],
)
def test_the_loader_refuses_a_placeholder_it_cannot_make_safe(
    template: str, types: dict[str, str], why: str
) -> None:
    found = list(problems(template, types))
    assert found and why in found[0]


@pytest.mark.parametrize(
    ("template", "types"),
    [
        ("awk '{print ${c}}' {f}", {"c": "column", "f": "file"}),
        ("find {d} -exec ls {} +", {"d": "dir"}),
        ("echo {a,b}; grep -e {p} f", {"p": "pattern"}),
        ('echo "$(date)" {t}', {"t": "text"}),
        ("awk -v p={p} '$0 ~ p' {f}", {"p": "pattern", "f": "file"}),
    ],
)
def test_literal_braces_and_safe_placeholders_are_accepted(
    template: str, types: dict[str, str]
) -> None:
    assert list(problems(template, types)) == []


def test_a_missing_required_slot_and_an_unknown_one_are_errors() -> None:
    r = recipe("ls {d}", d="dir")
    with pytest.raises(SlotError, match="needs a value for slot d"):
        render(r, {})
    with pytest.raises(SlotError, match="has no slot 'x'"):
        render(r, {"d": ".", "x": 1})
