"""A scripted session that writes events the way the agent loop does: system prompt, task,
then per turn a model_turn, the assistant message, the policy verdict, the approval when asked,
the execution (really run by bash) and the observation fed back; then the check and the end."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shellagent.events import (
    ApprovalRecord,
    ChatMessage,
    Check,
    End,
    EndReason,
    EventSource,
    Execution,
    ModelTurn,
    PolicySegment,
    PolicyVerdict,
    RecordedApproval,
    SessionStart,
    Verdict,
)

SYSTEM_PROMPT = (
    'You run shell commands. Reply with one JSON action: {"cmd": "...", "why": "..."} '
    'or {"done": "..."}.'
)


@dataclass
class Turn:
    """One scripted model reply and what the world does with it."""

    cmd: str | None = None
    why: str = ""
    done: str | None = None
    policy: Verdict = "allow"
    approval: RecordedApproval | None = None
    edited: str | None = None
    reason: str | None = None
    raw: str | None = None  # an unparseable reply instead of an action
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None


def reply_text(turn: Turn) -> str:
    if turn.raw is not None:
        return turn.raw
    action = {"done": turn.done} if turn.done is not None else {"cmd": turn.cmd, "why": turn.why}
    return json.dumps(action, ensure_ascii=False, separators=(", ", ": "))


def run_in_shell(command: str, cwd: Path, env: dict[str, str] | None) -> tuple[str, int]:
    """Really run the command (the sandbox is not this package's concern)."""
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=10,
    )
    return done.stdout + done.stderr, done.returncode


def play(
    writer: Any,
    task: str,
    turns: list[Turn],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    check: str | None = None,
    end_reason: EndReason = "finished",
    source: EventSource = "ask",
    task_id: str | None = None,
    confirmed: bool | None = True,
) -> None:
    """Write a whole session through ``writer`` as the agent loop would, running commands.

    A session that finishes without a ``check`` ends as the user's answer to "Did that do
    it?" makes it: ``confirmed`` (None: nobody answered, the session is unverified)."""
    writer.write(
        SessionStart(
            session=writer.session_id,
            task=task,
            model="smollm2-135m",
            backend="scripted",
            policy="default",
            profile="default",
            cwd=str(cwd),
            versions={"shellagent": "0.1.0", "python": "3.11"},
            source=source,
            task_id=task_id,
        )
    )
    writer.write(ChatMessage(role="system", content=SYSTEM_PROMPT))
    writer.write(ChatMessage(role="user", content=task))
    n = 0
    for n, turn in enumerate(turns, start=1):
        raw = reply_text(turn)
        action: dict[str, str] | None = None
        try:
            parsed = json.loads(raw)
            action = parsed if isinstance(parsed, dict) else None
        except ValueError:
            action = None
        writer.write(
            ModelTurn(
                turn=n,
                raw=raw,
                action=action,
                valid=action is not None,
                prompt_tokens=100 + 10 * n,
                evaluated_prompt_tokens=12,
                generated_tokens=20,
                duration_s=0.05,
                token_ids=tuple(turn.token_ids) if turn.token_ids is not None else None,
                logprobs=tuple(turn.logprobs) if turn.logprobs is not None else None,
            )
        )
        writer.write(ChatMessage(role="assistant", content=raw))
        if action is None:
            writer.write(ChatMessage(role="user", content="Invalid action: reply with JSON."))
            continue
        if turn.done is not None:
            continue
        assert turn.cmd is not None
        writer.write(
            PolicyVerdict(
                turn=n,
                command=turn.cmd,
                decision=turn.policy,
                reasons=() if turn.policy == "allow" else (f"{turn.policy}: scripted",),
                segments=(
                    PolicySegment(
                        argv=tuple(turn.cmd.split()),
                        program=turn.cmd.partition(" ")[0],
                        decision=turn.policy,
                        key=turn.cmd,
                    ),
                ),
            )
        )
        if turn.policy == "deny":
            writer.write(ChatMessage(role="user", content="Denied by policy."))
            continue
        command = turn.cmd
        if turn.policy == "ask":
            decision = turn.approval or "approve"
            writer.write(
                ApprovalRecord(
                    turn=n,
                    command=turn.cmd,
                    decision=decision,
                    edited_command=turn.edited,
                    reason=turn.reason,
                )
            )
            if decision == "refuse":
                note = f"The user refused this command: {turn.reason or 'no reason given'}"
                writer.write(ChatMessage(role="user", content=note))
                continue
            if decision == "quit":
                break
            if decision == "edit":
                assert turn.edited is not None
                command = turn.edited
        output, code = run_in_shell(command, cwd, env)
        writer.write(
            Execution(turn=n, command=command, output=output, exit_code=code, duration_s=0.01)
        )
        writer.write(ChatMessage(role="user", content=f"exit code {code}\n{output}"))
    success: bool | None = confirmed if end_reason == "finished" else None
    if check is not None:
        output, code = run_in_shell(check, cwd, env)
        success = code == 0
        writer.write(Check(command=check, exit_code=code, success=success, output=output))
    writer.write(End(reason=end_reason, summary="scripted", turns=n, success=success))
    writer.close()


Player = Callable[..., Path]
