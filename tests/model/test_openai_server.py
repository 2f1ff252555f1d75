"""The OpenAI backend against a real server: llama-cpp-python's own ``llama_cpp.server``
serving the embedded model with the shipped adapter (the default model), on 127.0.0.1.

Started once for the module. The server computes logprobs only with ``logits_all`` (its
default), and it refuses ``response_format`` of type ``json_schema`` (HTTP 500: it knows
only its own ``json_object``), so the action format goes as a GBNF ``grammar``: named in the
spec (``?constraint=grammar``), or learned by a plain spec from that refusal.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shellagent.agent.actions import ACTION_FORMAT, parse_action
from shellagent.cli.main import main
from shellagent.errors import ModelUnavailable
from shellagent.model import load_backend
from shellagent.model.llama import LlamaBackend
from shellagent.model.openai import OpenAIBackend
from shellagent.testing import LlamaServer

pytest.importorskip(
    "llama_cpp.server.app", reason="needs the scale extra (llama-cpp-python[server])"
)

pytestmark = [pytest.mark.model, pytest.mark.slow]

ALIAS = LlamaServer.ALIAS
SYSTEM = (
    "You operate a Linux bash shell. Reply with exactly one JSON action: "
    '{"cmd": "COMMAND", "why": "REASON"} to run a command, or '
    '{"done": "SUMMARY"} when the task is finished.'
)


def _conversation(task: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:P/v1``) of a running ``llama_cpp.server``; stopped after
    the module's tests."""
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with LlamaServer(str(log)) as running:
        yield running.url
    assert running.process.returncode is not None


def _backend(server: str, options: str = "constraint=grammar") -> OpenAIBackend:
    backend = load_backend(f"openai:{server}#{ALIAS}?{options}")
    assert isinstance(backend, OpenAIBackend)
    return backend


@pytest.mark.parametrize(
    "task",
    ["how much disk space is free?", "count the lines of /etc/passwd", "list the files in /tmp"],
)
def test_grammar_constrained_replies_parse_and_stream_in(server: str, task: str) -> None:
    pieces: list[str] = []
    generation = _backend(server).generate(
        _conversation(task), max_tokens=200, reply_format=ACTION_FORMAT, on_token=pieces.append
    )
    parse_action(generation.text)  # raises InputError if it is not an action
    assert generation.stop == "end"
    assert len(pieces) > 1 and "".join(pieces) == generation.text
    assert 0 < generation.first_token_s < generation.duration_s
    assert generation.logprobs is None and generation.token_ids is None  # not asked for


def test_logprobs_are_captured_one_per_token_as_the_local_backend_gives_them(
    server: str,
) -> None:
    messages = _conversation("how much disk space is free?")
    remote = _backend(server).generate(
        messages, max_tokens=200, reply_format=ACTION_FORMAT, capture_logprobs=True
    )
    assert remote.logprobs is not None and remote.token_ids is None  # no ids from this server
    assert len(remote.logprobs) > 1
    assert all(lp <= 0.0 and math.isfinite(lp) for lp in remote.logprobs)
    # The same model in-process: same greedy reply, same log-probabilities (under the raw
    # distribution, before the grammar), up to float noise between batch sizes.
    local = load_backend("default", n_ctx=2048, n_threads=2)
    assert isinstance(local, LlamaBackend)
    try:
        here = local.generate(
            messages, max_tokens=200, reply_format=ACTION_FORMAT, capture_logprobs=True
        )
    finally:
        local.close()
    assert here.text == remote.text
    assert here.logprobs is not None and len(here.logprobs) == len(remote.logprobs)
    assert max(abs(a - b) for a, b in zip(here.logprobs, remote.logprobs, strict=True)) < 0.05


def test_a_plain_spec_learns_the_grammar_and_its_replies_parse(server: str) -> None:
    """Issue 40: ``openai:URL#MODEL`` with no option used to fail with ``HTTP 500 …
    literal_error``."""
    schema = load_backend(f"openai:{server}#{ALIAS}?constraint=json_schema")
    with pytest.raises(ModelUnavailable) as refused:  # what a plain spec used to end with
        schema.generate(_conversation("hi"), max_tokens=20, reply_format=ACTION_FORMAT)
    assert "answered HTTP 500" in refused.value.message
    assert "literal_error" in refused.value.message, refused.value.message
    plain = load_backend(f"openai:{server}#{ALIAS}")
    assert isinstance(plain, OpenAIBackend) and plain.constraint is None
    for task in ("how much disk space is free?", "count the lines of /etc/passwd"):
        generation = plain.generate(_conversation(task), max_tokens=200, reply_format=ACTION_FORMAT)
        parse_action(generation.text)
        assert generation.stop == "end"
    saved = json.loads(
        (Path(os.environ["SHELLAGENT_CACHE_DIR"]) / "openai-servers.json").read_text()
    )
    assert saved == {f"{server}#{ALIAS}": "grammar"}
    # The same replies as with the grammar named in the spec (greedy): the same request.
    named = _backend(server).generate(
        _conversation("count the lines of /etc/passwd"), max_tokens=200, reply_format=ACTION_FORMAT
    )
    assert named.text == generation.text


class Cancel(Exception):
    """What the cancelling ``on_token`` raises (the agent loop raises its own)."""


def test_cancel_ends_the_request_and_the_server_serves_the_next(server: str) -> None:
    backend = _backend(server, "constraint=none")
    seen: list[str] = []

    def cancel_at_two(piece: str) -> None:
        seen.append(piece)
        if len(seen) == 2:
            raise Cancel

    long_task = _conversation("write a long story about a shell, in prose")
    with pytest.raises(Cancel):
        backend.generate(long_task, max_tokens=400, on_token=cancel_at_two)
    assert len(seen) == 2
    after = _backend(server).generate(
        _conversation("what is the current date?"), max_tokens=200, reply_format=ACTION_FORMAT
    )
    parse_action(after.text)


def test_a_wrong_request_is_one_clear_line(server: str) -> None:
    backend = _backend(server)
    with pytest.raises(Exception) as info:
        backend.generate([{"role": "wizard", "content": "hi"}], reply_format=ACTION_FORMAT)
    message = getattr(info.value, "message", "")
    # llama_cpp.server answers a request its schema refuses with a 500 and pydantic's list
    assert message.startswith(f"{server}/chat/completions answered HTTP 500: "), message
    assert "validation error" in message and "\n" not in message


def test_eval_through_the_server_exports_logprobs_for_rl(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    lines = [
        {
            "id": "make-file",
            "task": "Create an empty file /data/done.txt",
            "setup_commands": ["mkdir -p /data"],
            "success_condition": "[ -f /data/done.txt ]",
        },
        {
            "id": "make-dir",
            "task": "Create the directory /data/backup",
            "setup_commands": ["mkdir -p /data"],
            "success_condition": "[ -d /data/backup ]",
        },
    ]
    tasks.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "run"
    spec = f"openai:{server}#{ALIAS}?constraint=grammar"
    args = ["eval", str(tasks), "--model", spec, "--logprobs", "--max-turns", "2"]
    assert main([*args, "--examples", "0", "--json", "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["valid"] == 2
    target = tmp_path / "rl.jsonl"
    export = ["export", "--format", "rl", "--from", str(out / "transcripts"), "-o", str(target)]
    assert main(export) == 0
    records = [json.loads(line) for line in target.read_text().splitlines()]
    assert sorted(r["task_id"] for r in records) == ["make-dir", "make-file"]
    turns: list[dict[str, Any]] = [t for r in records for t in r["turns"] if t["reply"]]
    assert turns
    for turn in turns:
        assert turn["logprobs"] and all(lp <= 0.0 for lp in turn["logprobs"]), turn
        assert turn["token_ids"] is None
    # The transcripts' model turns carry the same values the export took from them.
    logged = [
        json.loads(line)
        for path in sorted((out / "transcripts").glob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    model_turns = [e for e in logged if e.get("type") == "model_turn"]
    assert len(model_turns) == len(turns)
    assert sorted(len(e["logprobs"]) for e in model_turns) == sorted(
        len(t["logprobs"]) for t in turns
    )
