"""The sandbox as an environment for trainers: episodes of a task set over HTTP on loopback.

``shellagent env serve TASKS.jsonl`` serves ``reset`` / ``step`` / ``close`` (``server.py``);
``EnvClient`` and the Gym-style ``ShellEnv`` drive it from Python (``client.py``); the
token's file is written by ``token.py``.
"""

from __future__ import annotations

from shellagent.env.client import EnvClient, EnvError, ShellEnv
from shellagent.env.episodes import Episode, EpisodeBusy, Episodes, StepResult
from shellagent.env.server import EnvServer
from shellagent.env.token import TokenFile

__all__ = [
    "EnvClient",
    "EnvError",
    "EnvServer",
    "Episode",
    "EpisodeBusy",
    "Episodes",
    "ShellEnv",
    "StepResult",
    "TokenFile",
]
