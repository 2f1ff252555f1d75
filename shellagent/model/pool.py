"""One warm model shared by every task, taken in turn, dropped when idle.

llama-cpp is not thread-safe, so each generation (and token count) holds the model
alone. Tasks wait in a first-come, first-served queue (``FairLock``): a long task cannot
starve a newer one, because the lock is released between turns. A task asking for a
different model waits its turn, then swaps the loaded one. After ``idle_unload_s``
without use the model is released; the next task loads it again.

A backend kind marked ``per_task`` (``scripted:PATH``, see ``shellagent.testing``) gives
each task a fresh backend of its own, still queued through the same lock as a real model.
The daemon keeps one pool; a task-set run with several jobs shares its model through one.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

# ``Cancelled`` is in the package's error tree now; still importable from here.
from shellagent.errors import Cancelled as Cancelled
from shellagent.events import ModelStatus
from shellagent.model.backend import Backend, Generation, Message, ReplyFormat, TokenCallback
from shellagent.model.embedded import resolve_default
from shellagent.model.registry import kind_for, load_backend

log = logging.getLogger("shellagent.model")


class FairLock:
    """A mutex granted in arrival order; a waiter can give up when its task is cancelled."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: deque[object] = deque()
        self._loads: set[object] = set()  # tickets that load the model, not a task's turn

    def acquire(
        self,
        cancel: threading.Event | None = None,
        on_wait: Callable[[int], None] | None = None,
        *,
        load: bool = False,
    ) -> None:
        """Wait for the lock. ``on_wait(n)``, when it must wait: ``n`` tasks are ahead
        (0: only the model's own loading is). ``load``: this holder only loads the model."""
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
            if load:
                self._loads.add(ticket)
            if self._queue[0] is not ticket and on_wait is not None:
                on_wait(sum(1 for t in list(self._queue)[:-1] if t not in self._loads))
            while self._queue[0] is not ticket:
                self._cond.wait(0.1)
                if cancel is not None and cancel.is_set():
                    self._queue.remove(ticket)
                    self._cond.notify_all()
                    raise Cancelled
        if cancel is not None and cancel.is_set():
            self.release()
            raise Cancelled

    def release(self) -> None:
        with self._cond:
            self._loads.discard(self._queue.popleft())
            self._cond.notify_all()

    def try_acquire(self) -> bool:
        with self._cond:
            if self._queue:
                return False
            self._queue.append(object())
            return True

    @property
    def waiting(self) -> int:
        with self._cond:
            return max(0, len(self._queue) - 1)

    def __enter__(self) -> None:
        self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


class ModelPool:
    """The daemon's model: loaded once, lent to one generation at a time."""

    def __init__(
        self,
        default_spec: str | None = None,
        *,
        idle_unload_s: float | None = 1800.0,
        loader: Callable[[str | None], Backend] | None = None,
    ) -> None:
        """``idle_unload_s`` None keeps the model loaded until ``close``."""
        self.default_spec = resolve_default(default_spec)
        self.idle_unload_s = idle_unload_s
        self._loader = loader or _load
        self.lock = FairLock()
        self._backend: Backend | None = None
        self._spec: str | None = None
        self._last_used = time.monotonic()
        self.loads = 0
        self._stop = threading.Event()
        if idle_unload_s is not None:
            threading.Thread(target=self._reap, name="model-idle", daemon=True).start()

    # -- status --------------------------------------------------------------------------

    @property
    def loaded(self) -> str | None:
        """The spec of the model in memory, if any."""
        return self._spec if self._backend is not None else None

    def describe(self) -> ModelStatus:
        backend = self._backend
        return ModelStatus(
            spec=self.default_spec,
            loaded=backend is not None,
            name=backend.name if backend is not None else None,
            loads=self.loads,
            waiting=self.lock.waiting,
            idle_s=round(time.monotonic() - self._last_used, 1),
            idle_unload_s=self.idle_unload_s,
        )

    # -- use -----------------------------------------------------------------------------

    def warm(self) -> None:
        """Load the default model now (in the background), so the first task finds it."""
        if kind_for(self.default_spec).per_task:
            return

        def load() -> None:
            try:
                self._with_model(self.default_spec, None, None, lambda _b: None, load=True)
            except Exception as exc:  # reported to the first task that needs the model
                log.warning("preloading %s failed: %s", self.default_spec, exc)

        threading.Thread(target=load, name="model-warm", daemon=True).start()

    def backend_for(
        self,
        spec: str | None,
        task: str,
        *,
        cancel: threading.Event | None = None,
        on_wait: Callable[[int], None] | None = None,
        on_generate: Callable[[], None] | None = None,
    ) -> PooledBackend:
        spec = resolve_default(spec or self.default_spec)
        kind = kind_for(spec)
        private = kind.load(spec, task=task) if kind.per_task else None
        return PooledBackend(self, spec, private, cancel, on_wait, on_generate)

    def _with_model(
        self,
        spec: str,
        cancel: threading.Event | None,
        on_wait: Callable[[int], None] | None,
        use: Callable[[Backend], Any],
        private: Backend | None = None,
        *,
        load: bool = False,
    ) -> Any:
        self.lock.acquire(cancel, on_wait, load=load)
        try:
            backend = private if private is not None else self._ensure(spec)
            return use(backend)
        finally:
            self._last_used = time.monotonic()
            self.lock.release()

    def _ensure(self, spec: str) -> Backend:
        if self._backend is not None and self._spec == spec:
            return self._backend
        self._drop()
        started = time.monotonic()
        self._backend = self._loader(spec)
        self._spec = spec
        self.loads += 1
        log.info("loaded model %s in %.1fs", spec, time.monotonic() - started)
        return self._backend

    def _drop(self) -> None:
        backend, self._backend, self._spec = self._backend, None, None
        if backend is not None:
            close = getattr(backend, "close", None)
            if callable(close):
                close()
            del backend
            gc.collect()
            log.info("model released")

    def _reap(self) -> None:
        assert self.idle_unload_s is not None
        limit = self.idle_unload_s
        while not self._stop.wait(min(5.0, max(0.05, limit / 4))):
            idle = time.monotonic() - self._last_used
            if self._backend is None or idle < limit:
                continue
            if self.lock.try_acquire():
                try:
                    if time.monotonic() - self._last_used >= limit:
                        log.info("model idle for %.0fs: releasing it", idle)
                        self._drop()
                finally:
                    self.lock.release()

    def close(self) -> None:
        self._stop.set()
        if self.lock.try_acquire():
            try:
                self._drop()
            finally:
                self.lock.release()


class PooledBackend:
    """A task's view of the pool: a ``Backend`` whose calls wait their turn."""

    def __init__(
        self,
        pool: ModelPool,
        spec: str,
        private: Backend | None,
        cancel: threading.Event | None,
        on_wait: Callable[[int], None] | None,
        on_generate: Callable[[], None] | None,
    ) -> None:
        self._pool = pool
        self.spec = spec
        self._private = private
        self._cancel = cancel
        self._on_wait = on_wait
        self._on_generate = on_generate
        self._tuned = False
        self.name = private.name if private is not None else spec
        self.context_size = private.context_size if private is not None else 0
        if private is None:
            self.context_size = self._call(lambda b: b.context_size)
            self.name = self._call(lambda b: b.name)
        self.writes_commands: bool = bool(
            getattr(private, "writes_commands", False)
            if private is not None
            else self._call(lambda b: getattr(b, "writes_commands", False))
        )

    def _call(self, use: Callable[[Backend], Any]) -> Any:
        return self._pool._with_model(self.spec, self._cancel, self._on_wait, use, self._private)

    def generate(
        self,
        messages: Sequence[Message],
        *,
        reply_format: ReplyFormat | None = None,
        max_tokens: int = 256,
        on_token: TokenCallback | None = None,
        capture_logprobs: bool = False,
    ) -> Generation:
        cancel = self._cancel

        def token(piece: str) -> None:
            # the task was cancelled while the model generates: stop at the next token, for
            # every caller (the recipe step's fill passes no callback of its own)
            if cancel is not None and cancel.is_set():
                raise Cancelled
            if on_token is not None:
                on_token(piece)

        def use(backend: Backend) -> Generation:
            if not self._tuned:  # once per task: the load may have changed since the last
                self._tuned = True
                adapt = getattr(backend, "adapt_threads", None)
                if adapt is not None:
                    threads = adapt()
                    log.info("model threads for this task: %d", threads)
            if self._on_generate is not None:
                self._on_generate()
            generation = backend.generate(
                messages,
                reply_format=reply_format,
                max_tokens=max_tokens,
                on_token=token,
                capture_logprobs=capture_logprobs,
            )
            if cancel is not None and cancel.is_set():  # during its last token
                raise Cancelled
            return generation

        result: Generation = self._call(use)
        return result

    def count_tokens(self, messages: Sequence[Message]) -> int:
        result: int = self._call(lambda b: b.count_tokens(messages))
        return result


def _load(spec: str | None) -> Backend:
    return load_backend(spec)
