"""One session's state and the steps every kind of turn shares: tell the model something,
ask the policy about a command, ask the user about it, and end the session.

``loop.py`` drives a session turn by turn; ``scheduling.py`` handles the schedule action.
Both use these steps, so each step writes its transcript event in one place.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from shellagent.agent.approval import (
    Approval,
    ApprovalRequest,
    Approver,
    Chooser,
    is_automatic,
)
from shellagent.errors import EnvironmentProblem, InputError, ShellagentError
from shellagent.events import (
    Alternative,
    ApprovalRecord,
    ChatMessage,
    EndReason,
    PolicySegment,
    PolicyVerdict,
    TranscriptEvent,
)

if TYPE_CHECKING:
    from shellagent.agent.config import AgentConfig
    from shellagent.agent.proposal import JobInstaller
    from shellagent.agent.tools import Tools
    from shellagent.model.backend import Backend
    from shellagent.policy import Evaluation, PolicyEngine, Segment, ShellState
    from shellagent.policy.values import Carried
    from shellagent.recipes import Recipe
    from shellagent.sandbox import CommandResult, Shell

__all__ = [
    "SessionEnd",
    "SessionState",
    "ask",
    "check",
    "in_subshell",
    "observe",
    "shell_state",
]


class SessionEnd(Exception):
    """Raised anywhere in a turn to end the session for ``reason``."""

    def __init__(
        self,
        reason: EndReason,
        summary: str,
        error: str = "",
        *,
        cause: Exception | None = None,
        plain: bool = False,
        claimed: bool | None = None,
        ran: str = "",
        doubts: tuple[str, ...] = (),
        alternatives: tuple[Alternative, ...] = (),
        scheduled: str = "",
    ) -> None:
        super().__init__(summary)
        self.reason: EndReason = reason
        self.summary = summary
        self.error = error
        self.environment_problem = isinstance(cause, EnvironmentProblem)
        # the summary already says what stopped it and what to do: kept as it is
        self.plain = plain
        # the result is presented as done, with no stated doubt (by default: it finished)
        self.claimed = reason == "finished" if claimed is None else claimed
        # when not claimed: what ran in plain words, why it may not be what was asked, and
        # the next candidates (``agent/confidence.py``)
        self.ran = ran
        self.doubts = doubts
        self.alternatives = alternatives
        # the id of the job this session installed (a recurring request, a schedule action)
        self.scheduled = scheduled


def _redactor() -> Callable[[str], str]:
    from shellagent.transcript.redact import Redactor

    return Redactor.from_environment().redact


@dataclass
class SessionState:
    """The state one ``run_task`` call carries between turns."""

    task: str
    backend: Backend
    shell: Shell
    policy: PolicyEngine
    approver: Approver
    config: AgentConfig
    emit: Callable[[TranscriptEvent], None]
    cancel: threading.Event
    on_output: Callable[[str], None] | None
    on_token: Callable[[str], None] | None
    job_installer: JobInstaller | None = None
    chooser: Chooser | None = None
    conversation: list[dict[str, str]] = field(default_factory=list)
    commands: list[CommandResult] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)
    succeeded: dict[str, int] = field(default_factory=dict)
    # Commands that changed something (policy "ask"), were approved and exited 0: what a
    # schedule action turns into a job.
    job_commands: list[str] = field(default_factory=list)
    # Commands allowed as read-only that the kernel caught changing something: judged as
    # writers for the rest of the session (``ShellState.refuted``).
    refuted: set[str] = field(default_factory=set)
    # Commands the user refused in this task: never asked about again unchanged; the
    # reason given with the last refusal ("" when none was given)
    refusals: set[str] = field(default_factory=set)
    refusal_reason: str = ""
    # recipes the free loop may call beside its own commands (a model that writes them well)
    tools: Tools | None = None
    # the alternative the user picked when a result was unsure: (recipe, its arguments);
    # the recipe itself, as one composed for the task exists nowhere else (learned from)
    picked: tuple[Recipe, tuple[tuple[str, str], ...]] | None = None
    reproposals: int = 0  # times the model proposed a command the user had refused
    # the parts of commands the policy denied (their normalised text): a deny is final, so
    # a command holding one of them again ends the session instead of being judged again
    denied: set[str] = field(default_factory=set)
    denials: int = 0  # commands the policy denied in this session
    denial: str = ""  # the last denial, said plainly (what was not allowed and why)
    # command -> (times run, output of the last run): a third identical run is not made
    outputs: dict[str, tuple[int, str]] = field(default_factory=dict)
    nudged: bool = False  # the first-turn ``done`` nudge was given
    # Where the commands come from: "recipe NAME" while a recipe's command runs, "free"
    # once no recipe did the task and the model writes them itself (``recipe_step``).
    origin: str = ""
    session_id: str = ""
    turn: int = 0
    invalid_in_a_row: int = 0
    stalls: int = 0  # free-loop turns in a row without progress (``progress.py``)
    context_trims: int = 0  # times the conversation was cut to fit the context (context.py)
    running: bool = False
    # What the model is told back is redacted as the transcript is (``observe``), by one
    # redactor for the session: a secret it found once is known in later outputs too.
    redact: Callable[[str], str] = field(default_factory=_redactor)


def observe(state: SessionState, text: str) -> None:
    """Tell the model ``text`` (an observation: a user message of this turn), redacted:
    whatever a command printed (its output, a listing) reaches the model as it is stored."""
    text = state.redact(text)
    state.conversation.append({"role": "user", "content": text})
    state.emit(ChatMessage(role="user", content=text, turn=state.turn))


def shell_state(state: SessionState) -> ShellState:
    """What the policy must know of the session's shell to judge a command in it: its
    functions, working directory, the commands the kernel caught writing, and the variables
    it carries (read only when a command evaluates or expands one). Every judgement of a
    command that may run in this session uses it, trials included."""
    from shellagent.policy import ShellState

    cwd = state.shell.cwd
    return ShellState(
        functions=state.shell.functions,
        cwd=Path(cwd) if cwd else None,
        refuted=frozenset(state.refuted),
        carried=carried_reader(state.shell),
    )


def in_subshell(command: str, evaluation: Evaluation) -> tuple[str, tuple[tuple[int, str], ...]]:
    """``command`` run in a subshell (a trial's ``cd`` or variables must not change the
    session's shell), with the offsets of the substitutions the policy judged in it moved
    to match, for a confined run (``Sandbox.run``'s ``judged``)."""
    lead = "(\n"
    return f"{lead}{command}\n)", tuple((o + len(lead), k) for o, k in evaluation.substitutions)


def check(state: SessionState, command: str) -> Evaluation:
    """The policy's verdict on ``command`` in the shell's current state, recorded."""
    decision = state.policy.check(command, shell_state(state))
    state.emit(
        PolicyVerdict(
            turn=state.turn,
            command=command,
            decision=decision.decision.word,
            reasons=decision.reasons,
            segments=tuple(_recorded(s) for s in decision.segments),
        )
    )
    return decision


def _recorded(s: Segment) -> PolicySegment:
    """A segment of the policy's decision as the transcript's ``policy`` line keeps it."""
    return PolicySegment(
        argv=s.argv,
        program=s.program,
        decision=s.decision.word,
        reasons=s.reasons,
        executable=s.executable,
        wrappers=s.wrappers,
        assignments=s.assignments,
        writes=s.writes,
        context=s.context,
        traits=s.traits,
        rules=s.rules,
        key=s.key,
        read_only=s.read_only,
        effects=s.effects,
    )


def carried_reader(shell: object) -> Callable[[], Carried | None] | None:
    """A function that reads the variables ``shell`` carries to its next command (from the
    sandbox's state dump, or, before its first command, its starting environment), for the
    policy: it judges values that bash evaluates as code. None for a shell that cannot say."""
    export = getattr(shell, "export_state", None)
    if export is None:
        return None

    def read() -> Carried | None:
        try:
            dump = export()
        except (OSError, ShellagentError):
            return None
        if dump is None:
            profile = getattr(shell, "profile", None)
            if profile is None:
                return None
            from shellagent.policy.values import Carried
            from shellagent.sandbox import environment

            values = {k: (v,) for k, v in environment(profile).items()}
            return Carried({**values, "IFS": (" \t\n",), "PS4": ("+ ",)})
        return _carried_from_dump(bytes(dump))

    return read


@functools.lru_cache(maxsize=4)
def _carried_from_dump(dump: bytes) -> Carried | None:
    from shellagent.policy.values import Carried
    from shellagent.sandbox import State, Unreadable

    try:
        parsed = State.parse(dump)
    except Unreadable:
        return None
    values: dict[str, tuple[str, ...]] = {}
    integers: set[str] = set()
    associative: set[str] = set()
    readonly: set[str] = set()
    for name, (attrs, value) in parsed.variables.items():
        key = name.decode("utf-8", "replace")
        if value is None:
            items: list[bytes] = []
        elif isinstance(value, list):
            items = [v for _, v in value]
        else:
            items = [value]
        values[key] = tuple(v.decode("utf-8", "replace") for v in items)
        if b"i" in attrs:
            integers.add(key)
        if b"A" in attrs:
            associative.add(key)
        if b"r" in attrs:
            readonly.add(key)
    return Carried(values, frozenset(integers), frozenset(associative), frozenset(readonly))


def ask(state: SessionState, request: ApprovalRequest) -> Approval:
    """The approver's answer to ``request``, recorded; ``always`` is remembered first."""
    approval = state.approver(request)
    if approval.kind == "always" and request.job is not None:
        # a job is approved once, as a whole: its commands are not allowed for other tasks
        approval = Approval("approve", reason=approval.reason)
    automatic = is_automatic(state.approver)
    recorded = "auto" if automatic and approval.kind == "approve" else approval.kind
    reason = approval.reason
    scope = approval.scope
    if approval.kind == "always":
        cwd = Path(state.shell.cwd or ".")
        try:
            reason = state.policy.remember_always(
                request.evaluation, approval.scope or "session", cwd
            )
        except InputError as exc:
            # not remembered anywhere: recorded without a scope, and run this once
            reason, scope = f"{exc.message}; run this once", None
    state.emit(
        ApprovalRecord(
            turn=request.turn,
            command=request.command,
            decision=recorded,
            reason=reason,
            edited_command=approval.command if approval.kind == "edit" else None,
            scope=scope,
        )
    )
    return approval
