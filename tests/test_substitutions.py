"""The lexer that finds where bash would run code while expanding a line: what it reports,
what it leaves as literal, and, against bash itself, that it never misses one bash runs."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shellagent.substitutions import ARITHMETIC, COMMAND, FUNSUB, MAX_DEPTH, scan, unlisted

BASH = "/bin/bash"


def starts(line: str) -> list[tuple[int, str]]:
    return [(t[0], t[2]) for t in scan(line.encode()).tokens]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # review 3, H1: tree-sitter leaves these as plain text
        ("echo ${HOME#$(id)}", [(12, COMMAND)]),
        ("ls ${PWD%`id`}", [(9, COMMAND)]),
        ("cat ${HOME%%/$(id)}/notes.txt", [(13, COMMAND)]),
        ("echo ${PATH##`id`}", [(13, COMMAND)]),
        ("du -sh ${HOME/$(id)/}", [(14, COMMAND)]),
        ("echo ${x^^$(id)}", [(10, COMMAND)]),
        ("echo ${x:-`touch P`}", [(10, COMMAND)]),
        ('echo "${x:-`touch P`}"', [(11, COMMAND)]),
        ("cat <<EOF\n`id`\nEOF", [(10, COMMAND)]),
        ("wc -c <<-END\n\t$(id)\nEND", [(14, COMMAND)]),
        # single quotes do not protect inside arithmetic or "${v:-…}"
        ("echo $(( '$(id)' ))", [(5, ARITHMETIC), (10, COMMAND)]),
        ("echo ${s:'$(id)'}", [(10, COMMAND)]),
        ("echo \"${v:-'$(id)'}\"", [(12, COMMAND)]),
        ("a=(['$(id)']=1)", [(5, COMMAND)]),
        # a pattern runs a process substitution even inside double quotes
        ('echo "${v/<(id)/}"', [(10, COMMAND)]),
        # a backslash-newline between $ and ( is removed first
        ("echo $\\\n(id)", [(5, COMMAND)]),
        # >& expands its word twice: quotes and backslashes do not protect
        ("echo x >&'$(id)'", [(10, COMMAND)]),
        ("echo x >&\\$\\(id\\)", [(10, COMMAND)]),
        # bash 5.3 runs ${ cmd; }
        ("echo ${ id; }", [(5, FUNSUB)]),
        ("echo $[1 + 2]", [(5, ARITHMETIC)]),
        ("echo $((id) )", [(5, COMMAND)]),
    ],
)
def test_text_bash_expands_is_found(line: str, expected: list[tuple[int, str]]) -> None:
    assert starts(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "echo '$(id)' '`id`' '<(id)'",
        "echo $'$(id)' \\$(id) \\`id\\`",
        "ls # $(id) `id`",
        "cat <<'EOF'\n$(id) `id`\nEOF",
        'cat <<"EOF"\n$(id)\nEOF',
        "cat <<\\EOF\n$(id)\nEOF",
        'echo "<(id) >(id)"',
        "echo x 2>&'$(id)'",
        "cat <<EOF\n<(id)\nEOF",
        "grep -E 'a[$(]' f",
    ],
)
def test_literal_text_is_not_reported(line: str) -> None:
    found = scan(line.encode())
    assert found.tokens == [] and found.unsure == ""


def test_a_quoted_heredoc_keeps_its_backslash_newlines_so_its_end_is_found() -> None:
    # joining "x\" with the delimiter line (as a blind join would) hides the $( ) after it
    line = "cat <<'E'\nx\\\nE\necho $(id)"
    assert starts(line) == [(line.index("$(id)"), COMMAND)]


def test_an_unquoted_heredoc_joins_before_it_compares_the_delimiter() -> None:
    line = "cat <<E\nx\\\nE\n$(id)\nE\n"
    assert starts(line) == [(line.index("$(id)"), COMMAND)]
    assert scan(line.encode()).joins == [line.index("\\")]


def test_an_unclosed_substitution_makes_the_reading_unsure() -> None:
    assert scan(b"echo $(id").unsure
    assert scan(b'echo "${x}').unsure
    assert scan(b"echo ${x").unsure


def test_nesting_deeper_than_the_limit_is_unsure_not_a_crash() -> None:
    deep = "$(" * (MAX_DEPTH + 5) + "id" + ")" * (MAX_DEPTH + 5)
    assert scan(deep.encode()).unsure
    backticks = "echo " + "$(`" * (MAX_DEPTH + 5)
    assert scan(backticks.encode()).unsure


def test_unlisted_names_what_a_policy_did_not_judge() -> None:
    line = b"echo $(date) ${HOME#$(id)}"
    assert unlisted(line, {(5, COMMAND)}) == [(20, 25, COMMAND)]
    assert unlisted(line, {(5, COMMAND), (20, COMMAND)}) == []
    assert unlisted(line, {(5, ARITHMETIC), (20, COMMAND)}) == [(5, 12, COMMAND)]
    unclosed = unlisted(b"echo $(id", set())
    assert unclosed == [(5, 9, COMMAND), (-1, -1, "a $( ) or <( ) is not closed")]


def test_the_corpora_read_without_doubt() -> None:
    here = Path(__file__).parent / "policy"
    for name in ("everyday.txt", "adversarial.txt"):
        for line in (here / name).read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                assert scan(line.removeprefix("deny:").encode()).unsure == "", line


# -- against bash ----------------------------------------------------------------------------

# Text around the substitutions: words, operators, quotes, escapes, heredoc operators …
FILLER = [
    *["echo ", "x", "=", "#", "\\", "$", "\\\n", ";", "|", "\n", " ", "case ", " in ", "esac"],
    *[";;", "E\n", '\\"', "\\`", "\\$", " #", "$x", "${x}", "$$", "$#", "a=1 ", "<<<x", "2>&1"],
    *["&&", "x[1]", "[a]", ">&", "1>&", ">&'", "2>&", "&>"],
]
ROUGH = ["a)", "@(", "'", '"', "(", ")", "`", "$'", "[", "]", "{", "}", "a["]
WRAPS = {
    "$(": ("$(", ")"),
    "`": ("`", "`"),
    "<(": ("<(", ")"),
    ">(": (">(", ")"),
    "'": ("'", "'"),
    '"': ('"', '"'),
    "${x:-": ("${x:-", "}"),
    "${x#": ("${x#", "}"),
    "${x/": ("${x/", "}"),
    "${x:": ("${x:", "}"),
    "$((": ("$((", "))"),
    "$[": ("$[", "]"),
    "((": ("((", "))"),
    "heredoc": ("cat <<E\n", "\nE\n"),
    "quoted heredoc": ("cat <<'E'\n", "\nE\n"),
    "tab heredoc": ("cat <<-E\n\t", "\n\tE\n"),
    "case": ("case x in a) ", ";; esac"),
    "subshell": ("( ", " )"),
    "array": ("a=([", "]=1)"),
    "array words": ("a=(", ")"),
    "subscript": ("${a[", "]}"),
    "[[": ("[[ x == ", " ]]"),
    "case pattern": ("case x in ", ") ;; esac"),
    "extglob": ("echo @(", ")"),
    "function": ("f() { ", "\n}; f"),
    "for arith": ("for ((i=0; ", "; )); do break; done"),
    "here-string": ("cat <<< ", "\n"),
    "assignment": ("x=", "\n"),
    "redirect": ("echo >", "\n"),
    "brace": ("echo {a,", "}"),
}
MARKED = ("$(", "`", "<(", ">(")


@dataclass
class Line:
    """Generated text; each $( ), backtick and <( ) opens with a marker ``m N``."""

    pieces: list[str] = field(default_factory=list)
    openers: dict[str, int] = field(default_factory=dict)

    def add(self, piece: str, marked: bool = False) -> None:
        if marked:
            number = str(len(self.openers) + 1)
            self.openers[number] = len(self.text)
            piece += f"m {number} "
        self.pieces.append(piece)

    @property
    def text(self) -> str:
        return "".join(self.pieces)


def _tree() -> st.SearchStrategy[object]:
    leaf = st.one_of(st.sampled_from(FILLER), st.sampled_from(ROUGH).map(lambda r: ("rough", r)))
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.tuples(st.sampled_from(sorted(WRAPS)), st.lists(inner, max_size=4)),
            st.lists(inner, min_size=1, max_size=4),
        ),
        max_leaves=14,
    )


def _build(node: object, line: Line) -> None:
    if isinstance(node, str):
        line.add(node)
    elif isinstance(node, tuple) and node[0] == "rough":
        line.add(node[1])
    elif isinstance(node, tuple):
        kind, children = node
        opener, closer = WRAPS[kind]
        line.add(opener, marked=kind in MARKED)
        for child in children:
            _build(child, line)
        line.add(closer)
    else:
        for child in node:  # type: ignore[attr-defined]
            _build(child, line)


def _markers_run(text: str, tmp: Path) -> set[str]:
    """The markers bash runs inside a substitution, subshell or pipeline stage (a marker
    run as a plain command, because an empty expansion left ``m`` first, does not count)."""
    log = tmp / "log"
    log.unlink(missing_ok=True)
    preamble = f'm(){{ [ "$BASH_SUBSHELL" -gt 0 ] && printf "%s\\n" "$1" >> {log}; }}; x=; a=\n'
    subprocess.run(
        ["/usr/bin/timeout", "5", BASH, "--norc", "--noprofile", "-c", preamble + text],
        env={"PATH": "", "HOME": str(tmp)},
        cwd=tmp,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return set(log.read_text().split()) if log.exists() else set()


@pytest.mark.skipif(not os.path.exists("/usr/bin/timeout"), reason="needs timeout(1)")
@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(tree=_tree())
def test_every_substitution_bash_runs_is_found(tree: object, tmp_path: Path) -> None:
    """Run generated lines in bash (no PATH: only builtins and the marker function); every
    marker bash ran must sit at a substitution the lexer reported (or at one it read as a
    closing character: then bash ran it as a plain word glued to an empty expansion), unless
    the lexer said its reading cannot be trusted."""
    line = Line()
    _build(tree, line)
    found = scan(line.text.encode())
    if found.unsure:
        return
    reported = {t[0] for t in found.tokens} | {t[1] - 1 for t in found.tokens}
    for number in _markers_run(line.text, tmp_path):
        assert line.openers[number] in reported, (line.text, number, found.tokens)
