"""The OpenAI-compatible backend against a real local HTTP server speaking a minimal API."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest

from shellagent.agent.actions import ACTION_FORMAT, ACTION_GBNF, RunAction, parse_action
from shellagent.cli.main import main
from shellagent.errors import InputError, ModelUnavailable
from shellagent.model import load_backend
from shellagent.model.openai import OpenAIBackend

REPLY = '{"cmd": "df -h", "why": "free space"}'


class ChatServer(BaseHTTPRequestHandler):
    """POST /v1/chat/completions, streamed (SSE) or not, like llama-server."""

    requests: ClassVar[list[dict[str, Any]]] = []
    reply: ClassVar[str] = REPLY
    raw_body: ClassVar[bytes | None] = None
    streams: ClassVar[bool] = True
    finish_reason: ClassVar[str] = "stop"
    # how tokens carry their ids: "" none, "llama" an ``id`` field, "vllm" ``token_id:N``
    ids: ClassVar[str] = ""

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.answer(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))

    def answer(self, body: dict[str, Any]) -> None:
        type(self).requests.append(
            {"path": self.path, "auth": self.headers["Authorization"], **body}
        )
        if self.path != "/v1/chat/completions":
            self.send_error(404, "no such route")
            return
        if self.raw_body is not None:
            self._send("application/json", self.raw_body)
            return
        usage = {"prompt_tokens": 40, "completion_tokens": 9}
        if not body.get("stream") or not self.streams:
            message = {"role": "assistant", "content": self.reply}
            choice = {"index": 0, "message": message, "finish_reason": self.finish_reason}
            answer = {"choices": [choice], "usage": usage}
            self._send("application/json", json.dumps(answer).encode())
            return
        events: list[dict[str, Any]] = []
        for i in range(0, len(self.reply), 5):
            piece = self.reply[i : i + 5]
            item: dict[str, Any] = {"token": piece, "logprob": -0.5}
            if self.ids == "llama":
                item["id"] = 100 + i
            elif self.ids == "vllm":
                item["token"] = f"token_id:{100 + i}"
            logprobs: dict[str, Any] = {"content": [item]}
            events.append(
                {"choices": [{"index": 0, "delta": {"content": piece}, "logprobs": logprobs}]}
            )
        events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": self.finish_reason}]})
        events.append({"choices": [], "usage": usage, "timings": {"prompt_n": 12}})
        data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
        self._send("text/event-stream", data + b"data: [DONE]\n\n")

    def _send(self, content_type: str, data: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _handler(**attrs: Any) -> type[ChatServer]:
    return type("Handler", (ChatServer,), {"requests": [], **attrs})


MESSAGES = [{"role": "user", "content": "how much disk is free?"}]


def test_reply_streams_in_and_the_action_schema_is_sent(start_server: Callable[..., Any]) -> None:
    handler = _handler()
    server = start_server(handler)
    backend = load_backend(f"openai:{server.url}/v1#qwen")
    pieces: list[str] = []
    generation = backend.generate(
        MESSAGES, on_token=pieces.append, capture_logprobs=True, reply_format=ACTION_FORMAT
    )
    assert parse_action(generation.text) == RunAction(cmd="df -h", why="free space")
    assert "".join(pieces) == generation.text and len(pieces) > 1
    assert generation.prompt_tokens == 40 and generation.evaluated_prompt_tokens == 12
    assert generation.logprobs is not None and set(generation.logprobs) == {-0.5}
    assert generation.token_ids is None  # this server sends token text only
    sent = handler.requests[0]
    assert sent["logprobs"] is True and sent["top_logprobs"] == 1
    assert sent["model"] == "qwen" and sent["messages"] == MESSAGES
    assert sent["response_format"]["json_schema"]["schema"]["anyOf"][1]["required"] == ["done"]
    assert "grammar" not in sent


def test_llama_server_grammar_can_be_sent_instead_of_the_schema(
    start_server: Callable[..., Any],
) -> None:
    handler = _handler()
    server = start_server(handler)
    OpenAIBackend(f"{server.url}/v1", constraint="grammar", api_key="k").generate(
        MESSAGES, reply_format=ACTION_FORMAT
    )
    sent = handler.requests[0]
    assert sent["grammar"] == ACTION_GBNF and "response_format" not in sent
    assert sent["auth"] == "Bearer k"


def test_unconstrained_requests_carry_no_schema(start_server: Callable[..., Any]) -> None:
    handler = _handler()
    server = start_server(handler)
    OpenAIBackend(f"{server.url}/v1").generate(MESSAGES)
    assert "response_format" not in handler.requests[0]


def test_a_server_that_does_not_stream_is_read_too(start_server: Callable[..., Any]) -> None:
    server = start_server(_handler(streams=False))
    generation = OpenAIBackend(f"{server.url}/v1").generate(MESSAGES, reply_format=ACTION_FORMAT)
    assert generation.text == REPLY and generation.evaluated_prompt_tokens == 40


@pytest.mark.parametrize("streams", [True, False])
def test_a_reply_cut_at_the_token_limit_says_so(
    start_server: Callable[..., Any], streams: bool
) -> None:
    server = start_server(_handler(reply=REPLY[:12], finish_reason="length", streams=streams))
    backend = OpenAIBackend(f"{server.url}/v1")
    assert backend.generate(MESSAGES, max_tokens=3, reply_format=ACTION_FORMAT).stop == "length"
    finished = OpenAIBackend(f"{start_server(_handler(streams=streams)).url}/v1")
    assert finished.generate(MESSAGES, reply_format=ACTION_FORMAT).stop == "end"


def test_an_unreachable_server_says_connection_refused() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = load_backend(f"openai:http://127.0.0.1:{port}/v1")
    with pytest.raises(ModelUnavailable) as info:
        backend.generate(MESSAGES, reply_format=ACTION_FORMAT)
    assert info.value.message == (
        f"could not reach http://127.0.0.1:{port}/v1/chat/completions: connection refused"
    )
    assert info.value.hint == "is the server running?"


def test_a_wrong_path_is_model_unavailable_with_the_status(
    start_server: Callable[..., Any],
) -> None:
    server = start_server(_handler())
    with pytest.raises(ModelUnavailable, match="HTTP 404"):
        OpenAIBackend(f"{server.url}/api").generate(MESSAGES, reply_format=ACTION_FORMAT)


def test_a_response_that_is_not_json_is_an_input_error(start_server: Callable[..., Any]) -> None:
    server = start_server(_handler(raw_body=b"<html>hello</html>"))
    with pytest.raises(InputError, match="not an OpenAI response"):
        OpenAIBackend(f"{server.url}/v1").generate(MESSAGES, reply_format=ACTION_FORMAT)


def test_a_reply_that_ignores_the_schema_fails_to_parse_cleanly(
    start_server: Callable[..., Any],
) -> None:
    server = start_server(_handler(reply="I would run ls to see the files."))
    generation = OpenAIBackend(f"{server.url}/v1").generate(MESSAGES, reply_format=ACTION_FORMAT)
    with pytest.raises(InputError, match="not an action"):
        parse_action(generation.text)


@pytest.mark.parametrize("spec", ["openai:localhost:8080", "openai:ftp://x/v1"])
def test_a_malformed_endpoint_spec_is_an_input_error(spec: str) -> None:
    with pytest.raises(InputError, match="not an OpenAI endpoint"):
        load_backend(spec)


@pytest.mark.parametrize("ids", ["llama", "vllm"])
def test_token_ids_are_taken_where_the_server_gives_them(
    start_server: Callable[..., Any], ids: str
) -> None:
    server = start_server(_handler(ids=ids))
    generation = OpenAIBackend(f"{server.url}/v1").generate(MESSAGES, capture_logprobs=True)
    assert generation.logprobs is not None
    assert generation.token_ids == tuple(range(100, 100 + len(REPLY), 5))
    assert len(generation.token_ids) == len(generation.logprobs)
    assert OpenAIBackend(f"{server.url}/v1").generate(MESSAGES).token_ids is None


def test_spec_options_choose_the_constraint_and_the_timeout(
    start_server: Callable[..., Any],
) -> None:
    handler = _handler()
    server = start_server(handler)
    backend = load_backend(f"openai:{server.url}/v1#smol?constraint=grammar&timeout=7")
    assert isinstance(backend, OpenAIBackend)
    assert (backend.model, backend.constraint, backend.timeout_s) == ("smol", "grammar", 7.0)
    backend.generate(MESSAGES, reply_format=ACTION_FORMAT)
    assert handler.requests[0]["grammar"] == ACTION_GBNF
    assert handler.requests[0]["model"] == "smol"
    nameless = load_backend(f"openai:{server.url}/v1#?constraint=none")
    assert isinstance(nameless, OpenAIBackend)
    assert (nameless.model, nameless.constraint) == (None, "none")
    # options given in code win over the spec's
    chosen = load_backend(f"openai:{server.url}/v1#m?constraint=grammar", constraint="none")
    assert isinstance(chosen, OpenAIBackend) and chosen.constraint == "none"


@pytest.mark.parametrize(
    "option", ["constraint=regex", "timeout=0", "timeout=soon", "temperature=1", "grammar"]
)
def test_a_bad_spec_option_is_an_input_error(option: str) -> None:
    with pytest.raises(InputError, match="bad option") as info:
        load_backend(f"openai:http://127.0.0.1:9/v1#m?{option}")
    assert info.value.hint is not None and "constraint=json_schema|grammar|none" in info.value.hint


# What llama_cpp.server (llama-cpp-python 0.3) answers a ``json_schema`` response_format.
LLAMA_CPP_REFUSAL = (
    "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n"
    "  Input should be 'text' or 'json_object' [type=literal_error, input_value='json_schema',"
    " input_type=str]"
)


class Picky(ChatServer):
    """A server that refuses some reply constraints with an HTTP error naming them."""

    refused: ClassVar[tuple[str, ...]] = ("json_schema",)
    status: ClassVar[int] = 500

    def answer(self, body: dict[str, Any]) -> None:
        sent = (
            "json_schema" if "response_format" in body else "grammar" if "grammar" in body else ""
        )
        if sent and sent in self.refused:
            type(self).requests.append({"refused": sent, **body})
            message = LLAMA_CPP_REFUSAL if sent == "json_schema" else "unknown field: grammar"
            data = json.dumps({"error": {"message": message, "type": "internal_server_error"}})
            self.send_response(self.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data.encode())
            return
        super().answer(body)


def _sent(handler: type[ChatServer]) -> list[str]:
    """Which constraint each request carried, in order (refused ones marked)."""
    kinds = []
    for request in handler.requests:
        kind = (
            "json_schema"
            if "response_format" in request
            else "grammar"
            if "grammar" in request
            else "none"
        )
        kinds.append(kind + (" refused" if "refused" in request else ""))
    return kinds


def test_a_plain_spec_learns_the_grammar_from_a_server_that_refuses_the_schema(
    start_server: Callable[..., Any],
) -> None:
    from shellagent.model import accepts

    handler: type[Picky] = type("P", (Picky,), {"requests": []})
    server = start_server(handler)
    spec = f"openai:{server.url}/v1#smol"
    first = load_backend(spec).generate(MESSAGES, reply_format=ACTION_FORMAT)
    assert parse_action(first.text) == RunAction(cmd="df -h", why="free space")
    assert _sent(handler) == ["json_schema refused", "grammar"]
    assert handler.requests[1]["grammar"] == ACTION_GBNF
    load_backend(spec).generate(MESSAGES, reply_format=ACTION_FORMAT)  # remembered
    assert _sent(handler)[2:] == ["grammar"]
    saved = Path(os.environ["SHELLAGENT_CACHE_DIR"]) / "openai-servers.json"
    assert json.loads(saved.read_text()) == {f"{server.url}/v1#smol": "grammar"}
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    accepts.forget()  # as a new process: read back from the cache dir
    load_backend(spec).generate(MESSAGES, reply_format=ACTION_FORMAT)
    assert _sent(handler)[3:] == ["grammar"]
    # Another model on the same server is another key: learned on its own.
    load_backend(f"openai:{server.url}/v1#other").generate(MESSAGES, reply_format=ACTION_FORMAT)
    assert _sent(handler)[4:] == ["json_schema refused", "grammar"]


def test_a_server_that_refuses_both_constraints_gets_none_and_the_parser_decides(
    start_server: Callable[..., Any],
) -> None:
    handler = type(
        "P", (Picky,), {"requests": [], "refused": ("json_schema", "grammar"), "status": 400}
    )
    server = start_server(handler)
    backend = OpenAIBackend(f"{server.url}/v1")
    reply = backend.generate(MESSAGES, reply_format=ACTION_FORMAT)
    assert parse_action(reply.text) == RunAction(cmd="df -h", why="free space")
    assert _sent(handler) == ["json_schema refused", "grammar refused", "none"]
    backend.generate(MESSAGES, reply_format=ACTION_FORMAT)
    assert _sent(handler)[3:] == ["none"]


def test_a_refusal_that_does_not_name_the_constraint_is_not_retried(
    failing: Callable[[str], str],
) -> None:
    base = failing("500")  # out of memory: nothing about the request's fields
    error = _failure(base)
    assert error.message.endswith("answered HTTP 500: llama_decode failed: out of memory")
    assert not (Path(os.environ["SHELLAGENT_CACHE_DIR"]) / "openai-servers.json").exists()


def test_a_constraint_named_in_the_spec_is_used_as_given_and_never_learned_over(
    start_server: Callable[..., Any],
) -> None:
    handler = type("P", (Picky,), {"requests": []})
    server = start_server(handler)
    backend = load_backend(f"openai:{server.url}/v1#smol?constraint=json_schema")
    with pytest.raises(ModelUnavailable) as info:
        backend.generate(MESSAGES, reply_format=ACTION_FORMAT)
    assert "answered HTTP 500: 1 validation error" in info.value.message
    assert "literal_error" in info.value.message and "\n" not in info.value.message
    assert _sent(handler) == ["json_schema refused"]


def test_replies_without_a_format_send_no_constraint_and_learn_nothing(
    start_server: Callable[..., Any],
) -> None:
    handler = type("P", (Picky,), {"requests": []})
    server = start_server(handler)
    OpenAIBackend(f"{server.url}/v1").generate(MESSAGES)
    assert _sent(handler) == ["none"]


class Failing(BaseHTTPRequestHandler):
    """Answers every POST badly, as ``mode`` says."""

    mode: ClassVar[str] = ""
    started: ClassVar[dict[str, type[Failing]]] = {}  # by base URL
    release: ClassVar[threading.Event]
    disconnected: ClassVar[threading.Event]
    written: ClassVar[list[int]]

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        if self.mode == "500":
            body = {"error": {"message": "llama_decode failed:\n  out of memory", "code": 500}}
            self._start(500, "application/json")
            self.wfile.write(json.dumps(body).encode())
            return
        if self.mode == "500-text":
            self._start(500, "text/plain")
            self.wfile.write(b"Internal Server Error\n\nTraceback (most recent call last):\n...")
            return
        if self.mode == "slow":
            self.release.wait(30)  # until the test ends
            return
        self._start(200, "text/event-stream")
        chunk = {"choices": [{"index": 0, "delta": {"content": '{"cmd'}}]}
        self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        self.wfile.flush()
        if self.mode == "stall":
            self.release.wait(30)
        elif self.mode == "garbage":
            self.wfile.write(b"data: {'this is': not json\n\n")
        elif self.mode == "error-event":
            error = {"error": {"message": "context\nfull", "type": "server_error"}}
            self.wfile.write(b"data: " + json.dumps(error).encode() + b"\n\n")
        elif self.mode == "cut":
            pass  # the stream ends without a finish_reason or [DONE]
        elif self.mode == "endless":
            self._endless(chunk)

    def _endless(self, chunk: dict[str, Any]) -> None:
        line = b"data: " + json.dumps(chunk).encode() + b"\n\n"
        try:
            for _ in range(2000):  # about 40 s: far longer than a cancelled client reads
                self.wfile.write(line)
                self.wfile.flush()
                self.written.append(1)
                time.sleep(0.02)
        except OSError:  # the client closed the connection
            self.disconnected.set()

    def _start(self, code: int, content_type: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()


@pytest.fixture
def failing(start_server: Callable[..., Any]) -> Iterator[Callable[[str], str]]:
    """Start a ``Failing`` server in a mode; return its base URL."""
    release = threading.Event()

    def start(mode: str) -> str:
        handler = type(
            "F",
            (Failing,),
            {
                "mode": mode,
                "release": release,
                "disconnected": threading.Event(),
                "written": [],
            },
        )
        base = f"{start_server(handler).url}/v1"
        Failing.started[base] = handler
        return base

    yield start
    release.set()


def _failure(base: str, **options: Any) -> ModelUnavailable | InputError:
    with pytest.raises((ModelUnavailable, InputError)) as info:
        OpenAIBackend(base, **options).generate(MESSAGES, reply_format=ACTION_FORMAT)
    error = info.value
    assert isinstance(error, ModelUnavailable | InputError)
    assert "\n" not in error.message and error.hint
    return error


def test_a_500_is_one_line_with_the_servers_message(failing: Callable[[str], str]) -> None:
    base = failing("500")
    error = _failure(base)
    assert isinstance(error, ModelUnavailable)
    assert error.message == (
        f"{base}/chat/completions answered HTTP 500: llama_decode failed: out of memory"
    )
    assert error.hint == "see the server's log"
    text_error = _failure(failing("500-text"))
    assert text_error.message.endswith(
        "answered HTTP 500: Internal Server Error Traceback (most recent call last): ..."
    )


@pytest.mark.parametrize("mode", ["slow", "stall"])
def test_a_server_that_sends_nothing_times_out_with_the_limit_named(
    failing: Callable[[str], str], mode: str
) -> None:
    base = failing(mode)
    error = _failure(base, timeout_s=0.5)
    assert isinstance(error, ModelUnavailable)
    assert error.message == f"{base}/chat/completions sent nothing for 0.5 s"
    assert error.hint is not None and "?timeout=SECONDS" in error.hint


def test_garbage_in_the_stream_is_an_input_error(failing: Callable[[str], str]) -> None:
    error = _failure(failing("garbage"))
    assert isinstance(error, InputError)
    assert "not an OpenAI response: \"{'this is': not json\"" in error.message


def test_an_error_event_in_the_stream_is_model_unavailable(
    failing: Callable[[str], str],
) -> None:
    base = failing("error-event")
    error = _failure(base)
    assert isinstance(error, ModelUnavailable)
    assert error.message == f"{base}/chat/completions returned an error: context full"


def test_a_stream_cut_short_is_model_unavailable(failing: Callable[[str], str]) -> None:
    base = failing("cut")
    error = _failure(base)
    assert isinstance(error, ModelUnavailable)
    assert error.message == (
        f"{base}/chat/completions ended the reply stream before the reply was finished"
    )


def test_something_that_is_not_http_is_model_unavailable() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]

        def answer() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        error = _failure(f"http://127.0.0.1:{port}/v1")
        thread.join(timeout=5)
    assert isinstance(error, ModelUnavailable)
    assert error.message == (
        f"http://127.0.0.1:{port}/v1/chat/completions did not answer in HTTP: "
        "BadStatusLine SSH-2.0-OpenSSH_9.6"
    )


class Stop(Exception):
    """What a cancelling ``on_token`` raises (the agent loop raises its own)."""


def test_an_exception_from_on_token_closes_the_connection(
    failing: Callable[[str], str],
) -> None:
    base = failing("endless")
    handler = Failing.started[base]
    seen: list[str] = []

    def cancel_after_three(piece: str) -> None:
        seen.append(piece)
        if len(seen) == 3:
            raise Stop

    with pytest.raises(Stop):
        OpenAIBackend(base).generate(MESSAGES, on_token=cancel_after_three)
    assert len(seen) == 3
    # The server's next writes fail: the request ended when the client stopped reading.
    assert handler.disconnected.wait(20)
    assert len(handler.written) < 2000


@pytest.mark.slow
def test_eval_logprobs_from_a_server_reach_the_rl_export_with_token_ids(
    start_server: Callable[..., Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = start_server(_handler(ids="llama"))
    tasks = tmp_path / "tasks.jsonl"
    task = {"id": "df", "task": "how much disk is free?", "setup_commands": ["mkdir /data"]}
    tasks.write_text(json.dumps({**task, "success_condition": "[ -f /data/x ]"}) + "\n")
    out = tmp_path / "run"
    spec = f"openai:{server.url}/v1#m"
    # the model writes every command (no recipe turns, whose replies are not its own)
    common = ["eval", str(tasks), "--model", spec, "--max-turns", "2", "--examples", "0"]
    common += ["--recipes", "off"]
    assert main([*common, "--logprobs", "--json", "--out", str(out)]) == 0
    assert main([*common, "--json", "--out", str(tmp_path / "without")]) == 0
    capsys.readouterr()
    turns = {}
    for run in ("run", "without"):
        target = tmp_path / f"{run}.jsonl"
        export = ["export", "--format", "rl", "--from", str(tmp_path / run / "transcripts")]
        assert main([*export, "-o", str(target)]) == 0
        (record,) = [json.loads(line) for line in target.read_text().splitlines()]
        turns[run] = record["turns"]
    expected_ids = list(range(100, 100 + len(REPLY), 5))
    assert turns["run"] and all(t["reply"] == REPLY for t in turns["run"])
    for turn in turns["run"]:
        assert turn["logprobs"] == [-0.5] * len(expected_ids)
        assert turn["token_ids"] == expected_ids
    assert turns["without"] and all(
        t["logprobs"] is None and t["token_ids"] is None for t in turns["without"]
    )


def test_logprobs_need_a_model_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        '{"id": "t", "task": "t", "setup_commands": [], "success_condition": "true"}\n'
    )
    assert main(["eval", str(tasks), "--agent", "gold", "--logprobs"]) == 2
    assert "--logprobs has no effect with --agent gold" in capsys.readouterr().err
