"""One client's task: the agent loop in its own thread, with its own sandbox and transcript.

``run_task`` blocks, so it runs in a worker thread. Everything it reports (events, live
output, approval requests) is turned into protocol lines and handed to ``emit``, which
the server makes thread-safe. An approval request blocks the worker until the client
answers (``answer``) or the task is cancelled (``cancel``: the client pressed Ctrl-C or
went away). Cancelling stops the running command, makes the loop end with ``cancelled``
in the transcript, and the sandbox is torn down when the thread finishes.

The daemon runs exactly the bytes it asked about: an approval must echo the command it
approves, and a mismatch is refused rather than guessed at.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shellagent import protocol
from shellagent.errors import ShellagentError

if TYPE_CHECKING:
    from shellagent.agent import Approval, ApprovalRequest, Approver
    from shellagent.daemon.messages import ApprovalReply, Ask
    from shellagent.daemon.model_pool import ModelPool
    from shellagent.sandbox import Session

log = logging.getLogger("shellagent.daemon")

OUTPUT_CAP_BYTES = 256 * 1024  # live output streamed per command; the rest is summarised
FORCE_CLOSE_AFTER_S = 3.0  # after a cancel, tear the sandbox down if the loop has not ended

Emit = Callable[[bytes], None]


@dataclass
class _Pending:
    id: int
    command: str
    answered: threading.Event = field(default_factory=threading.Event)
    reply: ApprovalReply | None = None


class TaskWorker:
    """Runs one ``ask`` request to its end; safe to ``cancel`` or ``answer`` from any thread."""

    def __init__(self, request: Ask, *, pool: ModelPool, emit: Emit, client_pid: int) -> None:
        self.request = request
        self.pool = pool
        self.emit = emit
        self.client_pid = client_pid
        self.started = time.time()
        self.session_id = ""
        self.state = "starting"
        self.cancelled = threading.Event()
        self.ended = False  # the loop returned: nothing left to cancel
        self._shell: Session | None = None
        self._lock = threading.Lock()
        self._pending: _Pending | None = None
        self._next_id = 0
        self._why: dict[int, str] = {}
        self._streamed = 0
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

    def answer(self, reply: ApprovalReply) -> str | None:
        """Deliver the client's answer; an error message if it answers nothing pending."""
        with self._lock:
            pending = self._pending
            if pending is None or pending.id != reply.id:
                return f"no approval request {reply.id} is waiting for an answer"
            if reply.command != pending.command:
                return "the approved command differs from the one asked about: not run"
            if reply.decision == "edit" and not (reply.edited or "").strip():
                return "an edit needs the edited command"
            if reply.decision == "always" and reply.scope is None:
                return "'always' needs a scope: session, directory or everywhere"
            pending.reply = reply
            self._pending = None
        pending.answered.set()
        return None

    def describe(self) -> dict[str, Any]:
        return {
            "session": self.session_id,
            "task": self.request.task[:80],
            "state": self.state,
            "running_s": round(time.time() - self.started, 1),
            "client_pid": self.client_pid,
        }

    # -- the worker thread -------------------------------------------------------------

    def _send(self, kind: str, **fields: Any) -> None:
        try:
            self.emit(protocol.encode(kind, **fields))
        except protocol.ProtocolError:
            self.emit(protocol.error(protocol.TOO_LONG, f"{kind} event too large to send"))

    def _main(self) -> None:
        try:
            self._run()
        except ShellagentError as exc:
            log.info("task %s failed: %s", self.session_id, exc.message)
            self._send(
                "error",
                code=protocol.FAILED,
                message=exc.text(),
                fatal=True,
                exit_code=exc.exit_code,
            )
        except Exception as exc:  # the daemon keeps serving; the client hears why
            log.exception("task %s crashed", self.session_id)
            self._send("error", code=protocol.FAILED, message=f"internal error: {exc}", fatal=True)
        finally:
            self.state = "done"
            shell, self._shell = self._shell, None
            if shell is not None:
                shell.close()

    def _run(self) -> None:
        from shellagent.agent import AgentConfig, AutoApprover, RefuseApprover, run_task
        from shellagent.policy import PolicyEngine
        from shellagent.sandbox import Session, get_profile
        from shellagent.transcript import Redactor, TranscriptWriter, new_session_id

        req = self.request
        cwd = Path(req.cwd)
        if not cwd.is_absolute() or not cwd.is_dir():
            raise ShellagentError(f"working directory {req.cwd} does not exist")
        self.session_id = new_session_id()
        config = AgentConfig(dry_run=req.dry_run, max_turns=req.max_turns or 15)
        backend = self.pool.backend_for(
            req.model,
            req.task,
            cancel=self.cancelled,
            on_wait=lambda n: self._send("queued", position=n),
            on_generate=self._thinking,
        )
        policy = PolicyEngine.load(workspace=cwd)
        self.state = "starting sandbox"
        self._shell = Session(get_profile("default", cwd=cwd), timeout=config.command_timeout)
        sink = TranscriptWriter(self.session_id, redactor=Redactor.from_environment())
        approver: Approver = self._ask_client
        if req.yes:
            approver = AutoApprover()
        elif not req.interactive:
            approver = RefuseApprover(
                "nobody can answer: ask is not attached to a terminal (rerun with -y to approve)"
            )
        self._send("accepted", session=self.session_id, model=backend.name)
        log.info("task %s started for pid %d", self.session_id, self.client_pid)
        self.state = "running"
        try:
            outcome = run_task(
                req.task,
                backend=backend,
                shell=self._shell,
                policy=policy,
                approver=approver,
                sink=sink,
                config=config,
                cancel=self.cancelled,
                on_event=self._on_event,
                on_output=self._on_output,
                source="ask",
                model_name=backend.name,
                task_id=None,
            )
        finally:
            self.ended = True
            sink.close()
        log.info("task %s ended: %s", self.session_id, outcome.reason)
        self._send(
            "summary",
            reason=outcome.reason,
            summary=outcome.summary,
            turns=outcome.turns,
            session=outcome.session_id or self.session_id,
            commands=[c.command for c in outcome.commands],
            exit_codes=[c.exit_code for c in outcome.commands],
            error=outcome.error,
            exit_code=outcome.exit_code,
            transcript=str(sink.path),
        )

    def _thinking(self) -> None:
        self.state = "thinking"
        self._send("thinking", turn=len(self._why) + 1)

    def _on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        turn = int(event.get("turn") or 0)
        if kind == "model_turn":
            action = event.get("action") or {}
            if isinstance(action, dict) and "cmd" in action:
                self._why[turn] = str(action.get("why", ""))
            else:
                self._why.setdefault(turn, "")
            if event.get("valid") is False:
                raw = str(event.get("raw", ""))
                self._send("invalid", turn=turn, stop=event.get("stop", "end"), raw=raw[:200])
        elif kind == "policy":
            self.state = "proposed"
            self._send(
                "proposed",
                turn=turn,
                command=event.get("command", ""),
                why=self._why.get(turn, ""),
                decision=event.get("decision", ""),
                reasons=list(event.get("reasons") or []),
            )
        elif kind == "approval":
            self._send(
                "approval",
                turn=turn,
                command=event.get("command", ""),
                decision=event.get("decision", ""),
                edited=event.get("edited_command"),
                reason=event.get("reason"),
                scope=event.get("scope"),
            )
        elif kind == "execution":
            self.state = "running"
            self._streamed = 0
            self._send(
                "result",
                turn=turn,
                command=event.get("command", ""),
                exit_code=event.get("exit_code"),
                duration_s=event.get("duration_s"),
                timed_out=bool(event.get("timed_out")),
                truncated=bool(event.get("truncated")),
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
        self._send("output", data=text)

    def _ask_client(self, request: ApprovalRequest) -> Approval:
        from shellagent.agent import Approval

        if self.cancelled.is_set():
            return Approval("quit", reason="cancelled")
        with self._lock:
            self._next_id += 1
            pending = _Pending(self._next_id, request.command)
            self._pending = pending
        self.state = "waiting for approval"
        self._send(
            "approval_request",
            id=pending.id,
            turn=request.turn,
            command=request.command,
            why=request.why,
            decision=request.decision.decision,
            reasons=list(request.decision.reasons),
        )
        while not pending.answered.wait(0.1):
            if self.cancelled.is_set():
                with self._lock:
                    self._pending = None
                return Approval("quit", reason="cancelled")
        reply = pending.reply
        assert reply is not None
        if reply.decision == "edit":
            return Approval("edit", command=reply.edited, reason=reply.reason)
        if reply.decision == "always":
            return Approval("always", reason=reply.reason, scope=reply.scope)
        return Approval(reply.decision, reason=reply.reason)
