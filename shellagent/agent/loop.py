"""The agent loop: model → action → policy → approval → shell → observation, until done.

One call of ``run_task`` is one session. Every step is written to the sink as it happens (and
passed to ``on_event``), in the order ``docs/transcripts.md`` documents: ``session_start``,
the system and task ``message``s, then per turn ``model_turn``, the assistant ``message``,
``policy``, ``approval`` (when the policy asked), ``execution``, the observation ``message``;
finally ``end``. The sink is not closed: its owner may append a ``check`` (task sets) and
closes it.

A session ends when the model finishes, after ``max_turns`` replies, when the same command
fails ``repeat_limit`` times, when the user quits, when ``cancel`` is set (a running command
is interrupted), or on an error (two unparseable replies in a row, a failing backend, a
conversation that no longer fits the context). Errors end the session with ``reason
"error"``; they are not raised, so the transcript always gets its ``end``.
"""

from __future__ import annotations

import platform
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shellagent.agent import observation, progress
from shellagent.agent.actions import (
    ACTION_FORMAT,
    FinishAction,
    RunAction,
    ScheduleAction,
    UseAction,
    parse_action,
)
from shellagent.agent.approval import ApprovalRequest
from shellagent.agent.config import AgentConfig
from shellagent.agent.context import ContextWindow
from shellagent.agent.examples import render, rewrite
from shellagent.agent.inventions import invented_paths, listing_hint
from shellagent.agent.outcome import Outcome
from shellagent.agent.parts import Hooks, Oversight, Parts, Recording
from shellagent.agent.prompts import (
    Environment,
    describe_environment,
    system_prompt,
    task_message,
)
from shellagent.agent.scheduling import propose_job
from shellagent.agent.session import SessionEnd, SessionState, ask, check, observe
from shellagent.agent.support import echoes_instructions, succeeded
from shellagent.errors import Cancelled, InputError, ShellagentError
from shellagent.events import (
    ChatMessage,
    End,
    EndReason,
    Execution,
    ModelTurn,
    SessionStart,
    TranscriptEvent,
)

if TYPE_CHECKING:
    from shellagent.agent.examples import Example
    from shellagent.agent.followup import Earlier
    from shellagent.agent.recipe_step import RecipeBook
    from shellagent.model.backend import Generation
    from shellagent.policy import Evaluation
    from shellagent.sandbox import CommandResult

# Why a "done" the model wrote itself is never claimed (measured: 3 of the 119 dev tasks the
# free loop ended solved, docs/results.md).
FREE_DOUBT = "no recipe did this: the model wrote these commands itself, and nothing checked them"

__all__ = [
    "AgentConfig",
    "EndReason",
    "Hooks",
    "Oversight",
    "Outcome",
    "Parts",
    "Recording",
    "run_task",
]


@dataclass(frozen=True)
class _Observed:
    """An example's recorded step, shaped like a ``CommandResult`` for ``observation``."""

    output: str
    exit_code: int
    command: str = ""
    timed_out: bool = False
    duration_s: float = 0.0


def run_task(
    task: str,
    parts: Parts,
    oversight: Oversight,
    recording: Recording,
    hooks: Hooks = Hooks(),  # noqa: B008 - frozen, so sharing it is safe
    *,
    earlier: Earlier | None = None,
) -> Outcome:
    """Run ``task`` to its end and return how it ended (see the module docstring).

    ``parts.shell`` is a ``shellagent.sandbox.Shell`` (a ``Sandbox``, or
    ``shellagent.testing.FakeShell``); its ``interrupt()`` stops a command on cancellation
    (``hooks.cancel``). Commands the policy allows as read-only run with ``confined=True``:
    the kernel refuses their writes, and one it caught is judged as a writer from then on.
    ``oversight.job_installer`` installs a recurring job the user approved; without one the
    model is told that jobs cannot be made here. ``parts.examples`` is the library worked
    examples are retrieved from (``config.examples`` of them, rewritten to the task's
    paths); without one the prompt shows the reply format on the task's own paths.
    ``earlier`` makes the task a follow-up: the digest of the sessions it continues opens
    the task message. ``parts.recipes`` makes the session try verified recipes first
    (``recipe_step``); the model writes commands itself only when none fits. Only the
    loop's hooks are used here (``Hooks``); the rest are ``Agent.run``'s.
    """
    backend, shell, policy, config = parts.backend, parts.shell, parts.policy, parts.config
    sink, on_event = recording.sink, hooks.on_event
    session_id = sink.session_id
    if not session_id:
        from shellagent.transcript.store import new_session_id

        session_id = new_session_id()

    def emit(event: TranscriptEvent) -> None:
        sink.write(event)
        if on_event is not None:
            on_event(event)

    cancel = hooks.cancel
    state = SessionState(
        task=task,
        backend=backend,
        shell=shell,
        policy=policy,
        approver=oversight.approver,
        config=config,
        emit=emit,
        cancel=cancel if cancel is not None else threading.Event(),
        on_output=hooks.on_output,
        session_id=session_id,
        on_token=hooks.on_token,
        job_installer=oversight.job_installer,
        chooser=oversight.chooser,
    )
    env = describe_environment(shell, max_turns=config.max_turns)
    from shellagent.policy.sources import describe_files

    emit(
        SessionStart(
            session=session_id,
            task=task,
            model=recording.model_name or backend.name,
            backend=type(backend).__name__,
            policy=describe_files(policy.policy.files),
            profile=shell.grants.profile,
            cwd=env.cwd,
            versions=_versions(),
            source=recording.source,
            task_id=recording.task_id,
            continues=earlier.session if earlier else None,
        )
    )
    examples, recipes = parts.examples, parts.recipes
    chosen = examples.search(task, config.examples) if examples is not None else []
    system, user = opening(env, task, chosen, config.observation_chars, earlier)
    state.conversation = [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
    ]
    emit(ChatMessage(role="system", content=system))
    emit(ChatMessage(role="user", content=user))

    watcher = _CancelWatcher(state)
    watcher.start()
    try:
        stop = _start(state, recipes)
    except Cancelled:  # while it waited for the shared model outside a generation
        stop = SessionEnd("cancelled", "cancelled while waiting for the model")
    finally:
        watcher.stop()
    cwd = shell.cwd or None
    emit(
        End(
            reason=stop.reason,
            summary=stop.summary,
            turns=state.turn,
            error=stop.error,
            cwd=cwd,
            claimed=stop.claimed,
            doubts=stop.doubts,
        )
    )
    return Outcome(
        reason=stop.reason,
        summary=stop.summary,
        turns=state.turn,
        session_id=session_id,
        commands=tuple(state.commands),
        error=stop.error,
        environment_problem=stop.environment_problem,
        cwd=cwd,
        origin=state.origin,
        claimed=stop.claimed,
        ran=stop.ran,
        doubts=stop.doubts,
        alternatives=stop.alternatives,
        picked=state.picked,
        scheduled=stop.scheduled,
    )


def opening(
    env: Environment,
    task: str,
    examples: Sequence[Example] = (),
    observation_chars: int = AgentConfig.observation_chars,
    earlier: Earlier | None = None,
) -> tuple[str, str]:
    """The system prompt and the task message a session starts with: ``examples`` (worked
    examples, rewritten to the task's paths and shown as the loop would have fed back
    their output) in the system prompt, a follow-up's digest before the task; both redacted
    as a transcript is, since they come from earlier sessions' commands and output."""
    from shellagent.transcript.redact import Redactor

    redact = Redactor.from_environment().redact
    shown = ""
    if examples:

        def observe_step(out: str, code: int) -> str:
            return observation.executed(_Observed(out, code), observation_chars // 4)

        shown = redact(render([rewrite(e, task) for e in examples], observe=observe_step))
    digest = redact(earlier.text) if earlier else ""
    return system_prompt(env, shown, task), task_message(task, digest)


def _loop(state: SessionState) -> SessionEnd:
    window = ContextWindow(state.backend, reply_tokens=state.config.max_tokens)
    try:
        while True:
            if state.cancel.is_set():
                raise SessionEnd("cancelled", "cancelled before the task was done")
            if state.turn >= state.config.max_turns:
                raise SessionEnd(
                    "turn_limit", f"stopped after {state.turn} replies without finishing"
                )
            state.turn += 1
            before = progress.mark(state)
            _one_turn(state, window)
            progress.stop_if_stalled(state, before)
    except SessionEnd as stop:
        return stop


def _start(state: SessionState, recipes: RecipeBook | None) -> SessionEnd:
    """A recurring request is made a job first (``recurring``: its what through the
    recipes, for any model); else recipes first when there is a book, else the free loop."""
    from shellagent.agent import recipe_step, recurring

    try:
        if recurring.attempt(state, recipes, _run_action):
            return recipe_step.honest(_loop(state), state)
    except SessionEnd as stop:
        return stop
    return _recipes_first(state, recipes) if recipes is not None else _loop(state)


def _recipes_first(state: SessionState, recipes: RecipeBook) -> SessionEnd:
    """A recipe answers the task if one fits; else the free loop, honest when it fails."""
    from shellagent.agent import recipe_step

    try:
        recipe_step.attempt(state, recipes, _run_action)
    except SessionEnd as stop:
        return stop
    return recipe_step.honest(_loop(state), state)


def _one_turn(state: SessionState, window: ContextWindow) -> None:
    generation = _generate(state, window)
    turn = state.turn
    try:
        action = parse_action(generation.text)
    except InputError as exc:
        _record_reply(state, generation, None)
        state.invalid_in_a_row += 1
        if state.invalid_in_a_row >= 2:
            raise SessionEnd(
                "error",
                "the model did not produce a valid action twice in a row",
                f"the model's replies are not actions: {exc.message}",
            ) from None
        if generation.stop == "end":
            observe(state, observation.invalid_reply(exc.message))
        else:
            observe(state, observation.cut_reply(generation.stop, generation.generated_tokens))
        return
    if isinstance(action, FinishAction) and _echoes_prompt(state, action.done):
        # the prompt's own words are no answer: asked again, as for a reply that is no action
        _record_reply(state, generation, action.to_dict())
        state.invalid_in_a_row += 1
        if state.invalid_in_a_row >= 2:
            raise SessionEnd(
                "error",
                "the model gave no answer: it repeated the text of its instructions",
                "the model's summaries were the text of its instructions, not an answer",
            )
        observe(state, observation.echoed_instructions())
        return
    state.invalid_in_a_row = 0
    _record_reply(state, generation, action.to_dict())
    if isinstance(action, FinishAction):
        if not state.commands and not state.nudged and turn == 1:
            state.nudged = True  # once: a small model often "finishes" before doing anything
            observe(state, observation.done_without_commands())
            return
        # the model wrote these commands itself and says it is done: nothing checked it
        raise SessionEnd(
            "finished",
            action.done,
            claimed=False,
            doubts=(FREE_DOUBT,),
        )
    if isinstance(action, ScheduleAction):
        propose_job(state, action, turn)
        return
    if isinstance(action, UseAction):
        called = _called(state, action)
        if called is None:  # not offered (a server that ignored the grammar)
            observe(state, observation.invalid_reply("that recipe is not offered; write a cmd"))
            return
        action = called
    _run_action(state, action, turn)


def _called(state: SessionState, action: UseAction) -> RunAction | None:
    """The command of a recipe the model called as a tool (``state.tools``), or None."""
    from shellagent.recipes import render

    recipe = state.tools.recipes.get(action.use) if state.tools is not None else None
    if recipe is None:
        return None
    try:
        command = render(recipe, action.arguments)
    except InputError:
        return None
    return RunAction(cmd=command, why=f"recipe {recipe.name} (the model's call): {recipe.summary}")


def _echoes_prompt(state: SessionState, summary: str) -> bool:
    system = state.conversation[0]["content"] if state.conversation else ""
    return echoes_instructions(summary, system, (c.output for c in state.commands))


def _generate(state: SessionState, window: ContextWindow) -> Generation:
    try:
        shown = window.fit(state.conversation)
        state.context_trims = window.trims
    except InputError as exc:
        raise SessionEnd(
            "error", "the conversation no longer fits the model", exc.message
        ) from None
    cancel = state.cancel
    user_on_token = state.on_token

    def on_token(piece: str) -> None:
        if cancel.is_set():
            raise Cancelled  # stops the generation (the pool raises it while waiting)
        if user_on_token is not None:
            user_on_token(piece)

    try:
        return state.backend.generate(
            shown,
            reply_format=state.tools.reply_format if state.tools is not None else ACTION_FORMAT,
            max_tokens=state.config.max_tokens,
            on_token=on_token,
            capture_logprobs=state.config.capture_logprobs,
        )
    except Cancelled:
        raise SessionEnd("cancelled", "cancelled while the model was thinking") from None
    except ShellagentError as exc:
        raise SessionEnd("error", "the model failed", exc.show(), cause=exc) from None
    except (RuntimeError, OSError, ValueError) as exc:
        raise SessionEnd("error", "the model failed", f"{type(exc).__name__}: {exc}") from None


def _record_reply(
    state: SessionState, generation: Generation, action: dict[str, str] | None
) -> None:
    if action is not None and state.origin:
        action = {**action, "origin": state.origin}  # "free": written without a recipe
    state.emit(
        ModelTurn(
            turn=state.turn,
            raw=generation.text,
            action=action,
            valid=action is not None,
            stop=generation.stop,
            prompt_tokens=generation.prompt_tokens,
            evaluated_prompt_tokens=generation.evaluated_prompt_tokens,
            generated_tokens=generation.generated_tokens,
            duration_s=round(generation.duration_s, 4),
            token_ids=generation.token_ids,
            logprobs=generation.logprobs,
            context_trims=state.context_trims or None,
        )
    )
    # The reply exactly as generated, so the next prompt extends this one token for token.
    state.conversation.append({"role": "assistant", "content": generation.text})
    state.emit(ChatMessage(role="assistant", content=generation.text, turn=state.turn))


def _run_action(state: SessionState, action: RunAction, turn: int) -> None:
    command = action.cmd
    key = command.strip()
    _stop_if_cancelled(state, key)  # Ctrl-C while the model thought: nothing more runs
    times, _ = state.outputs.get(key, (0, ""))
    if times >= 2:
        observe(state, observation.not_rerun(times))
        # it worked, twice: what is counted is the model asking for it again
        _give_up_if_repeated(state, command, "was proposed again after the same output")
        return
    if key in state.refusals:
        # Never shown or asked about again: the model is told so and asked for another way.
        # It did not run, so it did not fail; a model that keeps at it is stopped.
        state.reproposals += 1
        observe(state, observation.refused_before())
        if state.reproposals >= state.config.repeat_limit:
            raise SessionEnd(
                "repeated_failure",
                f"the model kept proposing `{key}`, which you refused; it never ran",
            )
        return
    decision = check(state, command)
    if state.config.propose_only:
        raise SessionEnd(
            "finished",
            f"proposed `{key}` (the policy would {decision.decision} it)",
            claimed=False,
        )
    if decision.decision == "deny":
        observe(state, observation.denied(decision.reasons))
        _stop_if_denied_again(state, decision)
        _give_up_if_repeated(state, command, "was denied by the policy")
        return
    if not state.origin.startswith("recipe"):
        # a path the model invented is never proposed as if it were there
        missing = invented_paths(state.shell, decision)
        if missing:
            observe(state, observation.invented(missing, listing_hint(state.shell)))
            _give_up_if_repeated(state, command, "named paths that do not exist")
            return
    if state.config.dry_run:
        observe(state, observation.dry_run(decision.decision))
        return
    edited_from: str | None = None
    if decision.decision == "ask":
        approval = ask(state, ApprovalRequest(command, action.why, decision, turn))
        if approval.kind == "quit":
            if state.cancel.is_set():  # an approver that gave up because the task was cancelled
                raise SessionEnd("cancelled", "cancelled while waiting for approval")
            raise SessionEnd("user_quit", "stopped by the user")
        if approval.kind == "refuse":
            # A refusal is the user's choice, not a failure of the command: it is not
            # counted toward giving up, and the command is never proposed to them again.
            state.refusals.add(key)
            state.refusal_reason = approval.reason
            observe(state, observation.refused(approval.reason))
            return
        if approval.kind == "edit" and approval.command and approval.command != command:
            edited_from, command = command, approval.command
            edited = check(state, command)
            if edited.decision == "deny":
                observe(state, observation.denied(edited.reasons, edited=True))
                return
    ran = len(state.commands)
    # Only what the policy itself allowed as read-only runs confined: an approved or edited
    # command keeps the sandbox's normal rights.
    confined = decision.read_only and edited_from is None
    judged = decision.substitutions if confined else ()
    _execute(state, command, edited_from, confined=confined, judged=judged)
    if decision.decision == "ask" and len(state.commands) > ran:
        result = state.commands[-1]
        if succeeded(command, result.exit_code, result.timed_out):
            state.job_commands.append(command)


def _stop_if_cancelled(state: SessionState, command: str) -> None:
    if state.cancel.is_set():
        raise SessionEnd("cancelled", f"cancelled before `{command}` ran; it did not run")


def _execute(
    state: SessionState,
    command: str,
    edited_from: str | None,
    *,
    confined: bool,
    judged: Sequence[tuple[int, str]] = (),
) -> None:
    """Run ``command``; a confined one with the substitutions the policy judged in it
    (the driver refuses any other: ``Sandbox.run``)."""
    _stop_if_cancelled(state, command.strip())  # e.g. while the user was asked
    state.running = True
    try:
        result: CommandResult = state.shell.run(
            command,
            timeout=state.config.command_timeout,
            on_output=state.on_output,
            confined=confined,
            judged=judged,
        )
    except InputError as exc:
        observe(state, f"The command could not be run: {exc.message}")
        _give_up_if_repeated(state, command)
        return
    except ShellagentError as exc:
        raise SessionEnd("error", "the shell failed", exc.show(), cause=exc) from None
    finally:
        state.running = False
    state.commands.append(result)
    refused = result.refused
    if refused:
        state.refuted.add(command.strip())
    # (redacted here too, so the execution event holds what the model is shown)
    shown = state.redact(
        observation.executed(result, state.config.observation_chars, edited_from=edited_from)
    )
    if refused:
        shown = f"{shown}\n{observation.claim_refuted()}"
    state.emit(
        Execution(
            turn=state.turn,
            command=command,
            output=shown,
            exit_code=result.exit_code,
            duration_s=round(result.duration_s, 4),
            timed_out=result.timed_out,
            truncated=result.truncated or len(result.output) > state.config.observation_chars,
            shell_restarted=result.shell_restarted,
            confined=result.confined,
            refused=refused,
            # who wrote it: the user's edit, a recipe the model filled, or the model
            origin="user"
            if edited_from is not None
            else "recipe"
            if state.origin.startswith("recipe")
            else "model",
        )
    )
    if state.cancel.is_set():
        observe(state, shown)
        raise SessionEnd("cancelled", "cancelled while a command was running")
    if not succeeded(command, result.exit_code, result.timed_out):
        observe(state, shown)
        _give_up_if_repeated(state, command)
        return
    if result.exit_code != 0:  # a pipeline whose reader finished first (``ps aux | head``)
        shown = f"{shown}\n{observation.sigpipe()}"
    # A small model under greedy decoding tends to loop on a command that worked; saying so
    # changes its context enough to move it on.
    key = command.strip()
    runs, last = state.outputs.get(key, (0, None))
    state.outputs[key] = (runs + 1 if last == result.output else 1, result.output)
    times = state.succeeded[key] = state.succeeded.get(key, 0) + 1
    if times > 1:
        shown = f"{shown}\n{observation.repeated(key, times)}"
    observe(state, shown)


def _stop_if_denied_again(state: SessionState, evaluation: Evaluation) -> None:
    """End the session when the model proposes again something the policy denied: the
    policy will deny it every time, and a small model rewrites the same command around it
    (``chmod +x f`` then ``chmod +x f && chown f``) until it runs out of turns. The end says
    what was not allowed and why, so the user can do it themselves if they mean it."""
    denied = [s for s in evaluation.segments if s.decision == "deny"]
    again = next((s for s in denied if s.key in state.denied), None)
    state.denied.update(s.key for s in denied)
    shown = again or (denied[0] if denied else None)
    if shown is None:
        return
    why = "; ".join(dict.fromkeys(shown.reasons)) or "the policy forbids it"
    # also how a stalled free loop ends after a denial (``progress.py``)
    state.denial = (
        f"the policy does not allow `{shown.key}` ({why}); it never ran. "
        "If you mean it, run it yourself"
    )
    state.denials += 1
    if again is not None:
        raise SessionEnd("repeated_failure", state.denial, plain=True)


def _give_up_if_repeated(state: SessionState, command: str, what: str = "failed") -> None:
    """Count a failure (non-zero exit, denial) of ``command``; stop at the limit."""
    key = command.strip()
    count = state.failures[key] = state.failures.get(key, 0) + 1
    if count >= state.config.repeat_limit:
        raise SessionEnd("repeated_failure", f"`{key}` {what} {count} times")


class _CancelWatcher:
    """Interrupts the running command when ``cancel`` is set from another thread."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="agent-cancel", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.done.set()
        self.thread.join(timeout=1)

    def _watch(self) -> None:
        while not self.done.is_set():
            if self.state.cancel.wait(0.05):
                # Keep interrupting while a command runs: it may have started just now.
                while not self.done.is_set():
                    if self.state.running:
                        self.state.shell.interrupt()
                    time.sleep(0.05)
                return


def _versions() -> dict[str, str]:
    from shellagent import __version__

    return {
        "shellagent": __version__,
        "python": platform.python_version(),
        "platform": sys.platform,
    }
