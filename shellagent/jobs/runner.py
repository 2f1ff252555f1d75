"""``shellagent jobs run``: replay exactly the approved commands, deciding nothing new.

No model is called. The job must still match what the user approved (its keyed seal), every
command is checked against the current policy before anything runs (a command the policy
now denies fails the whole run, loudly), and the commands run in order in a sandbox with
the job's own grants, stopping at the first failure. Each run writes a transcript and a
line of run history; a failure also raises a desktop notification where ``notify-send``
exists.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from shellagent import __version__
from shellagent.events import ApprovalRecord, End, Execution, SessionStart
from shellagent.jobs import store
from shellagent.jobs.store import Job


@dataclass
class RunResult:
    job_id: str
    success: bool
    reason: str
    transcript: str
    exit_codes: list[int] = field(default_factory=list)
    duration_s: float = 0.0
    # ``preview``: what the run would change (the rendered change set), nothing applied
    changes: list[str] = field(default_factory=list)


def _refusal(job: Job) -> str | None:
    """Why this job may not run at all, or None."""
    from shellagent.policy import PolicyEngine, ShellState

    unapproved = job.unapproved()
    if unapproved:
        return unapproved
    workdir = Path(job.workdir)
    engine = PolicyEngine.load(workspace=workdir, writable=[Path(w) for w in job.writable])
    for command in job.commands:
        decision = engine.check(command, ShellState(cwd=workdir))
        if decision.decision == "deny":
            return f"the policy now denies `{command}`: {'; '.join(decision.reasons)}"
    return None


def run_job(job: Job, *, preview: bool = False) -> RunResult:
    """Run ``job``. With ``preview`` its write grants are overlays instead: the commands
    run for real on a copy, ``changes`` says what they would change, and nothing lands
    (the run is not recorded in the job's history)."""
    from shellagent.agent import Agent
    from shellagent.sandbox import get_profile
    from shellagent.transaction import Workspace, compute

    start = time.monotonic()
    agent = Agent(cwd=job.workdir, source="job")  # no model: the commands are replayed
    writer = agent.open_transcript()
    writer.write(
        SessionStart(
            session=writer.session_id,
            task=f"job {job.name}: {job.schedule.schedule().words()}",
            source="job",
            task_id=job.id,
            profile=job.profile,
            cwd=job.workdir,
            versions={"shellagent": __version__},
        )
    )
    result = RunResult(job.id, False, "", writer.session_id)
    workspace: Workspace | None = None
    try:
        refusal = _refusal(job)
        if refusal:
            result.reason = refusal
            return result
        import dataclasses

        if not preview:
            for folder in job.writable:
                _make_grant(Path(folder))
        workdir = Path(job.workdir)
        agent.profile = get_profile("default", cwd=workdir).with_options(
            writable=[Path(w) for w in job.writable], network=job.network
        )
        # A workdir the job may not write (the home directory) is bound read-only over
        # the grants inside it ("~/Backups" of a job made in ~): the sandbox starts at /
        # and the shell goes there before the first command instead.
        enter = agent.profile.workdir not in agent.profile.writable
        if enter:
            agent.profile = dataclasses.replace(agent.profile, workdir=None)
        if preview:
            import uuid

            grants = [p for p in agent.profile.writable if p.is_dir()]
            workspace = Workspace.create(f"preview-{job.id}-{uuid.uuid4().hex[:6]}", grants)
            agent.profile = dataclasses.replace(
                agent.profile, writable=(), overlays=workspace.overlays()
            )
        with agent.open_shell(timeout=3600) as session:
            if enter and session.run(f"cd -- {shlex.quote(str(workdir))}").exit_code != 0:
                result.reason = f"the job's folder {workdir} cannot be entered"
                return result
            for turn, command in enumerate(job.commands, 1):
                writer.write(
                    ApprovalRecord(
                        turn=turn, command=command, decision="auto", reason="approved with the job"
                    )
                )
                ran = session.run(command)
                result.exit_codes.append(ran.exit_code)
                writer.write(
                    Execution(
                        turn=turn,
                        command=ran.command,
                        output=ran.output,
                        exit_code=ran.exit_code,
                        duration_s=ran.duration_s,
                        timed_out=ran.timed_out,
                        truncated=ran.truncated,
                        shell_restarted=ran.shell_restarted,
                        note=ran.note,
                    )
                )
                if ran.exit_code != 0:
                    result.reason = (
                        f"`{command}` exited with {ran.exit_code}: "
                        + (ran.output.strip().splitlines() or [""])[-1][:200]
                    )
                    return result
        result.success, result.reason = True, f"{len(job.commands)} commands succeeded"
        return result
    finally:
        if workspace is not None:
            result.changes = compute(workspace).render()
            workspace.remove()
        result.duration_s = round(time.monotonic() - start, 3)
        writer.write(
            End(
                reason="finished" if result.success else "error",
                summary=result.reason,
                turns=len(result.exit_codes),
                success=result.success,
            )
        )
        writer.close()
        if not preview:
            _record(job, result)


def _make_grant(path: Path) -> None:
    """A folder the job may write, made before it runs if missing (a sandbox is granted
    only a folder that exists; the job's first run made it on the session's copy, which
    the user may not have applied). Only a plain folder in the home directory is made:
    none that is hidden (``~/.config/…``) or a place that runs code later; any other must
    exist, and the run fails saying so."""
    from shellagent import protected

    home = Path.home().resolve()
    if path.exists() or home not in path.parents:
        return
    inside = path.relative_to(home).parts
    if any(part.startswith(".") for part in inside):
        return
    for place, _ in protected.expand(home):
        if path == place or place in path.parents or path in place.parents:
            return
    path.mkdir(parents=True, exist_ok=True)


def _record(job: Job, result: RunResult) -> None:
    """The run in the job's history; a failure also raises a desktop notification."""
    store.record_run(
        job.id,
        {
            "success": result.success,
            "reason": result.reason,
            "transcript": result.transcript,
            "exit_codes": result.exit_codes,
            "duration_s": result.duration_s,
        },
    )
    if not result.success:
        notify(f"shellagent job {job.name} failed", result.reason)


def notify(title: str, body: str) -> bool:
    """A desktop notification, where there is a desktop to show it on."""
    tool = shutil.which("notify-send")
    if not tool:
        return False
    try:
        return (
            subprocess.run(
                [tool, "--app-name=shellagent", title, body],
                timeout=10,
                capture_output=True,
                check=False,
            ).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
