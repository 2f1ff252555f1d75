"""Fakes shipped with shellagent, for its own tests and for users' tests.

Each part owns a section below; sections are self-contained (their own imports).
"""

from __future__ import annotations

import re
import typing

# --- transcript: MemorySink ------------------------------------------------------------

if typing.TYPE_CHECKING:
    from collections.abc import Mapping as _Mapping
    from typing import Any as _Any

    from shellagent.events import TranscriptEvent as _TranscriptEvent

_E = typing.TypeVar("_E")


class MemorySink:
    """A ``TranscriptSink`` that keeps events in a list, stamped like the real writer.

    ``redactor`` (optional) is applied as the disk writer would, so a test can assert what
    would reach the disk; ``events`` are what a reader of that line would get back;
    ``closed`` tells whether the loop closed its sink.
    """

    def __init__(self, session_id: str = "memory", redactor: _Any = None) -> None:
        self.session_id = session_id
        self.redactor = redactor
        self.events: list[_TranscriptEvent] = []
        self.closed = False

    def write(self, event: _TranscriptEvent) -> None:
        from shellagent.events import from_dict
        from shellagent.transcript.store import redact_event, stamp_event

        if self.closed:
            raise RuntimeError("MemorySink is closed")
        line = stamp_event(event, len(self.events))
        if self.redactor is not None:
            line = redact_event(line, self.redactor)
        self.events.append(from_dict(line))

    def close(self) -> None:
        self.closed = True

    def of_type(self, kind: type[_E]) -> list[_E]:
        return [e for e in self.events if isinstance(e, kind)]


# --- model: ScriptedBackend ------------------------------------------------------------

if typing.TYPE_CHECKING:
    from collections.abc import Callable as _Callable
    from collections.abc import Iterable as _Iterable
    from collections.abc import Sequence as _Sequence

    from shellagent.model.backend import Generation as _Generation
    from shellagent.model.backend import ReplyFormat as _ReplyFormat

    _Reply = str | BaseException | _Callable[[list[dict[str, str]]], str]


class ScriptExhausted(AssertionError):
    """A ``ScriptedBackend`` was asked for more replies than its script holds."""


class ScriptedBackend:
    """A ``Backend`` that answers from a script instead of a model.

    Each reply is a string (returned as the model's text), a callable (given the messages,
    returns the text: for replies that depend on the conversation) or an exception instance
    (raised, to simulate a failing backend). ``calls`` records the messages of every turn and
    ``options`` the keyword arguments. Token counts are a deterministic estimate (four
    characters a token); ``evaluated_prompt_tokens`` counts only the messages added since the
    previous turn when the conversation was extended, as a prefix-reusing backend would.
    """

    def __init__(
        self,
        replies: _Iterable[_Reply],
        *,
        name: str = "scripted",
        context_size: int = 4096,
        writes_commands: bool = False,
    ) -> None:
        self.name = name
        self.context_size = context_size
        self.writes_commands = writes_commands  # offered recipes as tools (``agent/tools.py``)
        self._replies = list(replies)
        self.calls: list[list[dict[str, str]]] = []
        self.options: list[dict[str, object]] = []

    @property
    def remaining(self) -> int:
        return len(self._replies)

    def count_tokens(self, messages: _Sequence[dict[str, str]]) -> int:
        return sum(len(m.get("content", "")) // 4 + 4 for m in messages) + 3

    def generate(
        self,
        messages: _Sequence[dict[str, str]],
        *,
        reply_format: _ReplyFormat | None = None,
        max_tokens: int = 256,
        on_token: _Callable[[str], None] | None = None,
        capture_logprobs: bool = False,
    ) -> _Generation:
        from shellagent.model.backend import Generation, Stop, is_looping

        conversation = [dict(m) for m in messages]
        previous = self.calls[-1] if self.calls else None
        self.calls.append(conversation)
        self.options.append(
            {
                "reply_format": reply_format,
                "max_tokens": max_tokens,
                "capture_logprobs": capture_logprobs,
            }
        )
        if not self._replies:
            raise ScriptExhausted(f"ScriptedBackend has no reply for turn {len(self.calls)}")
        reply = self._replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        text = reply(conversation) if callable(reply) else reply
        # A "token" is a run of whitespace (BPE vocabularies merge those) or up to four other
        # characters; the cuts of a real backend apply to them.
        pieces: list[str] = []
        stop: Stop = "end"
        for piece in re.findall(r"\s+|\S{1,4}", text):
            pieces.append(piece)
            if on_token is not None:
                on_token(piece)
            if len(pieces) >= max_tokens:
                stop = "length"
            elif is_looping(pieces):
                stop = "repeat"
            else:
                continue
            break
        text = "".join(pieces)
        prompt = self.count_tokens(conversation)
        evaluated = prompt
        if previous is not None and conversation[: len(previous)] == previous:
            evaluated = prompt - self.count_tokens(previous)
        return Generation(
            text=text,
            prompt_tokens=prompt,
            evaluated_prompt_tokens=evaluated,
            generated_tokens=len(pieces),
            token_ids=tuple(range(len(pieces))) if capture_logprobs else None,
            logprobs=tuple(0.0 for _ in pieces) if capture_logprobs else None,
            stop=stop,
        )


class ScriptedKind:
    """The ``scripted:PATH`` backend kind (registered in the ``shellagent.backends`` entry
    point group), for tests and demos of the daemon and ``ask``.

    PATH is a JSON file: a list of replies, or ``{"replies": [...], "by_task": {"task
    text": [...]}, "context_size": N}``; a reply is the model's text or ``{"text": ...,
    "delay_s": ...}``. Each task gets a fresh ``ScriptedBackend`` of its own script.
    """

    name: str = "scripted"
    prefix: str | None = "scripted"
    per_task: bool = True

    def load(self, spec: str, *, task: str | None = None, **config: _Any) -> ScriptedBackend:
        import json
        import time
        from pathlib import Path

        from shellagent.errors import ModelUnavailable

        path = Path(spec.removeprefix("scripted:"))
        try:
            script: _Any = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise ModelUnavailable(f"cannot read script {path}: {exc}") from exc
        replies = script
        if isinstance(script, dict):
            replies = script.get("by_task", {}).get(task, script.get("replies", []))

        def delayed(text: str, delay_s: float) -> _Callable[[list[dict[str, str]]], str]:
            def reply(_messages: list[dict[str, str]]) -> str:
                time.sleep(delay_s)
                return text

            return reply

        items: list[_Reply] = []
        for reply in replies:
            if isinstance(reply, dict):
                items.append(delayed(str(reply.get("text", "")), float(reply.get("delay_s", 0))))
            else:
                items.append(str(reply))
        size = script.get("context_size", 4096) if isinstance(script, dict) else 4096
        return ScriptedBackend(items, name=f"scripted:{path.name}", context_size=int(size))


# --- agent: FakeShell -------------------------------------------------------------------

if typing.TYPE_CHECKING:
    from shellagent.sandbox import CommandResult as _CommandResult
    from shellagent.sandbox import Grants as _Grants

    _Answer = tuple[str, int] | _Callable[[str], tuple[str, int]]


class FakeShell:
    """A ``Shell`` (``shellagent.sandbox.Shell``) that answers commands from a table.

    ``answers`` maps a command to ``(output, exit_code)`` or to a callable that returns one;
    anything else gets ``default``. Commands in ``hang`` block until ``interrupt()`` or
    their timeout, like a ``sleep`` would. ``ran`` lists every command in order and
    ``confined`` the ones run as read-only. Commands in ``writes`` act as if they changed
    something: run confined, they fail the way a kernel refusal would (``refused``). ``grants``
    is what the model is told it may touch (by default: nothing, no sandbox profile).
    """

    def __init__(
        self,
        answers: _Mapping[str, _Answer] | None = None,
        *,
        default: tuple[str, int] = ("", 0),
        hang: _Iterable[str] = (),
        writes: _Iterable[str] = (),
        cwd: str = "/work",
        functions: frozenset[str] = frozenset(),
        grants: _Grants | None = None,
    ) -> None:
        import threading

        from shellagent.sandbox import Grants

        self.answers = dict(answers or {})
        self.default = default
        self.hang = set(hang)
        self.writes = set(writes)
        self.cwd = cwd
        self.functions = functions
        self.grants = grants if grants is not None else Grants()
        self.ran: list[str] = []
        self.confined: list[str] = []
        self.interrupted = threading.Event()
        self.closed = False

    def run(
        self,
        command: str,
        *,
        timeout: float | None = None,
        on_output: _Callable[[str], None] | None = None,
        confined: bool = False,
        judged: _Sequence[tuple[int, str]] = (),
    ) -> _CommandResult:
        """Answer ``command`` from the table; ``judged`` is accepted and not checked (the
        sandbox's driver holds that wall)."""
        import time

        from shellagent.sandbox import CommandResult

        self.ran.append(command)
        if confined:
            self.confined.append(command)
        start = time.monotonic()
        if command in self.hang:
            self.interrupted.clear()
            stopped = self.interrupted.wait(30.0 if timeout is None else timeout)
            return CommandResult(
                command, "", 130 if stopped else 124, time.monotonic() - start, timed_out=True
            )
        if confined and command in self.writes:
            output = f"{command.split()[0]}: Permission denied\n"
            return CommandResult(
                command, output, 1, time.monotonic() - start, confined=True, refused=True
            )
        answer = self.answers.get(command, self.default)
        output, code = answer(command) if callable(answer) else answer
        if on_output is not None and output:
            on_output(output)
        return CommandResult(command, output, code, time.monotonic() - start, confined=confined)

    def interrupt(self) -> None:
        self.interrupted.set()

    def close(self) -> None:
        """Nothing to tear down; ``closed`` says it was asked to."""
        self.closed = True


# --- model: LlamaServer (a real OpenAI-compatible server) -------------------------------


class LlamaServer:
    """llama-cpp-python's own OpenAI-compatible server (``python -m llama_cpp.server``,
    the ``scale`` extra) serving the embedded model with the shipped adapter (the default
    model) on 127.0.0.1: a real server for tests and benches of the OpenAI backend.

    A context manager: entering starts it and waits until ``/v1/models`` names it (at most
    ``startup_s``), leaving stops it. ``url`` is the base for ``openai:URL#ALIAS``. The
    process loads the model: run it under the model lock like any other model user.
    """

    ALIAS = "smollm2-135m-shell"

    def __init__(
        self,
        log_path: str,
        *,
        n_ctx: int = 4096,
        threads: int = 2,
        logits_all: bool = True,
        startup_s: float = 180.0,
    ) -> None:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log_path = log_path
        self.n_ctx = n_ctx
        self.threads = threads
        self.logits_all = logits_all
        self.startup_s = startup_s
        self.process: _Any = None

    def command(self) -> list[str]:
        """The command line (docs/models.md shows the same)."""
        import sys

        from shellagent.model.catalog import installed_path, lookup
        from shellagent.model.embedded import DEFAULT_ADAPTER, embedded_model_path

        return [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(embedded_model_path()),
            "--lora_path",
            str(installed_path(lookup(DEFAULT_ADAPTER))),
            "--model_alias",
            self.ALIAS,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.threads),
            "--n_threads_batch",
            str(self.threads),
            # logprobs need every position's logits (llama_cpp.server refuses them without)
            "--logits_all",
            str(self.logits_all),
        ]

    def __enter__(self) -> LlamaServer:
        import subprocess

        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                self.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        try:
            self._wait_until_up()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _wait_until_up(self) -> None:
        import json
        import time
        import urllib.request

        deadline = time.monotonic() + self.startup_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"llama_cpp.server exited {self.process.returncode}: {self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as response:
                    if json.load(response)["data"][0]["id"] == self.ALIAS:
                        return
            except (OSError, ValueError, KeyError, IndexError):
                pass
            time.sleep(0.25)
        raise RuntimeError(
            f"llama_cpp.server did not answer within {self.startup_s:g} s: {self.log_tail()}"
        )

    def log_tail(self, chars: int = 2000) -> str:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as log:
                return log.read()[-chars:]
        except OSError:
            return ""

    def __exit__(self, *exc: object) -> None:
        import os
        import signal
        import subprocess

        process = self.process
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
