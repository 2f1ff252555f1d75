"""The kernel holds the policy's read-only claim: the agent loop with a real sandbox.

A test policy deliberately calls ``touch`` read-only. The loop runs it confined, the kernel
refuses the write, the result and the transcript say the claim was wrong, and the next
proposal of the same command is judged ``ask`` (``ShellState.refuted``) and, approved, runs
with the sandbox's normal rights.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shellagent.agent import Approval
from shellagent.events import Execution, PolicyVerdict
from shellagent.policy import PolicyEngine
from shellagent.policy.sources import default_policy_path
from shellagent.sandbox import Sandbox, get_profile
from shellagent.testing import FakeShell

from .conftest import Approvals, Run, cmd, done

WRONG_POLICY = """
version = 1
remove = ["file-changes", "writes-files", "interpreters"]

# Deliberately wrong specs and rules: they claim touch and any Python script only read.
[program.touch]
options = []
operands = ["read"]

[program.python3]
options = []
operands = ["read"]

[[rule]]
id = "wrong-touch"
decision = "allow"
reason = "a deliberately wrong rule for a test: touch only reads (it does not)"
program = ["touch"]
read_only = true

[[rule]]
id = "wrong-python"
decision = "allow"
reason = "a deliberately wrong rule for a test: any Python script only reads"
program = ["python3"]
read_only = true
"""
PROBE = Path(__file__).parents[1] / "sandbox" / "forge_probe.py"


@pytest.fixture
def policy(workspace: Path, tmp_path: Path) -> PolicyEngine:
    """The default policy with the planted mistake (every other verdict used here holds)."""
    extra = tmp_path / "wrong.toml"
    extra.write_text(WRONG_POLICY)
    return PolicyEngine.load([default_policy_path(), extra], workspace=workspace)


@pytest.fixture
def box(workspace: Path) -> Iterator[Sandbox]:
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as session:
        if not session.landlock_abi:
            pytest.skip("this kernel has no Landlock: the policy alone decides")
        yield session


def executions(run: Run) -> list[Execution]:
    return run.sink.of_type(Execution)


def test_a_wrong_read_only_claim_is_stopped_by_the_kernel_and_then_asked_about(
    run_agent: Callable[..., Run], box: Sandbox, workspace: Path
) -> None:
    approvals = Approvals(Approval("approve"))
    run = run_agent(
        [cmd("touch planted.txt"), cmd("touch planted.txt"), done("created")],
        box,
        approver=approvals,
    )
    first, second = executions(run)
    assert first.confined and first.refused and first.exit_code != 0
    assert "kernel stopped it" in run.observations()[0]
    policies = run.sink.of_type(PolicyVerdict)
    assert [p.decision for p in policies] == ["allow", "ask"]
    assert "judged as a writer" in policies[1].reasons[0]
    assert [r.command for r in approvals.requests] == ["touch planted.txt"]
    assert not second.confined and not second.refused and second.exit_code == 0
    assert (workspace / "planted.txt").exists()


def test_the_planted_write_never_happens_without_approval(
    run_agent: Callable[..., Run], box: Sandbox, workspace: Path
) -> None:
    refusing = Approvals(Approval("refuse"))
    run = run_agent(
        [cmd("touch planted.txt"), cmd("touch planted.txt"), done("gave up")],
        box,
        approver=refusing,
    )
    assert [e.refused for e in executions(run)] == [True]
    assert not (workspace / "planted.txt").exists()
    # positive control: the same write, approved, works in this sandbox
    assert box.run("touch planted.txt").exit_code == 0
    assert (workspace / "planted.txt").exists()


def test_allowed_reads_run_confined_keep_the_session_state_and_are_not_refused(
    run_agent: Callable[..., Run], box: Sandbox, workspace: Path
) -> None:
    (workspace / "sub").mkdir()
    run = run_agent([cmd("cd sub"), cmd("pwd"), cmd("cat ../notes.txt"), done("read")], box)
    shown = executions(run)
    assert [e.confined for e in shown] == [True, True, True]
    assert not any(e.refused for e in shown)
    assert shown[1].output.endswith(f"{workspace}/sub")
    assert "one\ntwo" in shown[2].output


def test_approved_commands_run_with_the_sandbox_normal_rights(
    run_agent: Callable[..., Run], box: Sandbox, workspace: Path
) -> None:
    run = run_agent([cmd("mkdir made"), done("made")], box, approver=Approvals(Approval("approve")))
    (execution,) = executions(run)
    assert not execution.confined and execution.exit_code == 0
    assert (workspace / "made").is_dir()


def test_the_loop_asks_the_fake_shell_to_confine_only_read_only_commands(
    run_agent: Callable[..., Run], workspace: Path
) -> None:
    fake = FakeShell({"cat notes.txt": ("one\ntwo\n", 0)}, cwd=str(workspace))
    run_agent(
        [cmd("cat notes.txt"), cmd("rm notes.txt"), done("x")],
        fake,
        approver=Approvals(Approval("approve")),
    )
    assert fake.ran == ["cat notes.txt", "rm notes.txt"]
    assert fake.confined == ["cat notes.txt"]


def test_an_edited_command_runs_unconfined(run_agent: Callable[..., Run], workspace: Path) -> None:
    fake = FakeShell(cwd=str(workspace))
    run_agent(
        [cmd("rm notes.txt"), done("x")],
        fake,
        approver=Approvals(Approval("edit", command="cat notes.txt")),
    )
    assert fake.ran == ["cat notes.txt"] and fake.confined == []


def test_an_allowed_command_that_attacks_the_driver_changes_nothing_the_host_believes(
    run_agent: Callable[..., Run], box: Sandbox, workspace: Path
) -> None:
    """The review's injection and forgery, through an allowed command in the agent loop."""
    shutil.copy(PROBE, workspace / "forge_probe.py")
    marker = workspace / "INJECTED"
    run = run_agent(
        [cmd(f"python3 forge_probe.py {marker}"), cmd("false"), cmd("pwd"), done("x")], box
    )
    probe, false, pwd = executions(run)
    assert probe.confined and probe.exit_code == 0
    shown = probe.output
    opened = json.loads(shown[shown.index('{"opened"') :].split("\n", 1)[0])["opened"]
    assert "1" not in opened  # the driver's descriptors never opened
    assert false.exit_code == 1 and pwd.exit_code == 0
    assert pwd.output == f"exit 0\n{workspace}"
    assert not marker.exists()
    assert box.restarts == 0


def test_a_read_only_line_with_a_judged_substitution_runs_confined(
    run_agent: Callable[..., Run], box: Sandbox, workspace: Path
) -> None:
    """The driver refuses only substitutions the policy did not judge: the loop sends it the
    ones it judged, so an allowed line with `$( )` or `$(( ))` still runs."""
    run = run_agent(
        [cmd("for f in $(ls); do echo got $f; done"), cmd("echo $((1+2))"), done("x")], box
    )
    listing, arithmetic = executions(run)
    assert listing.confined and not listing.refused and listing.exit_code == 0
    assert "got notes.txt" in listing.output
    assert arithmetic.confined and not arithmetic.refused and "3" in arithmetic.output
