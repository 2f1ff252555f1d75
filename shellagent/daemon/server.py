"""The daemon: an asyncio server on a private Unix socket, one task per connection.

Each connection is checked with ``SO_PEERCRED`` (another uid is refused whatever the
socket's mode), then reads one JSON message per line. Lines are capped at
``MAX_LINE_BYTES``; a malformed, oversized, unknown or out-of-order message gets an error
reply and the connection stays usable, so a misbehaving client can only hurt itself.
A client that disconnects, or sends ``cancel``, cancels its task.

There is no TCP listener, by design: the socket is the only way in.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shellagent import __version__, protocol
from shellagent.daemon import lock
from shellagent.daemon.messages import parse
from shellagent.daemon.status import memory_kb
from shellagent.daemon.worker import TaskWorker
from shellagent.events import (
    ApprovalReply,
    Ask,
    Cancel,
    ChangesReply,
    ChoiceReply,
    ConfirmReply,
    DaemonStatus,
    Failure,
    Status,
    Stop,
    Stopping,
    WireEvent,
)
from shellagent.model.pool import ModelPool

if TYPE_CHECKING:
    from shellagent.agent import JobInstaller
    from shellagent.model.backend import Backend

log = logging.getLogger("shellagent.daemon")

READ_CHUNK = 64 * 1024
SHUTDOWN_GRACE_S = 5.0


class Daemon:
    """Owns the socket, the model pool and the running tasks."""

    def __init__(
        self, runtime: Path, pool: ModelPool, *, job_installer: JobInstaller | None = None
    ) -> None:
        self.runtime = runtime
        self.pool = pool
        self.job_installer = job_installer
        self.started = time.time()
        self.workers: set[TaskWorker] = set()
        self.clients = 0
        self.refused = 0
        self._stopping: asyncio.Event | None = None

    # -- life cycle ----------------------------------------------------------------------

    def run(self) -> None:
        """Take the lock, bind the socket, serve until ``stop`` or SIGTERM/SIGINT."""
        lock.private_runtime_dir(self.runtime)
        pid_lock = lock.PidLock.acquire(self.runtime)
        sweep_leftovers()
        path = lock.socket_path(self.runtime)
        try:
            sock = lock.bind_socket(path)
            try:
                asyncio.run(self._serve(sock))
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
        finally:
            self.pool.close()
            sweep_leftovers()
            pid_lock.release()

    def serve_one(self, sock: socket.socket) -> None:
        """Serve one connected socket until it closes (``ask --no-daemon``, in a thread)."""

        async def serve() -> None:
            self._stopping = asyncio.Event()
            reader, writer = await asyncio.open_unix_connection(sock=sock)
            await self._handle(reader, writer)

        asyncio.run(serve())

    async def _serve(self, sock: Any) -> None:
        self._stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stopping.set)
        server = await asyncio.start_unix_server(self._handle, sock=sock)
        log.info("daemon %d listening on %s", os.getpid(), lock.socket_path(self.runtime))
        self.pool.warm()
        async with server:
            await self._stopping.wait()
            log.info("daemon stopping")
            server.close()
            for worker in list(self.workers):
                worker.cancel()
            deadline = time.monotonic() + SHUTDOWN_GRACE_S
            while any(not w.done for w in self.workers) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)

    # -- one connection ------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        pid, uid = lock.peer_credentials(writer.get_extra_info("socket"))
        if uid != os.getuid():
            self.refused += 1
            log.warning("refused a connection from uid %d (pid %d)", uid, pid)
            writer.write(
                protocol.error(protocol.REFUSED, "this daemon serves its own user only", fatal=True)
            )
            with contextlib.suppress(ConnectionError):
                await writer.drain()
            writer.close()
            return
        self.clients += 1
        worker: TaskWorker | None = None
        finished = asyncio.Event()

        def emit(event: WireEvent) -> None:  # from the worker thread, which encodes it
            try:
                line = protocol.encode_event(event)
            except protocol.ProtocolError:
                event = Failure(
                    code=protocol.TOO_LONG, message=f"{event.kind} event too large to send"
                )
                line = protocol.encode_event(event)
            loop.call_soon_threadsafe(_write, line, protocol.ends_task(event))

        def _write(line: bytes, last: bool) -> None:
            if writer.is_closing():
                return
            writer.write(line)
            if last:
                finished.set()

        async def send(line: bytes) -> None:
            writer.write(line)
            await writer.drain()

        closer = asyncio.ensure_future(finished.wait())
        try:
            async for line in _lines(reader, closer):
                if isinstance(line, protocol.ProtocolError):
                    await send(protocol.error(line.code, str(line)))
                    continue
                try:
                    message = parse(protocol.decode(line))
                except protocol.ProtocolError as exc:
                    await send(protocol.error(exc.code, str(exc)))
                    continue
                if isinstance(message, Ask):
                    if worker is not None:
                        await send(
                            protocol.error(
                                protocol.OUT_OF_ORDER, "this connection already has a task"
                            )
                        )
                        continue
                    worker = TaskWorker(
                        message,
                        pool=self.pool,
                        emit=emit,
                        client_pid=pid,
                        job_installer=self.job_installer,
                    )
                    self.workers.add(worker)
                    worker.start()
                elif isinstance(message, ApprovalReply | ChangesReply | ChoiceReply | ConfirmReply):
                    problem = (
                        "no task is running on this connection"
                        if worker is None
                        else worker.answer(message)
                    )
                    if problem:
                        await send(protocol.error(protocol.OUT_OF_ORDER, problem))
                elif isinstance(message, Cancel):
                    if worker is None:
                        await send(protocol.error(protocol.OUT_OF_ORDER, "nothing to cancel"))
                    else:
                        worker.cancel()
                elif isinstance(message, Status):
                    await send(protocol.encode_event(self.status()))
                elif isinstance(message, Stop):
                    await send(protocol.encode_event(Stopping()))
                    assert self._stopping is not None
                    self._stopping.set()
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            closer.cancel()
            if worker is not None:
                if not worker.done:
                    worker.cancel()  # the client went away or the daemon is stopping
                await _wait_done(worker)
                self.workers.discard(worker)
            self.clients -= 1
            with contextlib.suppress(ConnectionError, RuntimeError):
                if not writer.is_closing():
                    await writer.drain()
                writer.close()

    def status(self) -> DaemonStatus:
        rss, hwm = memory_kb()
        return DaemonStatus(
            pid=os.getpid(),
            version=__version__,
            protocol=protocol.VERSION,
            uptime_s=round(time.time() - self.started, 1),
            socket=str(lock.socket_path(self.runtime)),
            model=self.pool.describe(),
            sessions=tuple(w.describe() for w in self.workers if not w.done),
            clients=self.clients,
            refused=self.refused,
            rss_kb=rss,
            peak_rss_kb=hwm,
        )


async def _wait_done(worker: TaskWorker) -> None:
    while not worker.done:
        await asyncio.sleep(0.05)


def sweep_leftovers() -> None:
    """Remove what killed processes of this user left in /var/tmp: recipe trials' folders
    and sessions without changes (``trial.sweep``, ``workspace.sweep``); never another
    user's, never one in use. At the daemon's start and stop."""
    from shellagent.agent.trial import sweep as sweep_trials
    from shellagent.errors import ShellagentError
    from shellagent.transaction.workspace import sweep as sweep_sessions

    try:
        trials = sweep_trials()
        sessions = sweep_sessions()
    except (OSError, ShellagentError) as exc:
        log.warning("removing leftovers in /var/tmp: %s", exc)
        return
    if trials or sessions:
        log.info("removed %d trial folders and %d empty sessions", len(trials), len(sessions))


async def _lines(
    reader: asyncio.StreamReader, closer: asyncio.Future[Any]
) -> AsyncIterator[bytes | protocol.ProtocolError]:
    """Lines from ``reader`` until EOF or ``closer``; an oversized line becomes one error.

    The rest of an oversized line is skipped up to its newline, so the next message is
    read correctly and the client can go on.
    """
    buf = b""
    skipping = False
    while True:
        read = asyncio.ensure_future(reader.read(READ_CHUNK))
        done, _ = await asyncio.wait({read, closer}, return_when=asyncio.FIRST_COMPLETED)
        if read not in done:
            read.cancel()
            return
        chunk = read.result()
        if not chunk:
            return
        buf += chunk
        while True:
            newline = buf.find(b"\n")
            if newline < 0:
                if len(buf) > protocol.MAX_LINE_BYTES:
                    if not skipping:
                        yield protocol.ProtocolError(
                            protocol.TOO_LONG,
                            f"line longer than {protocol.MAX_LINE_BYTES} bytes: skipped",
                        )
                    skipping = True
                    buf = b""
                break
            line, buf = buf[: newline + 1], buf[newline + 1 :]
            if skipping:
                skipping = False
                continue
            if len(line) > protocol.MAX_LINE_BYTES:
                yield protocol.ProtocolError(protocol.TOO_LONG, "line too long: skipped")
                continue
            if line.strip():
                yield line


def configured_pool(given: str | None, *, idle_unload_s: float | None = 1800.0) -> ModelPool:
    """The model pool the user's ``config.toml`` asks for: ``model.default`` unless
    ``given``, with ``model.context`` and ``model.threads`` for a local model."""
    from shellagent import config
    from shellagent.model.registry import load_backend

    settings = config.load()

    def load(spec: str | None) -> Backend:
        return load_backend(spec, **config.backend_options(settings, spec))

    return ModelPool(config.model_spec(settings, given), idle_unload_s=idle_unload_s, loader=load)
