"""The driver's second wall: a confined (read-only) command runs only if every substitution
bash would expand in it is one the host's policy judged (``Sandbox.run(judged=…)``, from
``Evaluation.substitutions``); otherwise it does not run at all. Through a real sandbox, as
root and as the unprivileged user ``nobody``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shellagent.policy import PolicyEngine, ShellState
from shellagent.sandbox import Sandbox

# Each prints INNER_RAN only if its hidden substitution runs (the text never holds it). The
# first five were allowed by the policy before review 3's H1 fix (tree-sitter saw no
# substitution in them): their judged list was then empty, which is what is sent here.
HIDDEN = [
    "echo ${HOME#$(printf INNER_%s RAN >&2)}",
    "ls ${PWD%`printf INNER_%s RAN >&2`}",
    "cat <<EOF\n`printf INNER_%s RAN`\nEOF",
    "wc -c <<-END\n\t$(printf INNER_%s RAN >&2)\nEND",
    'echo "${x:-`printf INNER_%s RAN`}"',
    "echo $(( '$(printf INNER_%s RAN >&2)' ))",
    "echo x >&'$(printf INNER_%s RAN >&2)'",  # bash expands a >& target twice
]


def _policy(cwd: Path) -> Callable[[str], tuple[tuple[int, str], ...]]:
    engine = PolicyEngine.load(workspace=cwd)
    return lambda line: engine.check(line, ShellState(cwd=cwd)).substitutions


@pytest.mark.parametrize("line", HIDDEN)
def test_a_confined_command_with_an_unjudged_substitution_never_runs(
    session: Sandbox, line: str
) -> None:
    result = session.run(line, confined=True, judged=())
    assert "INNER_RAN" not in result.output
    assert result.exit_code == 126 and result.refused
    assert "not run" in result.note and "did not judge" in result.output


def test_the_same_command_runs_when_the_policy_judged_its_substitutions(
    session: Sandbox, workspace: Path
) -> None:
    judged = _policy(workspace)
    line = "cat <<EOF\n`printf INNER_%s RAN`\nEOF"
    result = session.run(line, confined=True, judged=judged(line))
    assert result.output == "INNER_RAN\n" and result.exit_code == 0 and not result.refused
    loop = "for f in $(echo a b); do echo $f; done; echo $((2 * 3))"
    assert session.run(loop, confined=True, judged=judged(loop)).output == "a\nb\n6\n"


def test_a_judged_offset_of_another_kind_does_not_count(session: Sandbox) -> None:
    result = session.run("echo $(printf INNER_%s RAN)", confined=True, judged=[(5, "a")])
    assert result.exit_code == 126 and "INNER_RAN" not in result.output


def test_a_twice_expanded_target_is_refused_with_what_the_policy_judged(
    session: Sandbox, workspace: Path
) -> None:
    line = "echo x >&'$(printf INNER_%s RAN >&2)'"
    engine = PolicyEngine.load(workspace=workspace)
    evaluation = engine.check(line, ShellState(cwd=workspace))
    assert evaluation.decision != "allow" and evaluation.substitutions == ()
    result = session.run(line, confined=True, judged=evaluation.substitutions)
    assert result.exit_code == 126 and "INNER_RAN" not in result.output


def test_a_command_that_is_not_confined_is_not_checked(session: Sandbox) -> None:
    result = session.run("echo ${HOME#$(printf INNER_%s RAN >&2)}")
    assert "INNER_RAN" in result.output and result.exit_code == 0


def test_a_refused_command_leaves_the_shell_as_it_was(session: Sandbox) -> None:
    session.run("cd /tmp && kept=yes")
    refused = session.run("kept=no; cd /; echo ${HOME#$(true)}", confined=True)
    assert refused.exit_code == 126
    after = session.run('echo "$kept $PWD"')
    assert after.output == "yes /tmp\n" and not after.shell_restarted


def test_a_line_whose_quoting_cannot_be_followed_is_refused(session: Sandbox) -> None:
    result = session.run("echo $(printf INNER_%s RAN", confined=True, judged=[(5, "c")])
    assert result.exit_code == 126 and "quoting" in result.output


def test_as_an_unprivileged_user_the_wall_holds_too(
    as_nobody: Callable[..., list[dict[str, Any]]],
) -> None:
    line = "cat <<EOF\n`printf INNER_%s RAN`\nEOF"
    results = as_nobody(
        [*HIDDEN, line, "id -u"],
        confined=[True] * (len(HIDDEN) + 2),
        judged=[[]] * len(HIDDEN) + [[(10, "c")], []],
    )
    for result in results[: len(HIDDEN)]:
        assert result["exit_code"] == 126 and result["refused"], result
        assert "INNER_RAN" not in result["output"]
    assert results[-2]["output"] == "INNER_RAN\n" and results[-2]["exit_code"] == 0
    assert results[-1]["output"] == "65534\n"  # the positive control: nobody ran it
