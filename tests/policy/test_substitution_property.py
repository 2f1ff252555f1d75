"""Property: no allowed line holds text bash would expand as code that the policy did not
judge. Checked two ways over generated lines and every review case:

* by the syntax tree: no leaf of tree-sitter's parse holds a ``$(``, backtick, ``<(``,
  ``>(``, ``$((`` or ``$[`` that bash expands (as ``shellagent.substitutions`` reads the
  line) and that is missing from the evaluation's judged substitutions;
* by bash itself: every command bash runs while expanding an allowed line is one of the
  line's judged segments.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tree_sitter import Node

from shellagent.policy import PolicyEngine
from shellagent.policy.parse import _PARSER
from shellagent.substitutions import scan
from tests.policy.conftest import STATE
from tests.policy.reviews import CORPUS

OPENERS = (b"$((", b"$(", b"`", b"<(", b">(", b"$[")

# Where a line hides text: contexts a harmless command may hold, each with a hole
TEMPLATES = [
    "cat <<E\n{}\nE",
    "cat <<-E\n\t{}\nE",
    "wc -l <<E\n{}\nE",
    "cat <<'E'\n{}\nE",
    "echo {}",
    'echo "{}"',
    "for f in {}; do echo $f; done",
    "[[ -n {} ]]",
    "case {} in a) echo;; esac",
    "echo ${{HOME#{}}}",
    'echo "${{x:-{}}}"',
    "echo ${{x/{}/y}}",
    "echo $(( {} ))",
    "echo x{}",
]
FILLER = [" ", "a", "'", '"', "\\", "$", "#", "\n", "\t", ";", "|", "x=1", "${HOME}", "$#", "}"]
FILLER += ["'a'", '"b"', "\\'", '\\"', "\\`", "\\$", ")", "(", "E", "[a]", "{a,b}", "1"]


def _fragment() -> st.SearchStrategy[list[tuple[str, str]]]:
    """Pieces of a hole: filler text and substitutions around a marker command."""
    piece = st.one_of(
        st.sampled_from(FILLER).map(lambda t: ("text", t)),
        st.sampled_from(["$(", "`", "<(", "$(( ", "'$(", '"`']).map(lambda o: ("open", o)),
    )
    return st.lists(piece, max_size=6)


def _assemble(template: str, pieces: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """The line and its markers (``date +M<n>``, a command the policy allows)."""
    hole: list[str] = []
    markers: list[str] = []
    for kind, text in pieces:
        if kind == "text":
            hole.append(text)
            continue
        marker = f"+M{len(markers) + 1}"
        markers.append(marker)
        close = {"$(": ")", "`": "`", "<(": ")", "$(( ": " ))", "'$(": ")'", '"`': '`"'}[text]
        inner = f"date {marker}" if "((" not in text else f"$(date {marker})"
        hole.append(f"{text}{inner}{close}")
    return template.replace("{}", "".join(hole), 1).replace("{{", "{").replace("}}", "}"), markers


def _leaf_texts_unjudged(engine: PolicyEngine, line: str) -> list[tuple[int, bytes]]:
    """Positions in tree-sitter's leaves where bash expands code the policy did not judge."""
    encoded = line.encode("utf-8", "surrogateescape")
    evaluation = engine.check(line, STATE)
    judged = {offset for offset, _ in evaluation.substitutions}
    expands = {t[0] for t in scan(encoded).tokens}
    missing: list[tuple[int, bytes]] = []
    stack: list[Node] = [_PARSER.parse(encoded).root_node]
    while stack:
        node = stack.pop()
        if node.named_children:
            stack.extend(node.named_children)
            continue
        for at in range(node.start_byte, node.end_byte):
            if encoded[at:].startswith(OPENERS) and at in expands and at not in judged:
                missing.append((at, encoded[at : at + 3]))
    return missing


REVIEW_LINES = [
    line.removeprefix("deny:")
    for line in CORPUS.read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
]


@pytest.mark.parametrize("line", REVIEW_LINES)
def test_no_review_line_is_allowed_with_a_leaf_the_policy_did_not_judge(
    engine: PolicyEngine, line: str
) -> None:
    if engine.check(line, STATE).decision == "allow":
        assert _leaf_texts_unjudged(engine, line) == []


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(template=st.sampled_from(TEMPLATES), pieces=_fragment())
def test_no_allowed_line_holds_a_leaf_the_policy_did_not_judge(
    engine: PolicyEngine, template: str, pieces: list[tuple[str, str]]
) -> None:
    line, _ = _assemble(template, pieces)
    if engine.check(line, STATE).decision == "allow":
        assert _leaf_texts_unjudged(engine, line) == [], line


def _run(line: str, bin_dir: Path, log: Path) -> set[str]:
    """The ``date`` markers bash runs for ``line`` (``date`` is a script that logs them)."""
    log.unlink(missing_ok=True)
    subprocess.run(
        ["/usr/bin/timeout", "5", "/bin/bash", "--norc", "--noprofile", "-c", line],
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(bin_dir), "LOG": str(log)},
        cwd=bin_dir,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return set(log.read_text().split()) if log.exists() else set()


@pytest.mark.skipif(not os.path.exists("/usr/bin/timeout"), reason="needs timeout(1)")
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(template=st.sampled_from(TEMPLATES), pieces=_fragment())
def test_every_command_bash_runs_for_an_allowed_line_was_judged(
    engine: PolicyEngine, template: str, pieces: list[tuple[str, str]], tmp_path: Path
) -> None:
    line, markers = _assemble(template, pieces)
    evaluation = engine.check(line, STATE)
    if evaluation.decision != "allow" or not markers:
        return
    date = tmp_path / "date"
    if not date.exists():
        date.write_text('#!/bin/sh\nprintf "%s\\n" "$1" >> "$LOG"\n')
        date.chmod(0o755)
    judged = {s.argv[1] for s in evaluation.segments if s.program == "date" and len(s.argv) > 1}
    ran = _run(line, tmp_path, tmp_path / "log")
    assert ran <= judged, (line, ran - judged)
