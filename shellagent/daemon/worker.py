"""One client's task: the agent loop in its own thread, with its own sandbox and transcript.

``Agent.run`` blocks, so it runs in a worker thread. Everything it reports (events, live
output, approval requests) is turned into wire events and handed to ``emit``, which the
server encodes and makes thread-safe. What ``ask`` adds to a bare session (the change-set
review, "did that do it?", the user's history, the shell state a follow-up starts from) are
the front door's hooks (``agent.parts.Hooks``); the daemon passes its own, which ask the
client. An approval request blocks the worker until the client answers (``answer``) or
the task is cancelled (``cancel``: the client pressed Ctrl-C or went away). Cancelling
stops the running command, makes the loop end with ``cancelled`` in the transcript, and
the sandbox is torn down when the thread finishes.

The daemon runs exactly the bytes it asked about: an approval must echo the command it
approves, and a mismatch is refused rather than guessed at.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from shellagent import protocol
from shellagent.daemon.followup import continuing, shell_states
from shellagent.daemon.questions import Questions
from shellagent.errors import InputError, InternalError, ShellagentError
from shellagent.events import (
    Accepted,
    ApprovalNeeded,
    ApprovalRecord,
    ApprovalReply,
    Ask,
    ChangesDecision,
    ChangesDone,
    ChangesOutcome,
    ChangesReady,
    ChangesReply,
    ChoiceReply,
    ChoiceRequest,
    CommandOrigin,
    ConfirmReply,
    ConfirmRequest,
    Decided,
    End,
    EndReason,
    Execution,
    Failure,
    InvalidReply,
    JobInstalled,
    ModelTurn,
    Note,
    Output,
    PolicyVerdict,
    Proposed,
    Queued,
    Result,
    SessionStatus,
    Summary,
    Thinking,
    TranscriptEvent,
    WireEvent,
)

if TYPE_CHECKING:
    from shellagent.agent import Agent, Approval, ApprovalRequest, Approver, JobInstaller, Outcome
    from shellagent.agent.approval import Choice
    from shellagent.agent.followup import Earlier
    from shellagent.config import Config
    from shellagent.model.pool import ModelPool
    from shellagent.sandbox import Sandbox
    from shellagent.transaction.changeset import ChangeSet
    from shellagent.transaction.named import NamedPolicy
    from shellagent.transaction.review import Review

log = logging.getLogger("shellagent.daemon")

START_UMASK: int | None = None  # the daemon's umask before it made its own 077
OUTPUT_CAP_BYTES = 256 * 1024  # live output streamed per command; the rest is summarised
FORCE_CLOSE_AFTER_S = 3.0  # after a cancel, tear the sandbox down if the loop has not ended

Emit = Callable[[WireEvent], None]
# a model turn's ``origin`` (``recipe_step``) as the client is told who wrote the command
_ORIGINS: dict[str, CommandOrigin] = {"recipe": "recipe", "free": "model"}


class TaskWorker:
    """Runs one ``ask`` request to its end; safe to ``cancel`` or ``answer`` from any thread."""

    def __init__(
        self,
        request: Ask,
        *,
        pool: ModelPool,
        emit: Emit,
        client_pid: int,
        job_installer: JobInstaller | None = None,
    ) -> None:
        self.request = request
        self.pool = pool
        self.job_installer = job_installer
        self.emit = emit
        self.client_pid = client_pid
        self.started = time.time()
        self.session_id = ""
        self.state = "starting"
        self.cancelled = threading.Event()
        self.ended = False  # the loop returned: nothing left to cancel
        self._shell: Sandbox | None = None
        self._review: Review | None = None
        self._questions = Questions(self.cancelled)
        self._why: dict[int, str] = {}
        self._writer: dict[int, CommandOrigin | None] = {}  # who wrote each turn's command
        self._edited: tuple[int, str] | None = None  # (turn, command) the user typed
        self._streamed = 0
        self._seed: bytes | None = None  # the shell state a follow-up starts from
        self._told_trimmed = False  # the user heard the conversation was cut to fit
        self._told_no_scheduler = False
        self._refused: list[str] = []  # commands the user refused in this task
        self._unsure = False  # the loop ended without claiming a recipe's result
        self._origin = ""  # who wrote the last command: "recipe" or "free"
        self._edits: list[str] = []  # commands the user wrote at an approval prompt
        self._written: list[str] = []  # ... that then ran and worked
        self._learned = False  # what they wrote was learned: no other note about keeping it
        self._thread = threading.Thread(target=self._main, name="task", daemon=True)

    # -- control, from the server's thread ---------------------------------------------

    def start(self) -> None:
        self._thread.start()

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def cancel(self) -> None:
        """Stop the task: the command is killed and the loop ends as ``cancelled``."""
        if self.cancelled.is_set() or self.ended:
            return
        self.cancelled.set()
        log.info("task %s cancelled", self.session_id or "(starting)")
        shell = self._shell
        if shell is not None:
            shell.interrupt()
        timer = threading.Timer(FORCE_CLOSE_AFTER_S, self._force_close)
        timer.daemon = True
        timer.start()

    def _force_close(self) -> None:
        shell = self._shell
        if shell is not None and not self.done:
            log.warning("task %s did not stop: closing its sandbox", self.session_id)
            shell.close()

    def answer(
        self, reply: ApprovalReply | ChangesReply | ChoiceReply | ConfirmReply
    ) -> str | None:
        """Deliver the client's answer; an error message if it answers nothing pending."""
        return self._questions.answer(reply)

    def describe(self) -> SessionStatus:
        return SessionStatus(
            session=self.session_id,
            task=self.request.task[:80],
            state=self.state,
            running_s=round(time.time() - self.started, 1),
            client_pid=self.client_pid,
        )

    # -- the worker thread -------------------------------------------------------------

    def _send(self, event: WireEvent) -> None:
        self.emit(event)

    def _main(self) -> None:
        try:
            self._run()
        except ShellagentError as exc:
            log.info("task %s failed: %s", self.session_id, exc.message)
            self._send(
                Failure(
                    code=protocol.FAILED, message=exc.text(), fatal=True, exit_code=exc.exit_code
                )
            )
        except Exception as exc:  # the daemon keeps serving; the client hears why
            from shellagent.daemon.logs import log_path

            log.exception("task %s crashed", self.session_id)
            crash = InternalError(
                f"internal error: {type(exc).__name__}: {exc}",
                hint=f"a bug in shellagent; the daemon's log says where: {log_path()}",
            )
            self._send(
                Failure(
                    code=protocol.FAILED,
                    message=crash.text(),
                    fatal=True,
                    exit_code=crash.exit_code,
                )
            )
        finally:
            self.state = "done"
            shell, self._shell = self._shell, None
            if shell is not None:
                shell.close()

    def _run(self) -> None:
        from shellagent import config as settings_file
        from shellagent.agent import Agent, AgentConfig, AutoApprover, RefuseApprover
        from shellagent.agent.parts import Hooks
        from shellagent.transcript import new_session_id

        req = self.request
        cwd = Path(req.cwd)
        if not cwd.is_absolute() or not cwd.is_dir():
            raise InputError(
                f"working directory {req.cwd} does not exist", hint="ask from a directory that does"
            )
        settings = settings_file.load()  # a broken config.toml fails here, file:line named
        self.session_id = new_session_id()
        # A key binding's proposal is a pure dry run: nothing runs, not even on a copy.
        review = settings.ask.review != "commands" and not req.propose
        config = AgentConfig(
            # On overlays a dry run really runs the commands, and nothing is applied.
            dry_run=(req.dry_run or req.propose) and not review,
            max_turns=req.max_turns or settings.ask.max_turns,
            propose_only=req.propose,
        )
        backend = self.pool.backend_for(
            req.model,
            req.task,
            cancel=self.cancelled,
            on_wait=lambda n: self._send(Queued(position=n)),
            on_generate=self._thinking,
        )
        approver: Approver = self._ask_client
        if req.yes:
            approver = AutoApprover()
        elif not req.interactive:
            approver = RefuseApprover(
                "nobody can answer: ask is not attached to a terminal (rerun with -y to approve)"
            )
        from shellagent.daemon.explicit import ExplicitApprover

        approver = ExplicitApprover(approver)  # a named protected place wants a person
        named, policy = self._named(req.task, cwd) if review else ((), None)
        from shellagent.agent.examples import default_library
        from shellagent.agent.recipe_step import book_for, indexing

        book = book_for(settings.ask.recipes)
        if book is not None and req.pick:
            book = dataclasses.replace(book, pick=req.pick)  # the user's pick runs first
        installer = self.job_installer
        if req.dry_run and installer is not None:
            from shellagent.agent.proposal import NoJobs

            installer = NoJobs("a dry run installs nothing")
        agent = Agent(
            backend,
            cwd=cwd,
            approver=approver,
            config=config,
            job_installer=installer,
            source="propose" if req.propose else "ask",
            examples=default_library(),
            recipes=book,  # every model fills recipes first, unless ask.recipes = off
            # a person at a terminal may pick another recipe when a result is unsure
            chooser=self._choose if req.interactive and not req.yes else None,
            policy=policy,
        )
        _ = agent.policy  # a policy that cannot be read fails the task before a sandbox starts
        earlier = self._earlier()
        states = shell_states()
        if earlier is not None:
            self._seed = states.get(earlier.session)
        umask = req.umask if req.umask is not None else START_UMASK
        if umask is not None:
            agent.profile = dataclasses.replace(agent.profile, umask=umask)
        self.state = "starting sandbox"
        note = self._open_sandbox(agent, earlier, named) if review else None
        if policy is not None and self._review is not None:
            policy.named = named  # on a copy: a named place may be asked about
        if self._shell is None:
            self._shell = agent.open_shell(state=self._seed)
        elif settings.ask.review == "changes" and not req.yes:
            from shellagent.agent.approval import ChangesApprover

            agent.approver = ChangesApprover(agent.approver)
        sink = agent.open_transcript(self.session_id)
        self._send(
            Accepted(session=self.session_id, model=backend.name, overlay=bool(self._review))
        )
        from shellagent.transaction.review import interrupted_note

        seeded = self._seed is not None
        unindexed = (
            "the recipes are being indexed (after an install or a new recipe; about a minute): "
            "this task goes without them, so the model writes its own commands"
            if book is None and indexing(settings.ask.recipes)
            else None
        )
        for line in (
            continuing(earlier, self._review, seeded),
            note,
            interrupted_note(),
            unindexed,
            self._recurring_note(),
        ):
            if line:
                self._send(Note(message=line))
        log.info("task %s started for pid %d", self.session_id, self.client_pid)
        self.state = "running"
        asked = (
            req.interactive
            and req.confirm
            and not req.yes
            and not req.dry_run  # nothing of a dry run reached the files: nothing to confirm
            and settings.ask.confirm
        )
        hooks = Hooks(
            cancel=self.cancelled,
            on_event=self._on_event,
            on_output=self._on_output,
            review=self._review,
            confirm=self._confirm if asked else None,
            history=self._remember if settings.ask.history else None,
            shell_states=states,
            check_summary=True,
        )
        try:
            outcome = agent.run(
                req.task, shell=self._shell, sink=sink, hooks=hooks, earlier=earlier
            )
        finally:
            self.ended = True
            sink.close()
        from shellagent.daemon.outcome import exit_status, verdict

        success = outcome.success
        said = verdict(outcome, dry_run=req.dry_run)
        log.info("task %s ended: %s", self.session_id, outcome.reason)
        if success and settings.ask.learn and not outcome.unsupported:
            self._learn(agent, outcome)
        self._send(
            Summary(
                reason=outcome.reason,
                summary=outcome.summary,
                turns=outcome.turns,
                session=outcome.session_id or self.session_id,
                commands=tuple(c.command for c in outcome.commands),
                exit_codes=tuple(c.exit_code for c in outcome.commands),
                error=outcome.error,
                exit_code=exit_status(outcome, said, refused=len(self._refused)),
                transcript=str(sink.path),
                verdict=said,
                cwd=outcome.cwd,
                unsupported=outcome.unsupported,
                advice=self._advice(outcome, success, settings, backend.name),
                claimed=outcome.claimed,
                ran=outcome.ran,
                doubts=outcome.doubts,
                alternatives=outcome.alternatives,
                origin=outcome.origin,
            )
        )

    def _advice(self, outcome: Outcome, success: bool | None, settings: Config, model: str) -> str:
        """The line for a task the local model could not do (``daemon/advice.py``), or, for
        one the user confirmed whose commands the model wrote, how to keep it as a recipe."""
        from shellagent.agent.support import succeeded
        from shellagent.daemon.advice import advice

        if self.request.propose or outcome.environment_problem or outcome.reason == "cancelled":
            return ""
        if success and outcome.commands and not outcome.origin.startswith("recipe"):
            if not settings.ask.offer_recipes or self._learned:
                return ""
            session = outcome.session_id or self.session_id
            return (
                f"it worked: keep it as a recipe of your own with `shellagent recipes add "
                f"--from {session}` (ask.offer_recipes = false stops this note)"
            )
        failed = [c.command for c in outcome.commands if not succeeded(c.command, c.exit_code)]
        candidates = self._refused or failed or [c.command for c in outcome.commands]
        command = candidates[-1] if candidates else None
        try:
            return advice(
                reason=outcome.reason,
                success=success,
                refused_out=bool(self._refused) and outcome.reason != "finished",
                command=command,
                larger=settings.ask.larger_model,
                current=model,
            )
        except OSError as exc:  # the state dir: the note is not worth failing the task
            log.warning("task %s: no advice: %s", self.session_id, exc)
            return ""

    def _learn(self, agent: Agent, outcome: Outcome) -> None:
        """A session the user confirmed in which they wrote the commands that did it, or
        picked the alternative that did: learned at once (``agent/learning.py``), and one
        line says so. What they wrote themselves comes first: it is the last word."""
        from shellagent.agent.learning import kind_of, learn_commands, learn_pick

        if not self._written and outcome.picked is None:
            return
        try:
            if self._written:
                kind = kind_of(self._written, agent.policy, Path(self.request.cwd))
                learned = learn_commands(self.request.task, self._written, kind=kind)
            else:
                assert outcome.picked is not None
                recipe, args = outcome.picked
                learned = learn_pick(self.request.task, recipe, dict(args))
        except ShellagentError as exc:
            self._send(Note(message=f"not learned: {exc.message}"))
            return
        except OSError as exc:  # the config dir: not worth failing the task over
            log.warning("task %s: not learned: %s", self.session_id, exc)
            return
        log.info("task %s: learned %s", self.session_id, learned.name)
        self._learned = True
        self._send(Note(message=learned.line()))

    # -- the change-set review ---------------------------------------------------------

    def _earlier(self) -> Earlier | None:
        """What a follow-up carries over (``Ask.continues``); None for a new conversation."""
        ident = self.request.continues
        if not ident:
            return None
        from shellagent.agent.followup import last_session, load_earlier

        return load_earlier(last_session() if ident == "last" else ident)

    def _named(self, task: str, cwd: Path) -> tuple[tuple[Path, ...], NamedPolicy | None]:
        """The protected places ``task`` names, and the policy that may ask about them
        (``transaction/named.py``); none: the default policy, loaded by the agent."""
        from shellagent.policy import PolicyEngine
        from shellagent.transaction.named import NamedPolicy, named_places

        named = named_places(task, cwd)
        if not named:
            return (), None
        return named, NamedPolicy(PolicyEngine.load(workspace=cwd))

    def _open_sandbox(
        self, agent: Agent, earlier: Earlier | None = None, named: tuple[Path, ...] = ()
    ) -> str | None:
        """Start the session's sandbox on overlays (a follow-up goes on with the changes its
        session kept; ``named`` places stay writable on the copy); the note to show when
        it cannot."""
        from shellagent.transaction.review import open_reviewed

        kept = earlier is not None and earlier.changes == "kept"
        opened = open_reviewed(
            self.session_id,
            agent.profile,
            lambda profile: agent.open_shell(state=self._seed, profile=profile),
            resume=earlier.session if earlier is not None and kept else None,
            named=named,
        )
        if not isinstance(opened, str):
            self._shell, self._review = opened
            self._review.decide = self._decide_changes
            self._review.on_done = self._changes_done
            self._review.dry_run = self.request.dry_run
            return None
        log.info("task %s: no overlays: %s", self.session_id, opened)
        return (
            f"your files cannot be seen through a copy here ({opened}); approved commands "
            "write straight into the working directory (`shellagent doctor` tells more)"
        )

    def _changes_so_far(self) -> None:
        review = self._review
        if review is None:
            return
        try:
            changes = review.changes()
        except OSError as exc:
            log.warning("task %s: change set unreadable: %s", self.session_id, exc)
            return
        if changes:
            self._send(
                ChangesReady(
                    session=self.session_id,
                    summary=changes.summary(),
                    lines=(),
                    total=len(changes.changes),
                    deleted=changes.count("deleted"),
                )
            )
        problem = review.space_problem(changes)
        if problem:  # the upper layers are on the host's disk: stop before it fills up
            self._send(Note(message=problem))
            self.cancel()

    def _decide_changes(self, changes: ChangeSet, reason: EndReason) -> ChangesDecision | None:
        """Show the change set; the client's choice when someone can answer (the review's
        ``decide``): apply, discard or keep. A dry run is shown and never applied."""
        from shellagent.transaction.review import diff_text

        req = self.request
        decision: ChangesDecision | None = None
        choices: tuple[ChangesDecision, ...] = ()
        if req.dry_run:  # shown, never applied (the review discards it)
            pass
        elif req.yes and req.apply and self._unsure:
            # -y applies what is done, never what is unsure: kept for the user to look at
            decision = "keep"
            self._send(
                Note(
                    message="not applied: not sure this is what you asked; look at it with "
                    f"`shellagent apply {self.session_id} --diff`"
                )
            )
        elif req.yes:
            decision = "apply" if req.apply else "keep"
        elif req.interactive and reason != "cancelled" and not self.cancelled.is_set():
            choices = ("apply", "discard", "keep")
        pending = self._questions.open("changes", waiting=bool(choices))
        self._send(
            ChangesReady(
                session=self.session_id,
                summary=changes.summary(),
                lines=tuple(changes.render()),
                total=len(changes.changes),
                deleted=changes.count("deleted"),
                diff=diff_text(changes),
                id=pending.id if choices else None,
                choices=choices,
            )
        )
        if choices:
            reply = self._questions.wait(pending)  # None: cancelled meanwhile: kept
            answer = reply.decision if isinstance(reply, ChangesReply) else None
            decision = (
                "apply" if answer == "apply" else "discard" if answer == "discard" else "keep"
            )
        return decision

    def _changes_done(self, outcome: ChangesOutcome, message: str, applied: int) -> None:
        self._send(ChangesDone(outcome=outcome, message=message, applied=applied))

    def _confirm(self, outcome: Outcome, problems: tuple[str, ...]) -> bool | None:
        """Ask the client "Did that do it?" (``Hooks.confirm``): True, False or None."""
        pending = self._questions.open("confirm")
        self.state = "waiting for confirmation"
        self._send(
            ConfirmRequest(
                id=pending.id,
                summary=outcome.summary,
                unsupported=problems,
                alternatives=outcome.alternatives,
            )
        )
        reply = self._questions.wait(pending)
        answer = reply.answer if isinstance(reply, ConfirmReply) else "skip"
        return {"yes": True, "no": False}.get(answer)

    def _choose(self, choice: Choice) -> int:
        """Ask the client which alternative to run instead (``Oversight.chooser``): 0 keeps
        what there is (also when the task is cancelled meanwhile)."""
        pending = self._questions.open("choice")
        self.state = "waiting for a choice"
        self._send(
            ChoiceRequest(
                id=pending.id,
                ran=choice.ran,
                doubts=choice.doubts,
                alternatives=choice.alternatives,
                answer=choice.answer,
            )
        )
        reply = self._questions.wait(pending)
        return reply.pick if isinstance(reply, ChoiceReply) else 0

    def _remember(self, task: str, outcome: Outcome) -> None:
        """A confirmed session joins the user's worked examples (``agent/history.py``)."""
        from shellagent.agent.examples import remember

        remember(task, outcome)

    def _thinking(self) -> None:
        self.state = "thinking"
        self._send(Thinking(turn=len(self._why) + 1))

    def _on_event(self, event: TranscriptEvent) -> None:
        """The loop's transcript events, turned into what the client is shown."""
        if isinstance(event, End):  # the loop is over: nothing left to cancel
            self.ended = True
            # a recipe's result the step did not claim (the model's own commands are never
            # claimed: their change set is the user's to judge, as before)
            self._unsure = (
                event.reason == "finished" and event.claimed is False and self._origin == "recipe"
            )
            if self._review is not None:
                self.state = "reviewing changes"
        elif isinstance(event, ModelTurn):
            if event.context_trims and not self._told_trimmed:
                self._told_trimmed = True  # once: later cuts go further the same way
                self._send(
                    Note(
                        message="the conversation no longer fits the model's context: it now "
                        "sees the oldest command output shortened (the transcript keeps it all)",
                    )
                )
            action = event.action or {}
            self._origin = action.get("origin", self._origin)
            if "every" in action:
                self._no_scheduler_note()
            if "cmd" in action:
                self._why[event.turn] = action.get("why", "")
                # "free": no recipe did it, the model wrote it; no origin: no recipes here
                self._writer[event.turn] = _ORIGINS.get(action.get("origin", ""))
            elif "use" in action:  # a recipe the model called as a tool: the recipe's command
                self._why[event.turn] = f"recipe {action['use']} (the model's call)"
                self._writer[event.turn] = "recipe"
            else:
                self._why.setdefault(event.turn, "")
            if event.valid is False:
                self._send(
                    InvalidReply(turn=event.turn, stop=event.stop or "end", raw=event.raw[:200])
                )
        elif isinstance(event, PolicyVerdict):
            self.state = "proposed"
            # the policy's verdict on the user's edit: theirs, not the model's reason
            typed = self._edited == (event.turn, event.command)
            self._send(
                Proposed(
                    turn=event.turn,
                    command=event.command,
                    why="" if typed else self._why.get(event.turn, ""),
                    decision=event.decision,
                    reasons=event.reasons,
                    origin="user" if typed else self._writer.get(event.turn),
                )
            )
        elif isinstance(event, ApprovalRecord):
            if event.decision in ("refuse", "quit"):  # what the user would not let run
                self._refused.append(event.command)
            if event.decision == "edit" and event.edited_command:
                self._edited = (event.turn, event.edited_command)
                self._edits.append(event.edited_command)
            self._send(
                Decided(
                    turn=event.turn,
                    command=event.command,
                    decision=event.decision,
                    edited=event.edited_command,
                    reason=event.reason,
                    scope=event.scope,
                )
            )
        elif isinstance(event, JobInstalled):  # said as it happens, whatever the change set
            cron = any(w.startswith("crontab:") for w in event.installed)
            where = "a line in your crontab" if cron else "a systemd user timer"
            self._send(
                Note(
                    message=f"installed job {event.job_id}, {event.schedule}, as {where}; "
                    f"`shellagent jobs rm {event.job_id}` removes it"
                )
            )
        elif isinstance(event, Execution):
            self.state = "running"
            self._streamed = 0
            if event.command in self._edits and not event.timed_out and not event.refused:
                from shellagent.agent.support import succeeded

                if succeeded(event.command, event.exit_code) and event.command not in self._written:
                    self._written.append(event.command)
            self._send(
                Result(
                    turn=event.turn,
                    command=event.command,
                    exit_code=event.exit_code,
                    duration_s=event.duration_s,
                    timed_out=event.timed_out,
                    truncated=event.truncated,
                    confined=event.confined,
                    refused=event.refused,
                )
            )
            if not event.confined:
                self._changes_so_far()

    def _recurring_note(self) -> str | None:
        """For a recurring request, said before anything is asked: that no job can be
        installed here and why (no scheduler, with the fix; ``-y``; a dry run), or what
        will happen (run once on the copy, then the job to approve)."""
        from shellagent.recipes.recurrence import split_recurrence

        req = self.request
        found = split_recurrence(req.task)
        if found is None or self.job_installer is None or req.propose:
            return None
        what, when = found
        self._told_no_scheduler = True
        problem = getattr(self.job_installer, "problem", lambda: None)()
        if problem:
            return (
                f"this task asks for a recurring job, which cannot run here: {problem}; "
                "it is done once now and not scheduled"
            )
        if when.schedule is None:
            return f"{when.problem}: it is done once now and not scheduled"
        if req.yes:
            return (
                "a recurring job is installed only with your own yes, never with -y: "
                "it is done once now and not scheduled"
            )
        if req.dry_run:
            return "a dry run: the recurring job is run once on a copy and not scheduled"
        return (
            f"a recurring job, {when.schedule.words()}: it runs once now"
            + (" on the copy" if self._review is not None else "")
            + ", so you see what it makes, then you are asked whether to install it"
        )

    def _no_scheduler_note(self) -> None:
        """The model asks for a recurring job: if none can run here, the user hears it now,
        with the fix (once per task)."""
        if self._told_no_scheduler or self.job_installer is None:
            return
        self._told_no_scheduler = True
        problem = getattr(self.job_installer, "problem", lambda: None)()
        if problem:
            self._send(
                Note(
                    message=f"this task asks for a recurring job, which cannot run here: {problem}",
                )
            )

    def _on_output(self, text: str) -> None:
        self.state = "running command"
        if self._streamed >= OUTPUT_CAP_BYTES:
            return
        size = len(text.encode(errors="replace"))
        if self._streamed + size > OUTPUT_CAP_BYTES:
            text = text[: OUTPUT_CAP_BYTES - self._streamed]
            text += "\n[live output capped; the model sees head and tail]\n"
        self._streamed += size
        self._send(Output(data=text))

    def _ask_client(self, request: ApprovalRequest) -> Approval:
        from shellagent.agent import Approval
        from shellagent.transaction.named import named_in

        if self.cancelled.is_set():
            return Approval("quit", reason="cancelled")
        pending = self._questions.open("approval", request.command)
        self.state = "waiting for approval"
        self._send(
            ApprovalNeeded(
                id=pending.id,
                turn=request.turn,
                command=request.command,
                why=request.why,
                decision=request.evaluation.decision.word,
                reasons=request.evaluation.reasons,
                carried=tuple(f"{n}={v}" for n, v in request.evaluation.carried),
                named=named_in(request.evaluation),
                job=request.job is not None,
            )
        )
        reply = self._questions.wait(pending)
        if not isinstance(reply, ApprovalReply):  # cancelled meanwhile
            return Approval("quit", reason="cancelled")
        if reply.decision == "edit":
            return Approval("edit", command=reply.edited, reason=reply.reason)
        if reply.decision == "always":
            return Approval("always", reason=reply.reason, scope=reply.scope)
        return Approval(reply.decision, reason=reply.reason)
