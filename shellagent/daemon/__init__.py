"""The daemon: a private Unix socket, one warm model, one sandboxed session per ``ask``.

``server`` (the asyncio socket server), ``worker`` (one task in a thread), ``model_pool``
(the shared model, fair queue, idle unload), ``lock`` (runtime dir, pid lock, socket
binding), ``messages`` (validation of what clients send), ``status``, ``logs``, ``systemd``.
The wire format is ``shellagent.protocol``.
"""

from __future__ import annotations

from shellagent.daemon.server import Daemon
from shellagent.model.pool import FairLock, ModelPool

__all__ = ["Daemon", "FairLock", "ModelPool"]
