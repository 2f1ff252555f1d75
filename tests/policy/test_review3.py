"""The third security review's policy findings stay fixed: H1 (substitutions tree-sitter
leaves as plain text), L7 (run-time words that could be options), L8 (``git reflog``'s
writing subcommands) and ``git -C .``.

The one-line commands are in the adversarial corpus after the "Security review 3" line;
here-document forms, which span lines, are here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shellagent.cli.main import main
from shellagent.errors import InputError
from shellagent.policy import PolicyEngine
from shellagent.substitutions import ARITHMETIC, COMMAND
from tests.policy.conftest import STATE
from tests.policy.reviews import corpus_section, git_workspace, run_refused, snapshot

REVIEW = corpus_section("# Security review 3")
# H1's forms that span lines: backticks in an unquoted here-document body, $( ) or
# backticks in a <<- body, a backslash-newline between $ and (
MULTILINE = [
    "cat <<EOF\n`touch pwned_h1`\nEOF",
    "grep x <<EOF\n`touch pwned_h1`\nEOF",
    "cat <<EOF | wc -l\n`touch pwned_h1`\nEOF",
    "cat <<EOF >/dev/null\n`touch pwned_h1`\nEOF",
    "wc -c <<-END\n\t$(touch pwned_h1)\nEND",
    "wc -c <<-END\n\t`touch pwned_h1`\nEND",
    "cat <<-END\n\t${HOME#$(touch pwned_h1)}\nEND",
    "echo $\\\n(touch pwned_h1)",
    "cat <<'E'\nx\\\nE\necho $(touch pwned_h1)",
]


def test_the_review_section_holds_every_h1_form() -> None:
    for repro in (
        "echo ${HOME#$(touch pwned_h1)}",
        "ls ${PWD%`touch pwned_h1`}",
        "cat ${HOME%%/$(touch pwned_h1)}/notes.txt",
        "test -d ${HOME%$(touch pwned_h1)}",
        "echo ${PATH##`touch pwned_h1`}",
        "echo ${x:-`touch pwned_h1`}",
        "echo ${HOME^^$(touch pwned_h1)}",
    ):
        assert repro in REVIEW, repro


@pytest.mark.parametrize("line", [*REVIEW, *MULTILINE])
def test_policy_check_never_allows_a_review_command(
    line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["policy", "check", "--json", "--workspace", str(tmp_path), "--", line])
    decision = json.loads(capsys.readouterr().out)["decision"]
    assert code == 1 and decision != "allow", decision


@pytest.mark.slow
def test_the_agent_loop_with_a_refusing_approver_runs_none_of_them(tmp_path: Path) -> None:
    ws = git_workspace(tmp_path, {"notes.txt": "notes\n"})
    before = snapshot(ws)
    controls = ["cat notes.txt"]
    hidden = [c for c in [*REVIEW, *MULTILINE] if "pwned_h1" in c]
    ran, judged, _ = run_refused(ws, [*controls, *hidden])
    assert ran == controls, ran
    assert all(judged[c] != "allow" for c in hidden)
    assert snapshot(ws) == before
    assert not list(ws.glob("pwned_*"))


# -- H1: a hidden substitution is judged like any other --------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "echo ${HOME#$(rm -rf ~)}",
        'echo "${x:-`rm -rf ~`}"',
        "cat <<EOF\n`rm -rf ~`\nEOF",
        "wc -c <<-END\n\t$(rm -rf ~)\nEND",
        "echo $(( '$(rm -rf ~)' ))",
    ],
)
def test_a_hidden_substitution_is_denied_like_a_visible_one(
    engine: PolicyEngine, line: str
) -> None:
    evaluation = engine.check(line, STATE)
    assert evaluation.decision == "deny"
    assert any(s.program == "rm" and s.decision == "deny" for s in evaluation.segments)


@pytest.mark.parametrize(
    "line",
    ["cat <<EOF\n`date`\nEOF", "wc -c <<-END\n\t$(date)\nEND", "cat <<-END\n\t`date +%F`\nEND"],
)
def test_a_harmless_command_in_a_heredoc_body_stays_allowed_and_is_judged(
    engine: PolicyEngine, line: str
) -> None:
    evaluation = engine.check(line, STATE)
    assert evaluation.decision == "allow" and evaluation.read_only
    assert any(s.program == "date" for s in evaluation.segments)


def test_a_substitution_in_a_pattern_is_judged_as_a_visible_one_is(
    engine: PolicyEngine,
) -> None:
    hidden = engine.check("echo ${HOME#$(date)}", STATE)
    visible = engine.check("echo ${x:-$(date)}", STATE)
    assert hidden.decision == visible.decision == "ask"
    assert [s.program for s in hidden.segments] == [s.program for s in visible.segments]


def test_the_evaluation_lists_the_substitutions_it_judged(engine: PolicyEngine) -> None:
    line = "for f in $(ls); do echo $((n + 1)) ${HOME#`date`}; done"
    evaluation = engine.check(line, STATE)
    assert evaluation.substitutions == (
        (line.index("$(ls)"), COMMAND),
        (line.index("$((n"), ARITHMETIC),
        (line.index("`date`"), COMMAND),
    )


def test_offsets_are_those_of_the_line_as_given_with_its_line_continuations(
    engine: PolicyEngine,
) -> None:
    line = "echo a\\\nb; for f in \\\n$(ls); do :; done"
    assert engine.check(line, STATE).substitutions == ((line.index("$(ls)"), COMMAND),)
    assert engine.check("echo é$(date)", STATE).substitutions == ((7, COMMAND),)


@pytest.mark.parametrize(
    "line",
    [
        "echo x >&'$(date)'",  # bash expands a >& target twice
        "cat <<E\n`echo \\`date\\``\nE",  # a backtick text bash unescapes
        "echo ${ date; }",  # bash 5.3's ${ cmd; }
    ],
)
def test_text_the_policy_cannot_read_is_asked_about_and_cannot_be_remembered(
    engine: PolicyEngine, line: str
) -> None:
    evaluation = engine.check(line, STATE)
    assert evaluation.decision == "ask"
    assert STATE.cwd is not None
    with pytest.raises(InputError, match="cannot be always allowed"):
        engine.remember_always(evaluation, "session", STATE.cwd)


# -- L7: a run-time word where an option that acts could stand ----------------------------


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("uniq -- *", "several words"),
        ("xxd -- *", "several words"),
        ("wc -l *", "could be an option of wc"),
        ("jq . *", "could be an option of jq"),
        ("strings $v", "could be an option of strings"),
        ("grep x $v", "could be an option of grep"),
        ("jq {--rawfile,a,/etc/shadow,-n,.}", "could be an option of jq"),
        ("strings @notes.txt", "read more options from a file"),
        ("find . | xargs grep ERROR", "could be options"),
        ("find . | xargs uniq --", "which it writes or acts on"),
    ],
)
def test_a_run_time_word_that_could_be_an_option_asks(
    engine: PolicyEngine, line: str, why: str
) -> None:
    evaluation = engine.check(line, STATE)
    assert evaluation.decision == "ask"
    assert any(why in r for r in evaluation.reasons), evaluation.reasons


@pytest.mark.parametrize(
    "line",
    [
        "wc -l -- *",
        "wc -l ./*.txt",
        "grep -n TODO -- *.py",
        'grep x -- "$v"',
        "du -sh -- *",
        "cat *",
        "ls *.pdf",
        "head -n 3 *",
        "uniq -- notes.txt",
        'uniq -- "$f"',
        "find . -name '*.log' | xargs grep ERROR --",
        "find . -name '*.log' | xargs wc -l --",
    ],
)
def test_the_same_words_where_no_option_can_stand_stay_allowed(
    engine: PolicyEngine, line: str
) -> None:
    evaluation = engine.check(line, STATE)
    assert evaluation.decision == "allow" and evaluation.read_only, evaluation.reasons


def test_the_reason_says_how_to_write_it_so_that_it_is_allowed(engine: PolicyEngine) -> None:
    assert "(written ./*.txt it could not)" in engine.check("wc -l *.txt", STATE).reasons[0]
    assert '(written -- "$v" it could not)' in engine.check('grep x "$v"', STATE).reasons[0]


# -- L8: git reflog's writing subcommands ---------------------------------------------


@pytest.mark.parametrize(
    "line", ["git reflog drop", "git reflog drop --all", "git reflog write HEAD a b x"]
)
def test_git_reflog_drop_and_write_are_not_read_only(engine: PolicyEngine, line: str) -> None:
    evaluation = engine.check(line, STATE)
    assert evaluation.decision == "ask" and not evaluation.read_only


@pytest.mark.parametrize("line", ["git reflog", "git reflog show main", "git reflog main"])
def test_git_reflog_listings_stay_read_only(engine: PolicyEngine, line: str) -> None:
    assert engine.check(line, STATE).read_only


# -- issue 40, item 7: git -C where the session is ----------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "git -C . status",
        "git -C ./ log --oneline -n 3",
        "git -C. status",
        'git -C "" status',
        'git -C "$PWD" status',
        "git -C ${PWD} diff",
        f"git -C {STATE.cwd} status",
    ],
)
def test_git_minus_c_here_is_judged_as_git_here(engine: PolicyEngine, line: str) -> None:
    evaluation = engine.check(line, STATE)
    assert evaluation.decision == "allow" and evaluation.read_only, evaluation.reasons


@pytest.mark.parametrize(
    "line",
    [
        "git -C sub status",
        "git -C sub/.. status",  # the parent of where a symlink sub leads
        "git -C . -C sub status",
        "git -C $PWD/sub status",
        'PWD=/tmp; git -C "$PWD" status',
        'cd sub; git -C "$PWD" status',
        "git -C /tmp status",
    ],
)
def test_git_minus_c_elsewhere_still_asks(engine: PolicyEngine, line: str) -> None:
    evaluation = engine.check(line, STATE)
    assert evaluation.decision == "ask"
    assert any("git runs" in r for r in evaluation.reasons), evaluation.reasons


def test_git_minus_c_pwd_unquoted_asks_where_the_directory_name_would_split(
    tmp_path: Path,
) -> None:
    work = tmp_path / "my project"
    work.mkdir()
    (work / ".git").mkdir()
    engine = PolicyEngine.load(workspace=work)
    state = STATE.__class__(cwd=work)
    assert engine.check("git -C $PWD status", state).decision == "ask"
    assert engine.check('git -C "$PWD" status', state).decision == "allow"
