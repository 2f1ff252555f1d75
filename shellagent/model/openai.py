"""The remote backend: any OpenAI-compatible chat server (llama-server, Ollama, vLLM, …).

Standard library only. One POST to ``{base}/chat/completions`` per turn, streamed as
server-sent events so ``on_token`` sees text as it arrives. The reply format travels as
``response_format`` (JSON schema, understood by all of the above) or, for llama-server,
as its ``grammar`` field; such servers do not accept both at once, hence ``constraint``.
The server may still ignore it, so the agent parses every reply and treats garbage as an
``InputError``.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from typing import Any, Literal

from shellagent.errors import InputError, ModelUnavailable
from shellagent.model.backend import Generation, Message, ReplyFormat, Stop, TokenCallback

__all__ = ["OpenAIBackend", "parse_openai_spec"]

Constraint = Literal["json_schema", "grammar", "none"]


def parse_openai_spec(spec: str) -> tuple[str, str | None]:
    """``openai:http://host:port/v1#model`` -> (base URL, model or None)."""
    rest = spec.removeprefix("openai:")
    base, _, model = rest.partition("#")
    if not base.startswith(("http://", "https://")):
        raise InputError(
            f"not an OpenAI endpoint: {spec!r}", hint="write openai:http://HOST:PORT/v1[#MODEL]"
        )
    return base.rstrip("/"), model or None


class OpenAIBackend:
    """A chat model behind an OpenAI-compatible HTTP API."""

    def __init__(
        self,
        base_url: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        context_size: int = 8192,
        temperature: float = 0.0,
        seed: int | None = None,
        constraint: Constraint = "json_schema",
        timeout_s: float = 300.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{self.base_url}" + (f"#{model}" if model else "")
        self.context_size = context_size
        self.temperature = temperature
        self.seed = seed
        self.constraint = constraint
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
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
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
            body["logprobs"] = True
        if reply_format is not None and self.constraint == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": reply_format.name,
                    "schema": dict(reply_format.json_schema),
                },
            }
        elif reply_format is not None and self.constraint == "grammar":
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
        url = f"{self.base_url}/chat/completions"
        body = self._body(messages, reply_format, max_tokens, capture_logprobs)
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(
            url, data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        start = time.perf_counter()
        first_token_s = 0.0
        pieces: list[str] = []
        logprobs: list[float] = []
        usage: dict[str, Any] = {}
        timings: dict[str, Any] = {}
        stop: Stop = "end"
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                for chunk in _chunks(response, url):
                    usage = chunk.get("usage") or usage
                    timings = chunk.get("timings") or timings
                    for choice in chunk.get("choices") or []:
                        delta = choice.get("delta") or choice.get("message") or {}
                        piece = delta.get("content") or ""
                        logprobs.extend(_logprobs_of(choice))
                        if choice.get("finish_reason") == "length":
                            stop = "length"
                        if piece:
                            if not pieces:
                                first_token_s = time.perf_counter() - start
                            pieces.append(piece)
                            if on_token is not None:
                                on_token(piece)
        except urllib.error.HTTPError as exc:
            detail = exc.read(300).decode("utf-8", errors="replace").strip()
            raise ModelUnavailable(
                f"{url} answered HTTP {exc.code}: {detail or exc.reason}",
                hint="check the base URL and the model name after '#'",
            ) from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            why = reason.strerror if isinstance(reason, OSError) and reason.strerror else reason
            raise ModelUnavailable(
                f"could not reach {url}: {str(why).lower()}", hint="is the server running?"
            ) from None
        except (TimeoutError, ConnectionError) as exc:
            raise ModelUnavailable(
                f"lost the connection to {url}: {exc}", hint="is the server running?"
            ) from None
        text = "".join(pieces)
        prompt_tokens = int(usage.get("prompt_tokens") or self.count_tokens(messages))
        generated = int(usage.get("completion_tokens") or len(pieces))
        return Generation(
            text=text,
            prompt_tokens=prompt_tokens,
            evaluated_prompt_tokens=_evaluated(usage, timings, prompt_tokens),
            generated_tokens=generated,
            token_ids=None,
            logprobs=tuple(logprobs) if capture_logprobs and logprobs else None,
            duration_s=time.perf_counter() - start,
            first_token_s=first_token_s,
            stop=stop,
        )


def _chunks(response: Any, url: str) -> Iterator[dict[str, Any]]:
    """JSON objects from an SSE stream, or the single object of a non-streaming reply."""
    content_type = response.headers.get("Content-Type", "")
    if "text/event-stream" not in content_type:
        yield _json_object(response.read().decode("utf-8", errors="replace"), url)
        return
    for raw in response:
        line = raw.decode("utf-8", errors="replace").strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            return
        yield _json_object(data, url)


def _json_object(text: str, url: str) -> dict[str, Any]:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        obj = None
    if not isinstance(obj, dict):
        raise InputError(
            f"{url} returned something that is not an OpenAI response: {text[:80]!r}",
            hint="is this an OpenAI-compatible endpoint (…/v1)?",
        )
    if "error" in obj:
        raise ModelUnavailable(f"{url} returned an error: {obj['error']}")
    return obj


def _logprobs_of(choice: dict[str, Any]) -> list[float]:
    content = (choice.get("logprobs") or {}).get("content") or []
    return [float(item["logprob"]) for item in content if "logprob" in item]


def _evaluated(usage: dict[str, Any], timings: dict[str, Any], prompt_tokens: int) -> int:
    # llama-server reports what it evaluated; OpenAI-style servers report cache hits.
    if "prompt_n" in timings:
        return int(timings["prompt_n"])
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    return prompt_tokens - int(cached) if cached is not None else prompt_tokens
