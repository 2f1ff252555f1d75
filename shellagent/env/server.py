"""``shellagent env serve``: episodes over HTTP on loopback, for an external trainer.

Every request carries ``Authorization: Bearer TOKEN`` (the token is made at start and
written, 0600, to a file only the user can read); bodies are JSON objects of at most 1 MiB.

    GET  /tasks                                  {"tasks": [ids]}
    POST /reset  {"task_id": ID} | {"task": {…}}  {"episode", "task_id", "observation"}
    POST /step   {"episode", "command"}           {"output", "exit_code", "decision",
                                                   "reasons", "done", "reward", "success"}
    POST /close  {"episode", "answer"?}           the same, with done, reward and success

Errors are ``{"error": message}`` with 400 (bad request), 401 (token), 404 (no such
episode or path), 409 (the episode is busy with another request, or too many episodes)
and 413 (body too large). The server only listens on a loopback address: the token is a
guard against other local users, not against a network.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import ValidationError

from shellagent.env.episodes import EpisodeBusy, Episodes, UnknownEpisode
from shellagent.errors import EnvironmentProblem, InputError
from shellagent.eval.tasks import Task
from shellagent.jsontypes import JsonObject

__all__ = ["BODY_MAX", "EnvServer", "is_loopback"]

BODY_MAX = 1 << 20


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Failure(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


class EnvServer:
    """An HTTP server over ``episodes``; ``serve_forever`` in a thread or the foreground."""

    def __init__(
        self,
        episodes: Episodes,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
    ) -> None:
        if not is_loopback(host):
            raise InputError(
                f"{host} is not a loopback address",
                hint="env serve listens on 127.0.0.1 or ::1 only; tunnel it if you must",
            )
        self.episodes = episodes
        self.token = token or secrets.token_urlsafe(32)
        handler = _handler_for(self)
        server_class = ThreadingHTTPServer
        if ":" in host:

            class _V6(ThreadingHTTPServer):
                address_family = __import__("socket").AF_INET6

            server_class = _V6
        self.httpd = server_class((host, port), handler)
        self.httpd.daemon_threads = True

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://[{name}]:{port}" if ":" in name else f"http://{name}:{port}"

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self) -> threading.Thread:
        """Serve on a daemon thread; ``shutdown`` stops it."""
        thread = threading.Thread(target=self.serve_forever, name="env-serve", daemon=True)
        thread.start()
        return thread

    def shutdown(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.episodes.shutdown()

    # -- requests -------------------------------------------------------------------

    def handle(self, method: str, path: str, body: JsonObject) -> JsonObject:
        if method == "GET" and path == "/tasks":
            return {"tasks": list(self.episodes.tasks)}
        if method != "POST" or path not in ("/reset", "/step", "/close"):
            raise _Failure(HTTPStatus.NOT_FOUND, f"no such endpoint: {method} {path}")
        if path == "/reset":
            return self._reset(body)
        episode = self.episodes.use(_text(body, "episode"))
        try:
            if path == "/step":
                return episode.step(_text(body, "command")).to_json() | {"episode": episode.id}
            answer = body.get("answer", "")
            if not isinstance(answer, str):
                raise InputError("answer must be a string")
            return self.episodes.close(episode, answer).to_json() | {"episode": episode.id}
        finally:
            self.episodes.release(episode)

    def _reset(self, body: JsonObject) -> JsonObject:
        if "task" in body:
            try:
                task: Task | str = Task.model_validate(body["task"])
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise InputError(f"task: {where}: {first['msg']}") from None
        else:
            task = _text(body, "task_id")
        episode = self.episodes.reset(task)
        return {"episode": episode.id, "task_id": episode.task.id, "observation": episode.task.task}


def _text(body: JsonObject, key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise InputError(f"{key!r} must be a non-empty string")
    return value


def _handler_for(server: EnvServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "shellagent-env"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: a trainer polls
            return

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def _serve(self, method: str) -> None:
            try:
                self._authorize()
                body = self._body() if method == "POST" else {}
                reply = server.handle(method, self.path, body)
                self._send(HTTPStatus.OK, reply)
            except _Failure as exc:
                self._send(exc.status, {"error": str(exc)})
            except EpisodeBusy as exc:
                self._send(HTTPStatus.CONFLICT, {"error": str(exc)})
            except UnknownEpisode as exc:
                self._send(HTTPStatus.NOT_FOUND, {"error": exc.text()})
            except InputError as exc:
                self._send(HTTPStatus.BAD_REQUEST, {"error": exc.text()})
            except EnvironmentProblem as exc:
                self._send(HTTPStatus.SERVICE_UNAVAILABLE, {"error": exc.text()})
            except Exception as exc:  # one bad episode must not take the server down
                self._send(
                    HTTPStatus.INTERNAL_SERVER_ERROR,
                    {"error": f"{exc.__class__.__name__}: {exc}"},
                )

        def _authorize(self) -> None:
            given = self.headers.get("Authorization", "")
            scheme, _, token = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                token.strip().encode(), server.token.encode()
            ):
                # The body is not read: close the connection rather than parse it.
                self.close_connection = True
                raise _Failure(HTTPStatus.UNAUTHORIZED, "missing or wrong token")

        def _body(self) -> JsonObject:
            try:
                length = int(self.headers.get("Content-Length", "0"))
            except ValueError:
                raise _Failure(HTTPStatus.BAD_REQUEST, "bad Content-Length") from None
            if length > BODY_MAX:
                self.close_connection = True
                raise _Failure(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "body over 1 MiB")
            raw = self.rfile.read(length) if length > 0 else b""
            try:
                body = json.loads(raw or b"{}")
            except (ValueError, UnicodeDecodeError):
                raise _Failure(HTTPStatus.BAD_REQUEST, "the body is not JSON") from None
            if not isinstance(body, dict):
                raise _Failure(HTTPStatus.BAD_REQUEST, "the body must be a JSON object")
            return body

        def _send(self, status: HTTPStatus, payload: JsonObject) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

    return Handler
