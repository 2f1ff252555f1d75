"""The remote backend: any OpenAI-compatible chat server (llama-server, Ollama, vLLM, …).

Standard library only. One POST to ``{base}/chat/completions`` per turn, streamed as
server-sent events so ``on_token`` sees text as it arrives; an exception raised by
``on_token`` (the agent loop's cancel) closes the connection, which is how a server learns
to stop generating. The reply format travels as ``response_format`` (JSON schema: vLLM,
llama-server, OpenAI, Ollama) or as a GBNF ``grammar`` field (llama-server, llama-cpp-python's
``llama_cpp.server``, vLLM's ``guided_grammar`` aside); servers do not accept both at once,
hence ``constraint``: learned per server when not given (``accepts``: a refusal that names
what was sent moves on to the next kind), or chosen in the spec
(``#MODEL?constraint=grammar``). The server may still ignore it, so the agent parses every
reply and treats garbage as an ``InputError``; and it may ignore ``max_tokens``, so a reply
is cut at a size limit (``CHARS_PER_TOKEN``, ``BYTES_PER_TOKEN``).

Token logprobs come from the standard ``logprobs.content`` of each chunk; token ids where
the server gives them: llama-server's ``id`` per token, or vLLM's ``token_id:N`` tokens
(``--return-tokens-as-token-ids``).
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, cast

from shellagent.errors import InputError, ModelUnavailable
from shellagent.jsontypes import JsonObject
from shellagent.model import accepts
from shellagent.model.accepts import Constraint
from shellagent.model.backend import Generation, Message, ReplyFormat, Stop, TokenCallback

__all__ = ["Constraint", "OpenAIBackend", "OpenAISpec", "parse_openai_spec"]

CONSTRAINTS: tuple[str, ...] = accepts.ORDER

# The longest server text an error message quotes: enough to say what went wrong, short
# enough to stay one line.
DETAIL_CHARS = 160
# A reply is cut (``stop = "length"``, the connection closed) past ``max_tokens`` ×
# CHARS_PER_TOKEN characters of text, or past REPLY_BYTES + ``max_tokens`` × BYTES_PER_TOKEN
# bytes of HTTP body (SSE framing and per-token logprobs included): a server that ignores
# ``max_tokens`` or streams garbage costs this process a bounded amount of memory and time.
# No tokenizer's token is longer than 16 characters in practice (the embedded model's
# longest is 16 spaces), and a chunk with one token's logprobs is well under 1 KiB.
CHARS_PER_TOKEN = 16
BYTES_PER_TOKEN = 4096
REPLY_BYTES = 64 * 1024
log = logging.getLogger("shellagent.model")
SPEC_FORM = "openai:http://HOST:PORT/v1[#MODEL][?constraint=json_schema|grammar|none&timeout=S]"


class _JsonSchemaFormat(TypedDict):
    name: str
    schema: JsonObject


class _ResponseFormat(TypedDict):
    type: Literal["json_schema"]
    json_schema: _JsonSchemaFormat


class _Request(TypedDict, total=False):
    """The body of one ``/chat/completions`` request."""

    messages: list[Message]
    max_tokens: int
    temperature: float
    stream: bool
    stream_options: dict[str, bool]
    model: str
    seed: int
    logprobs: bool
    top_logprobs: int
    response_format: _ResponseFormat
    grammar: str


# A reply chunk, as servers send it. Read from outside: every field may be missing or of
# another type, so the code still checks what it uses; these say what it looks for.
class _Usage(TypedDict, total=False):
    prompt_tokens: int
    completion_tokens: int
    prompt_tokens_details: dict[str, int]  # OpenAI-style: ``cached_tokens``


class _Timings(TypedDict, total=False):
    prompt_n: int  # llama-server: prompt tokens it evaluated


class _Choice(TypedDict, total=False):
    delta: dict[str, str | None]  # streamed: ``content``
    message: dict[str, str | None]  # not streamed: ``content``
    logprobs: object  # ``{"content": [{"token", "logprob", "id"?}, …]}``: see ``_Tokens``
    finish_reason: str | None


class _Chunk(TypedDict, total=False):
    choices: list[_Choice]
    usage: _Usage | None
    timings: _Timings | None
    error: object


@dataclass(frozen=True)
class OpenAISpec:
    """What ``openai:URL#MODEL?OPTIONS`` says: where, which model, and backend options."""

    base_url: str
    model: str | None = None
    options: tuple[tuple[str, str | float], ...] = ()


def parse_openai_spec(spec: str) -> OpenAISpec:
    """``openai:http://host:port/v1#model?constraint=grammar&timeout=60``.

    The options follow the model name (after ``#``), so they never reach the URL the server
    sees; ``#?constraint=grammar`` gives options with no model name.
    """
    rest = spec.removeprefix("openai:")
    base, _, fragment = rest.partition("#")
    if not base.startswith(("http://", "https://")):
        raise InputError(f"not an OpenAI endpoint: {spec!r}", hint=f"write {SPEC_FORM}")
    model, _, query = fragment.partition("?")
    options: dict[str, str | float] = {}
    for key, value in urllib.parse.parse_qsl(query, keep_blank_values=True):
        if key == "constraint" and value in CONSTRAINTS:
            options["constraint"] = value
        elif key == "timeout" and _positive(value):
            options["timeout_s"] = float(value)
        else:
            raise InputError(f"bad option {key}={value!r} in {spec!r}", hint=f"write {SPEC_FORM}")
    return OpenAISpec(base.rstrip("/"), model or None, tuple(options.items()))


def _positive(value: str) -> bool:
    try:
        return float(value) > 0
    except ValueError:
        return False


class OpenAIBackend:
    """A chat model behind an OpenAI-compatible HTTP API.

    ``timeout_s`` bounds each wait for data (connecting, the first byte, the next chunk),
    not the whole reply: a long reply that keeps streaming is not cut.
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        context_size: int = 8192,
        temperature: float = 0.0,
        seed: int | None = None,
        constraint: Constraint | None = None,
        timeout_s: float = 300.0,
    ) -> None:
        if constraint is not None and constraint not in CONSTRAINTS:
            raise InputError(
                f"unknown constraint {constraint!r}", hint=f"use one of {', '.join(CONSTRAINTS)}"
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{self.base_url}" + (f"#{model}" if model else "")
        self.context_size = context_size
        # a served model is taken to write commands well (offered recipes as tools too)
        self.writes_commands = True
        self.temperature = temperature
        self.seed = seed
        self.constraint = constraint  # None: learned per server (``accepts``)
        self.timeout_s = timeout_s
        self._api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """An estimate (about four characters a token): the tokenizer lives on the server."""
        chars = sum(len(m.get("content", "")) + len(m.get("role", "")) for m in messages)
        return chars // 4 + 4 * len(messages) + 3

    def _body(
        self,
        messages: Sequence[Message],
        reply_format: ReplyFormat | None,
        max_tokens: int,
        logprobs: bool,
        constraint: Constraint,
    ) -> _Request:
        body: _Request = {
            "messages": [dict(m) for m in messages],
            "max_tokens": max_tokens,
            "temperature": self.temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if self.model:
            body["model"] = self.model
        if self.seed is not None:
            body["seed"] = self.seed
        if logprobs:
            # One alternative per token, the fewest that makes every server answer:
            # llama-server returns no probabilities at all for 0 (and 20 when absent), and
            # llama_cpp.server none unless top_logprobs is set.
            body["logprobs"] = True
            body["top_logprobs"] = 1
        if reply_format is not None and constraint == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": reply_format.name,
                    "schema": dict(reply_format.json_schema),
                },
            }
        elif reply_format is not None and constraint == "grammar":
            body["grammar"] = reply_format.gbnf
        return body

    def generate(
        self,
        messages: Sequence[Message],
        *,
        reply_format: ReplyFormat | None = None,
        max_tokens: int = 256,
        on_token: TokenCallback | None = None,
        capture_logprobs: bool = False,
    ) -> Generation:
        if reply_format is None or self.constraint is not None:
            return self._generate(
                messages, reply_format, max_tokens, on_token, capture_logprobs, self.constraint
            )
        # No constraint given: the one this server took before, else the most precise;
        # a refusal that names it moves on to the next (the request failed before any
        # token, so nothing was streamed twice), and the one that worked is kept.
        key = accepts.server_key(self.base_url, self.model)
        known = accepts.remembered(key)
        first = known or accepts.ORDER[0]
        for constraint in (first, *(c for c in accepts.ORDER if c != first)):
            try:
                generation = self._generate(
                    messages, reply_format, max_tokens, on_token, capture_logprobs, constraint
                )
            except _Refused as exc:
                if not accepts.refuses(constraint, exc.status, exc.body):
                    raise
                log.info("%s refused the %s constraint: %s", self.name, constraint, exc.message)
                continue
            if constraint != (known or accepts.ORDER[0]):
                accepts.remember(key, constraint)
            return generation
        raise AssertionError("unreachable: 'none' sends nothing a server can refuse")

    def _generate(
        self,
        messages: Sequence[Message],
        reply_format: ReplyFormat | None,
        max_tokens: int,
        on_token: TokenCallback | None,
        capture_logprobs: bool,
        constraint: Constraint | None,
    ) -> Generation:
        url = f"{self.base_url}/chat/completions"
        body = self._body(
            messages, reply_format, max_tokens, capture_logprobs, constraint or "none"
        )
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(
            url, data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        start = time.perf_counter()
        first_token_s = 0.0
        pieces: list[str] = []
        room = max_tokens * CHARS_PER_TOKEN  # characters of text still taken
        tokens = _Tokens()
        usage: _Usage = {}
        timings: _Timings = {}
        stop: Stop = "end"
        try:
            # The `with` closes the connection whatever ends the loop, an exception from
            # on_token or a cut included: the server sees the disconnect and stops.
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                budget = REPLY_BYTES + max_tokens * BYTES_PER_TOKEN
                for chunk in _chunks(response, url, budget):
                    usage = chunk.get("usage") or usage
                    timings = chunk.get("timings") or timings
                    for choice in chunk.get("choices") or []:
                        delta = choice.get("delta") or choice.get("message") or {}
                        piece = delta.get("content") or ""
                        tokens.add(choice.get("logprobs"))
                        if choice.get("finish_reason") == "length":
                            stop = "length"
                        if piece:
                            if not pieces:
                                first_token_s = time.perf_counter() - start
                            piece = piece[:room]
                            room -= len(piece)
                            pieces.append(piece)
                            if on_token is not None:
                                on_token(piece)
                            if room <= 0:
                                raise _TooLong
        except _TooLong:
            stop = "length"
        except urllib.error.HTTPError as exc:
            text = _error_text(exc)
            raise _Refused(
                f"{url} answered HTTP {exc.code}: {_error_detail(text) or exc.reason}",
                hint="check the base URL and the model name after '#'"
                if exc.code in (400, 404, 422)
                else "see the server's log",
                status=exc.code,
                body=text,
            ) from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                raise self._timed_out(url) from None
            why = reason.strerror if isinstance(reason, OSError) and reason.strerror else reason
            raise ModelUnavailable(
                f"could not reach {url}: {str(why).lower()}", hint="is the server running?"
            ) from None
        except TimeoutError:
            raise self._timed_out(url) from None
        except ConnectionError as exc:
            raise ModelUnavailable(
                f"lost the connection to {url}: {_one_line(str(exc)) or type(exc).__name__}",
                hint="is the server running? see its log",
            ) from None
        except http.client.HTTPException as exc:
            raise ModelUnavailable(
                f"{url} did not answer in HTTP: {type(exc).__name__} {_one_line(str(exc))}",
                hint="is this an OpenAI-compatible endpoint (…/v1)?",
            ) from None
        text = "".join(pieces)
        prompt_tokens = int(usage.get("prompt_tokens") or self.count_tokens(messages))
        generated = int(usage.get("completion_tokens") or tokens.count or len(pieces))
        captured = capture_logprobs and bool(tokens.logprobs)
        return Generation(
            text=text,
            prompt_tokens=prompt_tokens,
            evaluated_prompt_tokens=_evaluated(usage, timings, prompt_tokens),
            generated_tokens=generated,
            token_ids=tokens.ids() if captured else None,
            logprobs=tuple(tokens.logprobs) if captured else None,
            duration_s=time.perf_counter() - start,
            first_token_s=first_token_s,
            stop=stop,
        )

    def _timed_out(self, url: str) -> ModelUnavailable:
        return ModelUnavailable(
            f"{url} sent nothing for {self.timeout_s:g} s",
            hint="the server is overloaded or stuck; wait, or raise the limit with "
            "#MODEL?timeout=SECONDS",
        )


class _Tokens:
    """The generated tokens' logprobs and ids, gathered from the chunks' ``logprobs``."""

    def __init__(self) -> None:
        self.logprobs: list[float] = []
        self._ids: list[int | None] = []

    @property
    def count(self) -> int:
        return len(self.logprobs)

    def add(self, logprobs: Any) -> None:
        content = logprobs.get("content") if isinstance(logprobs, dict) else None
        for item in content or []:
            if not isinstance(item, dict) or not isinstance(item.get("logprob"), int | float):
                continue
            self.logprobs.append(float(item["logprob"]))
            self._ids.append(_token_id(item))

    def ids(self) -> tuple[int, ...] | None:
        """The ids if the server gave one for every token, else None (never a partial list:
        ids must line up with the logprobs)."""
        if not self._ids or any(i is None for i in self._ids):
            return None
        return tuple(i for i in self._ids if i is not None)


_VLLM_TOKEN_ID = re.compile(r"token_id:(\d+)")


def _token_id(item: dict[str, object]) -> int | None:
    """llama-server sends ``id``; vLLM with ``--return-tokens-as-token-ids`` spells the
    token ``token_id:N``; others send text only."""
    found = item.get("id")
    if isinstance(found, int) and not isinstance(found, bool):
        return found
    match = _VLLM_TOKEN_ID.fullmatch(str(item.get("token", "")))
    return int(match.group(1)) if match else None


class _TooLong(Exception):
    """The reply went past its size limit: it ends there, as if at ``max_tokens``."""


def _chunks(response: Any, url: str, budget: int) -> Iterator[_Chunk]:
    """JSON objects from an SSE stream, or the single object of a non-streaming reply;
    ``_TooLong`` once more than ``budget`` bytes of body would have to be read (a line is
    never read past it either, so an endless line costs no more)."""
    content_type = response.headers.get("Content-Type", "")
    if "text/event-stream" not in content_type:
        body = response.read(budget + 1)
        if len(body) > budget:
            raise _TooLong  # a cut JSON object says nothing: the reply is dropped whole
        yield _json_object(body.decode("utf-8", errors="replace"), url)
        return
    finished = False
    while raw := response.readline(budget + 1):
        budget -= len(raw)
        if budget < 0:
            raise _TooLong
        line = raw.decode("utf-8", errors="replace").strip()
        if not line.startswith("data:"):
            continue  # blank separators, ": ping" comments, event names
        data = line[5:].strip()
        if data == "[DONE]":
            return
        chunk = _json_object(data, url)
        finished = finished or any(
            isinstance(c, dict) and c.get("finish_reason") for c in chunk.get("choices") or []
        )
        yield chunk
    if not finished:
        # A stream cut without [DONE] or a finish_reason: the server died or dropped us.
        raise ModelUnavailable(
            f"{url} ended the reply stream before the reply was finished",
            hint="is the server running? see its log",
        )


def _json_object(text: str, url: str) -> _Chunk:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        obj = None
    if not isinstance(obj, dict):
        raise InputError(
            f"{url} returned something that is not an OpenAI response: {text[:80]!r}",
            hint="is this an OpenAI-compatible endpoint (…/v1)?",
        )
    if obj.get("error"):
        raise ModelUnavailable(
            f"{url} returned an error: {_error_message(obj['error'])}", hint="see the server's log"
        )
    return cast(_Chunk, obj)  # a JSON object; what is read from it is checked there


class _Refused(ModelUnavailable):
    """The server answered with an HTTP error: ``status`` and (the first 4 KiB of) the
    ``body``, so that a refused constraint can be told from other errors."""

    def __init__(self, message: str, *, hint: str, status: int, body: str) -> None:
        super().__init__(message, hint=hint)
        self.status = status
        self.body = body


def _error_text(exc: urllib.error.HTTPError) -> str:
    try:
        return exc.read(4096).decode("utf-8", errors="replace")
    except (OSError, http.client.HTTPException):
        return ""
    finally:
        exc.close()


def _error_detail(text: str) -> str:
    """One line from an error response: its JSON ``error``/``detail`` message if any."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        return _one_line(text)
    if isinstance(obj, dict):
        for key in ("error", "detail", "message"):
            if obj.get(key):
                return _error_message(obj[key])
    return _one_line(text)


def _error_message(error: Any) -> str:
    if isinstance(error, dict) and error.get("message"):
        return _one_line(str(error["message"]))
    if isinstance(error, str):
        return _one_line(error)
    return _one_line(json.dumps(error, ensure_ascii=False))


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= DETAIL_CHARS else line[: DETAIL_CHARS - 1] + "…"


def _evaluated(usage: _Usage, timings: _Timings, prompt_tokens: int) -> int:
    # llama-server reports what it evaluated; OpenAI-style servers report cache hits.
    if "prompt_n" in timings:
        return int(timings["prompt_n"])
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    return prompt_tokens - int(cached) if cached is not None else prompt_tokens
