"""A server that never stops talking (security review 3, M5): the ``openai:`` backend ends
the turn at its limits with ``stop = "length"``, closes the connection, and the client's
memory stays bounded.

The server is a real local HTTP server that ignores ``max_tokens`` and streams without
end (or until 512 MiB, so that a client without limits fails here instead of hanging);
the client is a real subprocess, so its peak resident memory (``VmHWM``) is its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

import pytest

BYTES_PER_TOKEN, CHARS_PER_TOKEN, REPLY_BYTES = 4096, 16, 65536

SAFETY_BYTES = 512 << 20
MAX_TOKENS = 256

CLIENT = r"""
import json, sys
from shellagent.model.openai import OpenAIBackend

def peak_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

before = peak_kib()
pieces = []
backend = OpenAIBackend(sys.argv[1], timeout_s=60)
try:
    reply = backend.generate(
        [{"role": "user", "content": "hi"}], max_tokens=int(sys.argv[2]), on_token=pieces.append
    )
    out = {"stop": reply.stop, "chars": len(reply.text), "streamed": len("".join(pieces))}
except Exception as exc:
    out = {"error": f"{type(exc).__name__}: {exc}"}
out["grew_kib"] = peak_kib() - before
print(json.dumps(out))
"""


class Endless(BaseHTTPRequestHandler):
    """Answers every chat request with a reply that does not end."""

    mode: ClassVar[str] = "pieces"
    sent: ClassVar[list[int]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        streamed = self.mode != "body"
        self.send_header("Content-Type", "text/event-stream" if streamed else "application/json")
        self.send_header("Connection", "close")
        self.end_headers()
        if self.mode == "pieces":  # well-formed events, 1000 characters each, forever
            event = {"choices": [{"index": 0, "delta": {"content": "x" * 1000}}]}
            head, unit = b"", b"data: " + json.dumps(event).encode() + b"\n\n"
        elif self.mode == "line":  # one event whose line never ends
            head, unit = b'data: {"choices": [{"delta": {"content": "', b"y" * 65536
        else:  # a non-streamed body that never ends
            head, unit = b'{"choices": [{"message": {"content": "', b"z" * 65536
        sent = 0
        try:
            self.wfile.write(head)
            while sent < SAFETY_BYTES:
                self.wfile.write(unit)
                sent += len(unit)
        except OSError:  # the client hung up: what it is meant to do
            pass
        type(self).sent.append(sent)


def run_client(url: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", CLIENT, f"{url}/v1", str(MAX_TOKENS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


@pytest.mark.parametrize("mode", ["pieces", "line", "body"])
def test_an_endless_reply_ends_the_turn_at_the_limit_with_bounded_memory(
    start_server: Callable[..., Any], mode: str
) -> None:
    handler: type[Endless] = type("Handler", (Endless,), {"mode": mode, "sent": []})
    server = start_server(handler)
    result = run_client(server.url)
    assert "error" not in result, result
    assert result["stop"] == "length"
    budget = REPLY_BYTES + MAX_TOKENS * BYTES_PER_TOKEN
    if mode == "pieces":  # the text up to the limit is kept, and on_token saw exactly it
        assert result["chars"] == result["streamed"] == MAX_TOKENS * CHARS_PER_TOKEN
    elif mode == "line":  # a line past the byte limit is never read whole
        assert result["chars"] == 0
    else:  # a cut JSON body says nothing: dropped whole
        assert result["chars"] == 0
    # A client without limits reads the whole 512 MiB and holds it, several times over.
    assert result["grew_kib"] < 32 * 1024, result
    # The client hung up: the server stopped well short of its safety limit (what it sent
    # beyond the budget sits in socket buffers).
    deadline = time.monotonic() + 10
    while not handler.sent and time.monotonic() < deadline:
        time.sleep(0.05)
    assert handler.sent and handler.sent[0] < budget + (16 << 20), handler.sent
