"""The second security review's policy findings (M1, M2, M3, L3, L4, L8) stay fixed.

Every command of those findings, and more of each class, is in the adversarial corpus after
the "Security review 2" line: ``shellagent policy check`` never allows one, and the agent
loop on a real sandbox, with an approver that refuses everything, runs none of them (a
positive control shows it ran commands). Values carried from earlier commands are judged
where bash evaluates them (M2), and ``review = "changes"`` prompts for anything but file
changes (M3).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from shellagent.agent import Approval, ApprovalRequest
from shellagent.agent.approval import ChangesApprover, file_changes_only
from shellagent.cli.main import main
from shellagent.policy import PolicyEngine, ShellState
from shellagent.policy.values import Carried
from tests.policy.conftest import STATE, WORKSPACE
from tests.policy.reviews import corpus_section, git_workspace, run_refused, snapshot

MARK = "# Security review 2"
PAYLOAD = "a[$(touch pwned_arith)]"


REVIEW = corpus_section(MARK)


def test_the_review_section_holds_every_finding() -> None:
    assert len(REVIEW) >= 100
    for repro in (
        "echo '!echo DCEXEC; id' | dc",
        'BASH_CMDS[ls]=/bin/bash; ls -c "touch pwned_hash"',
        "sleep 0 & wait -p 'a[$(touch pwned_wait)]' -n",
        'read -r b < BANNER; echo "${b@P}"',
        "git cat-file --filters HEAD:notes.txt",
        "cd sub && git status",
        "git config edit",
        "shopt -s globstar",
        "getent shadow",
        "cat /proc/*/environ",
    ):
        assert repro in REVIEW, repro


@pytest.mark.parametrize("line", REVIEW)
def test_policy_check_never_allows_a_review_command(
    line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["policy", "check", "--json", "--workspace", str(tmp_path), "--", line])
    decision = json.loads(capsys.readouterr().out)["decision"]
    assert code == 1 and decision != "allow", decision


def _workspace(root: Path) -> Path:
    """A repository with the review's untrusted files: a VERSION and a BANNER whose text
    runs a command when bash evaluates it, a planted nested repository whose config names
    an fsmonitor, and a dc program."""
    ws = git_workspace(
        root,
        {
            "notes.txt": "hello\n",
            "in": "b\na\n",
            "VERSION": PAYLOAD + "\n",
            "BANNER": "$(touch pwned_prompt)\n",
            "prog.dc": "!touch pwned_dc\n",
            ".env": "TOKEN=secret\n",
        },
    )
    # a nested repository's git file pointing at a config that runs a program (M1)
    (ws / "sub").mkdir()
    (ws / "vendor").mkdir()
    subprocess.run(["git", "init", "-q", "--bare", str(ws / "vendor" / "repo")], check=True)
    config = ws / "vendor" / "repo" / "config"
    config.write_text(config.read_text() + "[core]\n\tfsmonitor = touch pwned_fsmonitor\n")
    (ws / "sub" / ".git").write_text(f"gitdir: {ws / 'vendor' / 'repo'}\n")
    return ws


def test_the_agent_loop_with_a_refusing_approver_runs_none_of_them(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    before = snapshot(ws)
    # the controls: the second leaves v holding VERSION's text for the commands after it
    controls = ["cat notes.txt", "read -r v < VERSION"]
    ran, judged, outcome = run_refused(ws, [*controls, *REVIEW])
    assert ran == controls, ran  # the controls ran; no review command did
    assert all(judged[c] != "allow" for c in REVIEW)
    assert judged['echo "build-$((v+1))"'] == "deny"  # v carries VERSION's code
    assert outcome.reason != "error"
    assert snapshot(ws) == before
    assert not list(ws.glob("pwned_*"))


# -- M1: what bash evaluates, with values known and unknown ----------------------------


@pytest.mark.parametrize(
    "command",
    [
        "n=3; echo $((n * 2))",
        "for i in 1 2 3; do echo $((i * 2)); done",
        "for ((i = 0; i < 3; i++)); do echo $i; done",
        "x=$((1 + 2)); echo $((x * 2))",
        "echo $((RANDOM % 6))",
        "[[ $# -gt 0 ]] || echo none",
        "s=hello; echo ${s:1:2}",
        "x=HOME; echo ${!x}",
        "a=(1 2 3); echo ${a[1]} ${a[@]}",
        "echo $(( 0x1F + 2#101 ))",
        "cat <<'EOF'\n$((q + 1))\nEOF",
        '[ "$v" -eq 1 ] && echo one',  # the test builtin does not evaluate its operands
    ],
)
def test_arithmetic_on_values_the_line_sets_stays_allowed(
    engine: PolicyEngine, command: str
) -> None:
    decision = engine.check(command, STATE)
    assert decision.decision == "allow" and decision.read_only, decision.reasons


def test_an_unquoted_heredoc_evaluates_its_arithmetic(engine: PolicyEngine) -> None:
    decision = engine.check("read -r v < VERSION; cat <<EOF\n$((v + 1))\nEOF", STATE)
    assert decision.decision == "ask"


CARRIED = Carried(
    {
        "v": ("a[$(echo CARRIED-EXEC >&2; echo owned > x.txt)]",),
        "n": ("41",),
        "t": ("hello world; x",),
        "name": ("HOME",),
        "r": ("a[$(touch pwned_readonly)]",),
        "p": ("\\044(touch pwned_prompt)",),  # \044 is a $ once the prompt is decoded
    },
    integers=frozenset({"count"}),
    readonly=frozenset({"r"}),
)


def _carried(**kw: object) -> ShellState:
    return ShellState(cwd=WORKSPACE, carried=CARRIED, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # the review's follow-up: a carried value that runs a command is never evaluated
        ('mkdir -p "build-$((v+1))"', "deny"),
        ('echo "build-$((v+1))"', "deny"),
        ("echo ${a[v]}", "deny"),
        ("[[ $v -gt 1 ]]", "deny"),
        # a carried value that is not an integer (or not a name) asks
        ("echo $((t))", "ask"),
        ("echo ${!t}", "ask"),
        ('echo "${p@P}"', "ask"),
        ('echo "${t@P}"', "allow"),  # no $, backtick or backslash: nothing to expand
        ("count=$t", "ask"),  # an integer variable evaluates what is assigned to it
        # plain integers and names, and values merely printed, are fine
        ("echo $((n + 1))", "allow"),
        ("echo ${!name}", "allow"),
        ('echo "$t" "$v"', "allow"),
        ("v=3; echo $((v))", "allow"),  # set in the line before it is evaluated
        # ... but not when the carried value may still be there
        ("false && v=3; echo $((v))", "deny"),
        ("(v=3); echo $((v))", "deny"),
        ("v+=1; echo $((v))", "deny"),  # appends to the carried value
        ("local v=3; echo $((v))", "deny"),  # local outside a function sets nothing
        ("r=3; echo $((r))", "deny"),  # a readonly variable keeps its value
        ("ls", "allow"),
    ],
)
def test_carried_values_are_judged_where_bash_evaluates_them(
    engine: PolicyEngine, command: str, expected: str
) -> None:
    assert engine.check(command, _carried()).decision == expected


def test_the_carried_values_are_read_only_when_needed(engine: PolicyEngine) -> None:
    reads: list[int] = []

    def source() -> Carried:
        reads.append(1)
        return CARRIED

    state = ShellState(cwd=WORKSPACE, carried=source)
    engine.check("ls -la", state)
    engine.check("git status", state)
    assert reads == []
    engine.check("echo $((n + 1))", state)
    assert reads == [1]


def test_a_decision_shows_the_carried_values_the_command_expands(engine: PolicyEngine) -> None:
    decision = engine.check('mkdir -p "build-$((v+1))" "$t" "$n"', _carried())
    shown = dict(decision.carried)
    assert shown["v"].startswith("a[$(echo CARRIED-EXEC")
    assert shown["t"] == "hello world; x"
    assert "n" not in shown  # an integer is not worth showing
    assert engine.check('mkdir -p "$n"', _carried()).carried == ()


# -- M3: review = "changes" ----------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 80))'",
        "perl -e 'print 1'",
        "bash -c 'echo hi > x.txt'",
        "sh -c 'rm notes.txt'",
        "kill -0 1",
        "crontab -e",
        "at now",
        "curl -s https://example.org",
        "umask 000",
        "export PATH=/tmp",
        "alias ls='rm -rf ~'",
        "find . -name '*.tmp' -exec rm {} \\;",
        "echo $((v)) > out.txt",
        "touch a && python3 build.py",
        "rm -rf /",
    ],
)
def test_review_changes_keeps_the_prompt_for_anything_but_file_changes(
    engine: PolicyEngine, command: str
) -> None:
    decision = engine.check(command, STATE)
    assert not file_changes_only(decision)
    asked: list[str] = []

    def person(request: ApprovalRequest) -> Approval:
        asked.append(request.command)
        return Approval("refuse", reason="no")

    request = ApprovalRequest(command, "test", decision, 1)
    assert ChangesApprover(person)(request).kind == "refuse"
    assert asked == [command]


@pytest.mark.parametrize(
    "command",
    [
        "echo hi > notes.txt",
        "rm old.txt",
        "mkdir build && touch build/a",
        "sed -i s/a/b/ f",
        "find . -name '*.tmp' -delete",
    ],
)
def test_review_changes_skips_the_prompt_for_file_changes(
    engine: PolicyEngine, command: str
) -> None:
    decision = engine.check(command, STATE)
    assert file_changes_only(decision)
    approval = ChangesApprover(lambda r: Approval("refuse"))(
        ApprovalRequest(command, "test", decision, 1)
    )
    assert approval.kind == "approve"


# -- L8: git 2.46's config subcommands ------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git config get user.name", "allow"),
        ("git config list", "allow"),
        ("git config --get user.name", "allow"),
        ("git config edit", "ask"),
        ("git config set user.name me", "ask"),
        ("git config unset user.name", "ask"),
        ("git config rename-section a b", "ask"),
        ("git config remove-section a", "ask"),
    ],
)
def test_git_config_subcommands(engine: PolicyEngine, command: str, expected: str) -> None:
    assert engine.check(command, STATE).decision == expected


def test_git_asks_only_away_from_where_the_session_started(engine: PolicyEngine) -> None:
    assert engine.check("git status", STATE).decision == "allow"
    assert engine.check("git status", ShellState(cwd=WORKSPACE / "sub")).decision == "ask"
    assert engine.check("cd sub && git log", STATE).decision == "ask"
    assert engine.check("cd sub && ls", STATE).decision == "allow"


def test_git_asks_where_no_repository_was_when_the_session_started(tmp_path: Path) -> None:
    # a bare-repository look-alike made in the directory would be the repository git uses
    plain = tmp_path / "plain"
    plain.mkdir()
    engine = PolicyEngine.load(workspace=plain)
    assert engine.starting_repo is False
    assert engine.check("git log", ShellState(cwd=plain)).decision == "ask"
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    engine = PolicyEngine.load(workspace=repo)
    assert engine.check("git log", ShellState(cwd=repo)).decision == "allow"
    assert engine.check("git --bare log", ShellState(cwd=repo)).decision == "ask"


def test_a_command_tree_sitter_runs_across_a_line_break_is_never_allowed(
    engine: PolicyEngine,
) -> None:
    # tree-sitter-bash reads this as `ls rm -rf ~`; bash runs `rm -rf ~` on the second line
    decision = engine.check("ls | ls | ls\nrm -rf ~ && ls", STATE)
    assert decision.decision != "allow"
    assert any("past the end of line 1" in r for r in decision.reasons)
    assert engine.check("for i in 1 2; do\n  echo $i\ndone", STATE).decision == "allow"
