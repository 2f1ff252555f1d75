"""A small client for ``shellagent env serve``, and a Gym-style wrapper around it.

    client = EnvClient("http://127.0.0.1:8765", token)
    episode = client.reset("task-0042")               # {"episode", "task_id", "observation"}
    step = client.step(episode["episode"], "ls /var/log")
    end = client.close(episode["episode"], answer="…")  # {"done": true, "reward", "success"}

``ShellEnv`` follows Gymnasium's shape without depending on it: ``reset()`` returns
``(observation, info)`` and ``step(command)`` returns ``(observation, reward, terminated,
truncated, info)``; the action ``"done: ANSWER"`` (or ``env.finish(answer)``) ends the
episode and runs the check. Standard library only.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import TypedDict, cast

from shellagent.jsontypes import JsonObject

__all__ = ["EnvClient", "EnvError", "ShellEnv", "Started", "StepReply"]


class Started(TypedDict):
    """``/reset``'s reply."""

    episode: str
    task_id: str
    observation: str  # the task's text


class StepReply(TypedDict):
    """``/step``'s and ``/close``'s reply; ``reward`` and ``success`` once ``done``."""

    episode: str
    output: str
    exit_code: int | None
    decision: str
    reasons: list[str]
    done: bool
    reward: float | None
    success: bool | None


class EnvError(Exception):
    """The server refused a request: ``status`` is the HTTP status, the message its reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


class EnvClient:
    """Requests to one ``env serve``; safe to share between threads (no connection kept)."""

    def __init__(self, url: str, token: str, *, timeout_s: float = 600.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s

    def tasks(self) -> list[str]:
        return list(cast(list[str], self._call("GET", "/tasks")["tasks"]))

    def reset(self, task: str | Mapping[str, object]) -> Started:
        """Start an episode of a served task (by id) or of a task object."""
        body = {"task_id": task} if isinstance(task, str) else {"task": task}
        return cast(Started, self._call("POST", "/reset", body))

    def step(self, episode: str, command: str) -> StepReply:
        return cast(
            StepReply, self._call("POST", "/step", {"episode": episode, "command": command})
        )

    def close(self, episode: str, answer: str = "") -> StepReply:
        return cast(StepReply, self._call("POST", "/close", {"episode": episode, "answer": answer}))

    def _call(self, method: str, path: str, body: Mapping[str, object] | None = None) -> JsonObject:
        """The server's reply, a JSON object (its shape is in ``env/server.py``'s table)."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                reply: JsonObject = json.loads(response.read())
                return reply
        except urllib.error.HTTPError as exc:
            try:
                message = json.loads(exc.read()).get("error", exc.reason)
            except ValueError:
                message = str(exc.reason)
            raise EnvError(exc.code, str(message)) from None


class ShellEnv:
    """One episode at a time of a served task set, Gymnasium-style."""

    FINISH = "done:"

    def __init__(self, client: EnvClient, task: str | Mapping[str, object]) -> None:
        self.client = client
        self.task = task
        self.episode: str | None = None

    def reset(self) -> tuple[str, dict[str, str]]:
        if self.episode is not None:
            self.client.close(self.episode)
        started = self.client.reset(self.task)
        self.episode = started["episode"]
        return started["observation"], {"task_id": started["task_id"]}

    def step(self, command: str) -> tuple[str, float, bool, bool, StepReply]:
        if self.episode is None:
            raise RuntimeError("call reset() first")
        if command.startswith(self.FINISH):
            return self.finish(command[len(self.FINISH) :].strip())
        reply = self.client.step(self.episode, command)
        if reply["done"]:  # the step limit: the server ran the check
            self.episode = None
            return reply["output"], float(reply["reward"] or 0.0), False, True, reply
        return reply["output"], 0.0, False, False, reply

    def finish(self, answer: str = "") -> tuple[str, float, bool, bool, StepReply]:
        if self.episode is None:
            raise RuntimeError("call reset() first")
        reply = self.client.close(self.episode, answer)
        self.episode = None
        return reply["output"], float(reply["reward"] or 0.0), True, False, reply
