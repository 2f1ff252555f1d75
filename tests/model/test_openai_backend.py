"""The OpenAI-compatible backend against a real local HTTP server speaking a minimal API."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

import pytest

from shellagent.agent.actions import ACTION_FORMAT, ACTION_GBNF, RunAction, parse_action
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

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
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
            logprobs: dict[str, Any] = {"content": [{"token": piece, "logprob": -0.5}]}
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
    sent = handler.requests[0]
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
