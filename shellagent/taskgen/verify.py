"""Verifying a task in the ephemeral sandbox, and recording what its gold commands printed.

One throwaway sandbox per task (``shellagent.sandbox.Sandbox("ephemeral")``):

1. every setup command must exit 0 (run as ``shellagent eval`` runs them);
2. the check must fail before anything is done: with no answer, and with the do-nothing
   agent's answer;
3. the gold commands run in the sandbox's persistent shell, as an agent's would, and must
   each exit 0; what they print is recorded (the *observations*);
4. the final answer is the task's answer template applied to those observations; it must be
   non-empty and fit an agent's ``done`` action;
5. the check must pass with that answer and the last command's output;
6. if the check, in that same state, fails without an answer, the task is judged on its
   answer, and then it must also refuse the task's own text handed back as the answer and
   each of the task's ``wrong_answers`` (put in both ``$ANSWER`` and ``$LAST_OUTPUT``): a
   right state with a wrong or invented report fails. A check that ignores the answer must
   not list wrong answers (they could never be refused).

The gold commands run with ``LC_ALL=C.UTF-8`` and ``TZ=UTC`` (set in the shell first, not
recorded), so what they print does not depend on the host's locale or time zone; setup and
checks get the same two variables. A task that verifies becomes a library entry: its line
with ``gold.observations`` and ``gold.answer`` filled in.

Speed: ``shellagent eval`` starts a fresh ``bash`` for every setup command and every check
(about 15 and 45 ms on a loaded 2-core machine). Here the setup commands run in one fresh
bash, each in its own subshell and stopping at the first failure, and the checks of one
step run in one fresh bash, each exactly as ``answer_check_script`` runs it; a status line
with a random nonce after each part tells the parts apart. Subshells of a pristine shell
see what separate fresh shells see, so the verdicts are the same.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from shellagent.eval.tasks import Observation, Task
from shellagent.jsontypes import JsonObject

if TYPE_CHECKING:
    from shellagent.sandbox import Shell

VERIFY_VERSION = 2
"""Part of every cache key: bump it when what verification does changes."""

PINNED_ENV = {"LC_ALL": "C.UTF-8", "TZ": "UTC"}
NOTHING_ANSWER = "did nothing"  # what the do-nothing agent answers
ANSWER_MAX = 400  # an agent's done text is at most this long (agent/actions.py DONE_MAX)
DETAIL_MAX = 600

Step = Literal["", "setup", "before", "wrong_answer", "gold", "answer", "after", "sandbox"]


class VerdictLine(TypedDict):
    """A verdict as the cache file keeps it (``Verdict.to_json``)."""

    key: str
    ok: bool
    step: Step
    detail: str
    observations: list[JsonObject]  # ``Observation`` each
    answer: str
    seconds: float


class FailureLine(TypedDict):
    id: str
    family: str | None
    step: Step
    detail: str


class VerifySummary(TypedDict):
    """The figures of a verification run (``summarize``; ``--json`` prints them)."""

    tasks: int
    verified: int
    failed: int
    not_verified: int
    from_cache: int
    wall_s: float
    jobs: int
    per_second: float
    failed_by_step: dict[str, int]
    failures: list[FailureLine]  # the first few


@dataclass(frozen=True)
class Verdict:
    """How the verification of one task went. ``step`` names where it failed."""

    key: str
    ok: bool
    step: Step = ""
    detail: str = ""
    observations: tuple[Observation, ...] = ()
    answer: str = ""
    seconds: float = 0.0

    @property
    def cacheable(self) -> bool:
        """A sandbox that did not start says nothing about the task."""
        return self.step != "sandbox"

    def to_json(self) -> VerdictLine:
        return {
            "key": self.key,
            "ok": self.ok,
            "step": self.step,
            "detail": self.detail,
            "observations": [o.model_dump() for o in self.observations],
            "answer": self.answer,
            "seconds": round(self.seconds, 4),
        }

    @classmethod
    def from_json(cls, data: VerdictLine) -> Verdict:
        return cls(
            key=str(data["key"]),
            ok=bool(data["ok"]),
            step=data.get("step", ""),
            detail=str(data.get("detail", "")),
            observations=tuple(Observation.model_validate(o) for o in data["observations"]),
            answer=str(data.get("answer", "")),
            seconds=float(data.get("seconds", 0.0)),
        )


def task_key(task: Task) -> str:
    """What verification depends on: the task without its id or verification results (nor
    its plain commands, verified as a task of their own: ``plain.py``)."""
    data = task.model_dump(mode="json")
    data.pop("id")
    if data.get("gold"):
        data["gold"].pop("observations", None)
        data["gold"].pop("answer", None)
        data["gold"].pop("plain", None)
    text = json.dumps([VERIFY_VERSION, data], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _clip(text: str) -> str:
    return text if len(text) <= DETAIL_MAX else text[: DETAIL_MAX - 1] + "…"


def _batch(
    shell: Shell,
    parts: Sequence[str],
    env: dict[str, str],
    cwd: str,
    *,
    stop_on_failure: bool,
    timeout: float,
) -> list[tuple[int | None, str]]:
    """Run each part in its own subshell of one fresh bash: (status, output) per part that
    ran; a status of None means the part did not finish (timed out or output cut)."""
    from shellagent.eval.runner import fresh_shell_command

    nonce = secrets.token_hex(8)
    body = []
    for i, part in enumerate(parts):
        body.append(f"(\n{part}\n)\ns=$?; printf '\\n{nonce}:{i}:%s\\n' \"$s\"")
        if stop_on_failure:
            body.append('[ "$s" -eq 0 ] || exit "$s"')
    result = shell.run(fresh_shell_command("\n".join(body), env, cwd), timeout=timeout)
    done: list[tuple[int | None, str]] = []
    rest = result.output
    for i in range(len(parts)):
        marker = re.search(rf"\n?{nonce}:{i}:(\d+)\n", rest)
        if marker is None:
            done.append((None, rest))
            break
        done.append((int(marker.group(1)), rest[: marker.start()]))
        rest = rest[marker.end() :]
        if stop_on_failure and done[-1][0] != 0:
            break
    return done


def verify_task(
    task: Task,
    *,
    setup_timeout: float = 60.0,
    command_timeout: float = 30.0,
    check_timeout: float = 30.0,
) -> Verdict:
    """Verify one task (see the module docstring); never raises for a bad task."""
    from shellagent.eval.runner import answer_check_script, pristine_environment
    from shellagent.sandbox import Sandbox
    from shellagent.taskgen.answers import TemplateError, render

    key = task_key(task)
    started = time.monotonic()

    def verdict(ok: bool, step: Step = "", detail: str = "", **fields: Any) -> Verdict:
        seconds = time.monotonic() - started
        return Verdict(key, ok, step, _clip(detail), seconds=seconds, **fields)

    gold = task.gold
    if gold is None:
        return verdict(False, "gold", "the task has no gold commands")
    try:
        shell = Sandbox("ephemeral", timeout=setup_timeout)
    except Exception as exc:
        return verdict(False, "sandbox", f"the sandbox did not start: {exc}")
    try:
        env, cwd = pristine_environment(shell)
        env.update(PINNED_ENV)
        setup = _batch(
            shell,
            task.setup_commands,
            env,
            cwd,
            stop_on_failure=True,
            timeout=setup_timeout,
        )
        for command, (status, output) in zip(task.setup_commands, setup, strict=False):
            if status != 0:
                how = "did not finish" if status is None else f"exit {status}"
                return verdict(False, "setup", f"$ {command}\n[{how}]\n{output}")

        def checks(pairs: Sequence[tuple[str, str]]) -> list[int | None]:
            scripts = [
                answer_check_script(task.success_condition, answer=a, last_output=o)
                for a, o in pairs
            ]
            ran = _batch(
                shell, scripts, env, cwd, stop_on_failure=False, timeout=check_timeout * len(pairs)
            )
            return [status for status, _ in ran] + [None] * (len(pairs) - len(ran))

        before = checks([("", ""), (NOTHING_ANSWER, "")])
        if before[0] == 0:
            return verdict(False, "before", "the check passes before anything is done")
        if before[1] == 0:
            return verdict(False, "before", f"the check accepts {NOTHING_ANSWER!r} before")
        shell.run(" ".join(f"export {k}={v};" for k, v in PINNED_ENV.items()))
        observations = []
        for command in gold.commands:
            result = shell.run(command, timeout=command_timeout)
            observations.append(Observation(output=result.output, exit_code=result.exit_code))
            if result.exit_code != 0 or result.timed_out:
                return verdict(
                    False, "gold", f"$ {command}\n[exit {result.exit_code}]\n{result.output}"
                )
        try:
            answer = render(gold.answer_template or "{out}", [o.output for o in observations])
        except TemplateError as exc:
            return verdict(False, "answer", f"answer template: {exc}")
        if not answer or len(answer) > ANSWER_MAX:
            return verdict(
                False, "answer", f"the answer is {len(answer)} characters (1 to {ANSWER_MAX})"
            )
        wrongs = (task.task, *gold.wrong_answers)
        after = checks([(answer, observations[-1].output), ("", ""), *((w, w) for w in wrongs)])
        if after[0] != 0:
            return verdict(False, "after", f"the check fails after the gold, answer {answer!r}")
        if after[1] == 0 and gold.wrong_answers:
            return verdict(
                False, "wrong_answer", "the check ignores the answer but wrong answers are listed"
            )
        if after[1] != 0:
            for wrong, status in zip(wrongs, after[2:], strict=True):
                if status == 0:
                    return verdict(False, "wrong_answer", f"the check accepts {wrong!r}")
        return verdict(True, observations=tuple(observations), answer=answer)
    except Exception as exc:
        return verdict(False, "sandbox", f"{exc.__class__.__name__}: {exc}")
    finally:
        shell.close()


def verified(task: Task, verdict: Verdict) -> Task:
    """The task's line with the observations and the final answer of its verification."""
    assert task.gold is not None and verdict.ok
    gold = task.gold.model_copy(
        update={"observations": verdict.observations, "answer": verdict.answer}
    )
    return task.model_copy(update={"gold": gold})


@dataclass
class VerifyRun:
    """The verdicts of a run, in task order (None: not verified, the run was cut short)."""

    tasks: Sequence[Task]
    verdicts: list[Verdict | None]
    from_cache: int = 0
    wall_s: float = 0.0
    jobs: int = 1
    interrupted: bool = False

    @property
    def ok(self) -> list[Task]:
        return [
            verified(t, v) for t, v in zip(self.tasks, self.verdicts, strict=True) if v and v.ok
        ]


def verify_all(
    tasks: Sequence[Task],
    *,
    jobs: int = 1,
    cache: Any = None,
    cancel: threading.Event | None = None,
    on_verdict: Callable[[Task, Verdict, bool], None] | None = None,
    verify: Callable[[Task], Verdict] = verify_task,
    sandbox_attempts: int = 3,
) -> VerifyRun:
    """Verify ``tasks`` on ``jobs`` threads, taking what ``cache`` already knows.

    ``cache`` is a ``VerifyCache`` (or None); every new cacheable verdict is added to it as
    soon as it is known, so an interrupted run resumes where it stopped. Ctrl-C in the
    calling thread (or ``cancel``) stops handing out tasks; the tasks running finish. A
    task whose sandbox did not start is tried again, up to ``sandbox_attempts`` times.
    """
    cancel = cancel or threading.Event()
    verdicts: list[Verdict | None] = [None] * len(tasks)
    started = time.monotonic()
    pending: list[int] = []
    from_cache = 0
    for i, task in enumerate(tasks):
        known = cache.get(task_key(task)) if cache is not None else None
        if known is not None:
            verdicts[i] = known
            from_cache += 1
            if on_verdict is not None:
                on_verdict(task, known, True)
        else:
            pending.append(i)

    def one(i: int) -> None:
        if cancel.is_set():
            return
        result = verify(tasks[i])
        # A sandbox that did not start (a loaded machine) says nothing about the task.
        for _ in range(sandbox_attempts - 1):
            if result.step != "sandbox" or cancel.is_set():
                break
            result = verify(tasks[i])
        if cache is not None and result.cacheable:
            cache.put(result)
        verdicts[i] = result
        if on_verdict is not None:
            on_verdict(tasks[i], result, False)

    interrupted = False
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="verify")
    try:
        futures = [pool.submit(one, i) for i in pending]
        waiting = set(futures)
        # Wait in short steps, not in one call: Ctrl-C must reach this thread, stop the
        # tasks not started and let the running ones finish.
        while waiting:
            try:
                _, waiting = wait(waiting, timeout=0.2)
            except KeyboardInterrupt:
                interrupted = True
                cancel.set()
                for future in futures:
                    future.cancel()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    for future in futures:
        if not future.cancelled():
            future.result()  # a failure outside verify (the cache, on_verdict) is raised
    return VerifyRun(
        tasks=tasks,
        verdicts=verdicts,
        from_cache=from_cache,
        wall_s=time.monotonic() - started,
        jobs=jobs,
        interrupted=interrupted or cancel.is_set(),
    )


def summarize(run: VerifyRun, *, failures_shown: int = 20) -> VerifySummary:
    """The figures of a verification run (``--json`` prints them)."""
    done = [v for v in run.verdicts if v is not None]
    failed = [(t, v) for t, v in zip(run.tasks, run.verdicts, strict=True) if v and not v.ok]
    by_step: dict[str, int] = {}
    for _, v in failed:
        by_step[v.step] = by_step.get(v.step, 0) + 1
    fresh = len(done) - run.from_cache
    return {
        "tasks": len(run.tasks),
        "verified": sum(1 for v in done if v.ok),
        "failed": len(failed),
        "not_verified": len(run.tasks) - len(done),
        "from_cache": run.from_cache,
        "wall_s": round(run.wall_s, 2),
        "jobs": run.jobs,
        "per_second": round(fresh / run.wall_s, 3) if run.wall_s > 0 else 0.0,
        "failed_by_step": dict(sorted(by_step.items())),
        "failures": [
            {"id": t.id, "family": t.family, "step": v.step, "detail": v.detail}
            for t, v in failed[:failures_shown]
        ],
    }
