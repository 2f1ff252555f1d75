"""Fixtures for the model tests: private platformdirs roots and local HTTP servers."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONFIG", "DATA", "STATE", "CACHE", "RUNTIME"):
        monkeypatch.setenv(f"SHELLAGENT_{name}_DIR", str(tmp_path / name.lower()))
    monkeypatch.delenv("SHELLAGENT_MODEL_URL_BASE", raising=False)
    monkeypatch.delenv("SHELLAGENT_MODEL_CATALOG", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    from shellagent.model import accepts

    accepts.forget()  # what an earlier test's servers accepted is not this test's


class LocalServer:
    """A threaded HTTP server on 127.0.0.1 with a random port, stopped at teardown."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> LocalServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def start_server() -> Iterator[Callable[[type[BaseHTTPRequestHandler]], LocalServer]]:
    """Start a ``LocalServer`` for a handler class; every one started is stopped after."""
    started: list[LocalServer] = []

    def start(handler: type[BaseHTTPRequestHandler]) -> LocalServer:
        server = LocalServer(handler).__enter__()
        started.append(server)
        return server

    yield start
    for server in started:
        server.__exit__()
