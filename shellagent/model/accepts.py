"""Which reply constraint an OpenAI-compatible server accepts, learned and remembered.

Servers disagree: vLLM, llama-server and Ollama take the action format as ``response_format``
of type ``json_schema``; llama-cpp-python's ``llama_cpp.server`` refuses that type (HTTP 500,
pydantic's ``literal_error``) and takes a GBNF ``grammar`` instead; a server may refuse both.
``OpenAIBackend`` with no ``constraint`` given tries them in the order of ``ORDER``, moving
on only when the server's error names what was sent (``refuses``), and the one that worked
is kept per server (base URL and model): in memory for the process, and in
``<cache>/openai-servers.json`` for the next one. A constraint named in the spec
(``?constraint=…``) is used as given and never learned over.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from pathlib import Path
from typing import Literal, get_args

from shellagent import paths

__all__ = ["ORDER", "Constraint", "refuses", "remember", "remembered", "server_key"]

Constraint = Literal["json_schema", "grammar", "none"]
ORDER: tuple[Constraint, ...] = get_args(Constraint)  # the most precise first
FILE_NAME = "openai-servers.json"

log = logging.getLogger("shellagent.model")
_known: dict[str, Constraint] = {}
_loaded = False
_lock = threading.Lock()

# Statuses that say nothing about the request's fields: the key, the route, the load.
_NOT_ABOUT_THE_BODY = {401, 403, 404, 408, 429, 502, 503, 504}
# What an error must name to be about the constraint that was sent.
_NAMES: dict[str, tuple[str, ...]] = {
    "json_schema": ("response_format", "json_schema", "schema"),
    "grammar": ("grammar",),
}


def server_key(base_url: str, model: str | None) -> str:
    return f"{base_url.rstrip('/')}#{model or ''}"


def refuses(constraint: str, status: int, text: str) -> bool:
    """Whether an HTTP error (``status``, the body's ``text``) refuses ``constraint``: a
    4xx or 5xx about the request whose message names the field or the schema."""
    if status < 400 or status in _NOT_ABOUT_THE_BODY:
        return False
    lowered = text.lower()
    return any(name in lowered for name in _NAMES.get(constraint, ()))


def remembered(key: str) -> Constraint | None:
    """The constraint that last worked for the server ``key``, if one was learned."""
    with _lock:
        _load()
        return _known.get(key)


def remember(key: str, constraint: Constraint) -> None:
    """Keep ``constraint`` for ``key``, in memory and in the cache file (best effort: a
    read-only cache only means learning again next time)."""
    with _lock:
        _load()
        _known[key] = constraint
        path = _path()
        temp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        try:
            on_disk = _read(path)
            on_disk[key] = constraint
            paths.ensure_private_dir(path.parent)
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump(on_disk, f, indent=1, sort_keys=True)
            os.replace(temp, path)
        except OSError as exc:
            log.warning("could not remember %s for %s in %s: %s", constraint, key, path, exc)
            with contextlib.suppress(OSError):
                os.unlink(temp)


def forget() -> None:
    """Drop what this process learned (tests: a fresh process reads the file again)."""
    global _loaded
    with _lock:
        _known.clear()
        _loaded = False


def _path() -> Path:
    return paths.cache_dir() / FILE_NAME


def _load() -> None:
    global _loaded
    if not _loaded:
        for key, value in _read(_path()).items():
            _known.setdefault(key, value)
        _loaded = True


def _read(path: Path) -> dict[str, Constraint]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and v in ORDER}
