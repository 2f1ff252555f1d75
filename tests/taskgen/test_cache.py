"""The verdict cache: a second run reuses verdicts, an interrupted run resumes."""

from __future__ import annotations

import threading
from pathlib import Path

from shellagent.eval import Observation, Task
from shellagent.taskgen import DEFAULT_SEED, Verdict, VerifyCache, generate, task_key, verify_all


def test_verdicts_survive_a_reload_and_a_torn_last_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    cache = VerifyCache(path)
    good = Verdict("k1", True, observations=(Observation(output="x\n", exit_code=0),), answer="x")
    cache.put(good)
    cache.put(Verdict("k2", False, "after", "the check fails"))
    with path.open("a") as f:
        f.write('{"key": "k3", "ok": tr')
    again = VerifyCache(path)
    assert len(again) == 2 and again.get("k1") == good
    assert again.get("k2") is not None and again.get("k2").step == "after"  # type: ignore[union-attr]
    assert again.get("k3") is None


def test_the_key_ignores_the_id_and_verification_results_but_not_the_content() -> None:
    (task,) = generate(DEFAULT_SEED, 1, ["git_tag"])
    assert task.gold is not None
    renamed = task.model_copy(update={"id": "other"})
    done = task.model_copy(
        update={"gold": task.gold.model_copy(update={"answer": "Tagged.", "observations": ()})}
    )
    changed = task.model_copy(update={"task": task.task + " Thanks."})
    assert task_key(task) == task_key(renamed) == task_key(done) != task_key(changed)


def test_a_second_run_takes_every_verdict_from_the_cache(tmp_path: Path) -> None:
    tasks = generate(DEFAULT_SEED, 2, ["line_count", "git_tag"])
    cache = VerifyCache(tmp_path / "cache.jsonl")
    first = verify_all(tasks, jobs=2, cache=cache)
    assert len(first.ok) == 4 and first.from_cache == 0
    seen: list[bool] = []
    second = verify_all(
        tasks, jobs=2, cache=VerifyCache(tmp_path / "cache.jsonl"),
        on_verdict=lambda t, v, cached: seen.append(cached),
    )  # fmt: skip
    assert second.from_cache == 4 and seen == [True] * 4
    assert [t.to_line() for t in second.ok] == [t.to_line() for t in first.ok]


def test_an_interrupted_run_keeps_what_it_finished_and_the_next_run_resumes(
    tmp_path: Path,
) -> None:
    tasks: list[Task] = generate(DEFAULT_SEED, 3, ["line_count"])
    cancel = threading.Event()
    first = verify_all(
        tasks, jobs=1, cache=VerifyCache(tmp_path / "c.jsonl"), cancel=cancel,
        on_verdict=lambda t, v, cached: cancel.set(),
    )  # fmt: skip
    assert first.interrupted and first.verdicts[0] is not None and first.verdicts[2] is None
    second = verify_all(tasks, jobs=1, cache=VerifyCache(tmp_path / "c.jsonl"))
    assert not second.interrupted and second.from_cache == 1 and len(second.ok) == 3


def test_a_sandbox_that_did_not_start_is_tried_again_and_never_cached(tmp_path: Path) -> None:
    (task,) = generate(DEFAULT_SEED, 1, ["line_count"])
    calls: list[int] = []

    def flaky(t: Task) -> Verdict:
        calls.append(1)
        if len(calls) < 3:
            return Verdict(task_key(t), False, "sandbox", "the sandbox did not start")
        return Verdict(task_key(t), True, answer="7")

    cache = VerifyCache(tmp_path / "c.jsonl")
    run = verify_all([task], cache=cache, verify=flaky)
    assert len(calls) == 3 and run.verdicts[0] is not None and run.verdicts[0].ok
    always = verify_all(
        [task], cache=VerifyCache(tmp_path / "d.jsonl"), sandbox_attempts=2,
        verify=lambda t: Verdict(task_key(t), False, "sandbox", "no"),
    )  # fmt: skip
    assert always.verdicts[0] is not None and always.verdicts[0].step == "sandbox"
    assert len(VerifyCache(tmp_path / "d.jsonl")) == 0
