"""The shared model: loaded once, taken in arrival order, released when idle."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from shellagent.model import Backend
from shellagent.model.pool import Cancelled, FairLock, ModelPool
from shellagent.testing import ScriptedBackend


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


def test_the_lock_as_a_context_manager_serves_waiters_in_arrival_order() -> None:
    lock = FairLock()
    order: list[int] = []
    threads = []
    with lock:
        for i in range(5):
            thread = threading.Thread(target=lambda i=i: _take(lock, order, i))
            thread.start()
            threads.append(thread)
            while lock.waiting < i + 1:  # until thread i is queued
                time.sleep(0.001)
    for thread in threads:
        thread.join(timeout=5)
    assert order == [0, 1, 2, 3, 4]


def _take(lock: FairLock, order: list[int], i: int) -> None:
    with lock:
        order.append(i)
