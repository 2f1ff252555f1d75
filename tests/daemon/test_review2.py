"""Review 2's daemon repros: a value carried into a follow-up (M2) and ``review =
"changes"`` (M3), through a real daemon and sandbox, as the review ran them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from shellagent.events import ApprovalNeeded, ChangesDone, Proposed
from tests.daemon.conftest import DaemonProc, ask_inprocess, cmd, done, write_config

PAYLOAD = "a[$(echo CARRIED-$((40+2)) >&2; echo owned > x.txt)]"  # prints CARRIED-42 if run


def _carry(script: Callable[..., str], workdir: Path, text: str) -> str:
    """A first task that reads ``text`` from a file into ``v``; its session id."""
    (workdir / "VERSION").write_text(text + "\n")
    first = ask_inprocess(
        "read the version", script(cmd("read -r v < VERSION"), done("read")), workdir, yes=True
    )
    assert first.summary.exit_codes == (0,)
    return first.summary.session


def test_a_carried_value_that_runs_code_is_never_evaluated_in_a_follow_up(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    session = _carry(script, workdir, PAYLOAD)
    follow = ask_inprocess(
        "make the next build dir",
        script(cmd('mkdir -p "build-$((v+1))"'), cmd('echo "next: $((v+1))"'), done("x")),
        workdir,
        continues=session,
        yes=True,  # as the review ran it: even -y does not run it
    )
    verdicts = {p.command: p.decision for p in follow.of(Proposed)}
    assert verdicts == {'mkdir -p "build-$((v+1))"': "deny", 'echo "next: $((v+1))"': "deny"}
    assert "CARRIED-42" not in follow.out
    assert not (workdir / "x.txt").exists() and not list(workdir.glob("build-*"))


def test_a_carried_integer_is_evaluated_as_before(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    session = _carry(script, workdir, "41")
    follow = ask_inprocess(
        "say the next build",
        script(cmd('echo "next: build-$((v+1))"'), done("x")),
        workdir,
        continues=session,
        yes=True,
    )
    assert [p.decision for p in follow.of(Proposed)] == ["allow"]
    assert "next: build-42" in follow.out


def test_the_prompt_shows_the_carried_values_a_command_expands(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    session = _carry(script, workdir, "\x1b[31mred; x")
    follow = ask_inprocess(
        "use it",
        script(cmd("echo $((v))"), done("x")),
        workdir,
        continues=session,
        keys=["n", "\r"],
    )
    asked = follow.of(ApprovalNeeded)
    assert [a.carried for a in asked] == [("v=\x1b[31mred; x",)]
    line = next(ln for ln in follow.out.splitlines() if "carried:" in ln)
    assert "v = " in line and "\x1b[31m" not in line  # escaped like everything on screen


def test_review_changes_prompts_for_interpreters_processes_and_shell_code(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    write_config('[ask]\nreview = "changes"\nconfirm = false\n')
    (workdir / "notes").mkdir()
    (workdir / "notes" / "a.txt").write_text("alpha\n")
    prompted = [
        'python3 -c \'open("x.txt", "w").write("py")\'',
        "bash -c 'echo hi > y.txt'",
        "kill -0 1",
    ]
    model = script(*(cmd(c) for c in prompted), cmd("rm notes/a.txt"), done("x"))
    # the first refusal asks why; from the second on, ask asks what would help: a hint
    keys = ["n", "\r"] + ["n", "h", "\r"] * (len(prompted) - 1) + ["a"]
    run = ask_inprocess("tidy", model, workdir, keys=keys)
    assert [e.command for e in run.of(ApprovalNeeded)] == prompted  # rm alone: no prompt
    assert not (workdir / "notes" / "a.txt").exists()
    assert run.of(ChangesDone)[0].outcome == "applied"
    assert not (workdir / "x.txt").exists() and not (workdir / "y.txt").exists()


def test_the_m1_repros_are_not_run_without_an_approval(
    daemon: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    # as the review ran them: no -y, no terminal; each was "allow (read-only)" and ran.
    # Each payload prints PWNED-42 (computed, so the command line itself never shows it).
    import subprocess

    run_it = "echo PWNED-$((40+2)) >&2"
    (workdir / "notes.txt").write_text("hello\n")
    (workdir / "VERSION").write_text(f"a[$({run_it})]\n")
    (workdir / "BANNER").write_text(f"$({run_it})\n")
    subprocess.run(["git", "init", "-q", str(workdir / "vendor")], check=True)
    config = workdir / "vendor" / ".git" / "config"
    config.write_text(config.read_text() + f"[core]\n\tfsmonitor = {run_it}; true\n")
    (workdir / "sub").mkdir()
    (workdir / "sub" / ".git").write_text(f"gitdir: {workdir / 'vendor' / '.git'}\n")
    repros = [
        f"echo '!{run_it}' | dc",
        f'BASH_CMDS[ls]=/bin/bash; ls -c "{run_it}"',
        f"sleep 0 & wait -p 'a[$({run_it})]' -n",
        "read -r v < VERSION; echo $((v))",
        "read -r v < VERSION; [[ $v -gt 2 ]]",
        'read -r v < VERSION; s=abc; echo "${s:v}"',
        'read -r v < VERSION; echo "${a[v]}"',
        'read -r v < VERSION; test -v "$v"',
        'read -r v < VERSION; echo "${!v}"',
        'read -r b < BANNER; echo "${b@P}"',
        "cd sub && git status",
    ]
    model = script(cmd("cat notes.txt"), *(cmd(c) for c in repros), done("x"))
    run = ask_inprocess("try them", model, workdir, max_turns=len(repros) + 3)
    verdicts = {p.command: p.decision for p in run.of(Proposed)}
    assert verdicts["cat notes.txt"] == "allow" and "hello" in run.out  # the control ran
    assert all(verdicts[c] != "allow" for c in repros), verdicts
    assert "PWNED-42" not in run.out
