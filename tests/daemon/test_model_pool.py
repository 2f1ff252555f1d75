"""The shared model: loaded once, taken in arrival order, released when idle; and one
real run with the embedded model through the daemon."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.daemon.model_pool import Cancelled, FairLock, ModelPool
from shellagent.model import Backend
from shellagent.testing import ScriptedBackend
from tests.daemon.conftest import ask_inprocess, start_daemon, stop


def _loader(loads: list[str]) -> Callable[[str | None], Backend]:
    def load(spec: str | None) -> Backend:
        loads.append(str(spec))
        return ScriptedBackend([lambda m: '{"done": "ok"}'] * 100, name=str(spec))

    return load


def test_the_model_is_loaded_once_for_many_tasks_and_released_when_idle() -> None:
    loads: list[str] = []
    pool = ModelPool("m", idle_unload_s=0.3, loader=_loader(loads))
    for task in ("a", "b", "c"):
        pool.backend_for(None, task).generate([{"role": "user", "content": task}])
    assert loads == ["m"] and pool.loaded == "m"
    deadline = time.monotonic() + 5
    while pool.loaded is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pool.loaded is None
    pool.backend_for(None, "d").generate([{"role": "user", "content": "d"}])
    assert loads == ["m", "m"]
    pool.close()


def test_waiters_get_the_model_in_arrival_order_and_a_cancelled_one_leaves() -> None:
    lock = FairLock()
    lock.acquire()
    order: list[int] = []
    cancel = threading.Event()

    def wait(i: int, ev: threading.Event | None = None) -> None:
        try:
            lock.acquire(ev)
        except Cancelled:
            order.append(-i)
            return
        order.append(i)
        lock.release()

    threads = []
    for i in range(1, 5):
        t = threading.Thread(target=wait, args=(i, cancel if i == 2 else None))
        t.start()
        threads.append(t)
        while lock.waiting < i:
            time.sleep(0.01)
    cancel.set()
    time.sleep(0.3)
    lock.release()
    for t in threads:
        t.join(5)
    assert order == [-2, 1, 3, 4]


@pytest.mark.model
def test_the_embedded_model_proposes_through_a_warm_daemon(workdir: Path) -> None:
    d = start_daemon()
    try:
        run = ask_inprocess(
            "list the files here", "default", workdir, yes=True, dry_run=True, max_turns=2
        )
        summary = run.summary
        model_gave_up = summary["reason"] == "error" and "not actions" in summary["error"]
        assert summary["reason"] in ("finished", "turn_limit", "repeated_failure") or model_gave_up
        assert run.of("thinking")
        assert run.of("accepted")[0]["model"]
    finally:
        stop(d)
