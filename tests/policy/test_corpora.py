"""The two corpora: adversarial commands are never allowed, everyday ones never denied."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellagent.policy import PolicyEngine
from tests.policy.conftest import STATE

HERE = Path(__file__).parent


def corpus(name: str) -> list[str]:
    lines = (HERE / name).read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


ADVERSARIAL = corpus("adversarial.txt")
EVERYDAY = corpus("everyday.txt")


def test_corpora_are_large_enough() -> None:
    assert len(ADVERSARIAL) >= 150
    assert len(EVERYDAY) >= 200


@pytest.mark.parametrize("line", ADVERSARIAL)
def test_adversarial_command_is_never_allowed(engine: PolicyEngine, line: str) -> None:
    must_deny = line.startswith("deny:")
    command = line.removeprefix("deny:")
    decision = engine.check(command, STATE).decision
    assert decision == "deny" if must_deny else decision != "allow", (command, decision)


def test_no_everyday_command_is_denied(engine: PolicyEngine) -> None:
    denied = [c for c in EVERYDAY if engine.check(c, STATE).decision == "deny"]
    assert denied == []


def test_most_read_only_everyday_commands_are_allowed(engine: PolicyEngine) -> None:
    allowed = sum(engine.check(c, STATE).decision == "allow" for c in EVERYDAY)
    assert allowed >= 160  # the share before program specs; it must not fall


PLEASANT = [
    "ls -lah",
    # review 3, L7: `du -sh *` asks (a file named --files0-from=F makes du read names from
    # F); after -- a glob is only ever file names
    "du -sh -- *",
    "find . -name '*.log' -mtime +7",
    "grep -rn TODO src",
    "sort -k2 -n f | uniq -c",
    "head -n 20 f",
    "git status",
    "git log --oneline -n 10",
    "git diff HEAD~1",
    "git show --stat HEAD",
    "ps aux",
    "df -h",
]


@pytest.mark.parametrize("command", PLEASANT)
def test_everyday_reading_stays_allowed_as_read_only(engine: PolicyEngine, command: str) -> None:
    decision = engine.check(command, STATE)
    assert decision.decision == "allow" and decision.read_only, decision.reasons


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("read LD_PRELOAD <<< ./x.so", "ask"),
        ("read -ra BASH_ENV < f", "ask"),
        ("read $name < f", "ask"),
        ("echo ${PROMPT_COMMAND:=id}", "ask"),
        ("declare -n ref=PATH", "ask"),
        ("test -v 'a[$(rm x)]'", "ask"),
        ("x='a[$(rm y)]'; echo $((x))", "ask"),
        ("echo $(( 'a[$(rm x)]' ))", "ask"),
        # the same builtins on ordinary names stay read-only
        ("test -v HOME", "allow"),
        ("n=3; echo $((n * 2))", "allow"),
        ("grep -n '$(' f", "allow"),
        ("read -r line < f", "allow"),
        ("export -n FOO", "allow"),  # -n of export unexports; not a nameref
        ("read -a parts -r < f", "allow"),
        ("read -t 5 -n 1 key", "allow"),
        (": ${COUNT:=0}", "allow"),
        ("echo ${HOME:-/tmp}", "allow"),
        # exporting a function asks; listing, un-exporting or tracing one does not
        ("export -f greet", "ask"),
        ("declare -x -f greet", "ask"),
        ("export -f", "allow"),
        ("export -fn greet", "allow"),
        ("declare -ft greet", "allow"),
        # globskipdots off makes .* name . and ..; other options off stay allowed
        ("shopt -u globskipdots", "ask"),
        ("shopt -u nullglob", "allow"),
    ],
)
def test_what_bash_itself_evaluates_is_checked(
    engine: PolicyEngine, command: str, expected: str
) -> None:
    """``read NAME``, ``${NAME:=…}`` and namerefs set variables too: one that makes programs
    run code is asked about like ``NAME=…``; an ordinary one stays read-only. A quoted
    ``$( )`` that bash runs anyway (an array subscript in a name or in arithmetic) asks."""
    assert engine.check(command, STATE).decision == expected
