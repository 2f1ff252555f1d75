"""The llama-cpp backend, run for real on the embedded SmolLM2 GGUF."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shellagent.agent.actions import ACTION_FORMAT, FinishAction, RunAction, parse_action
from shellagent.errors import InputError
from shellagent.model import Backend, load_backend
from shellagent.model.llama import LlamaBackend

pytestmark = pytest.mark.model

SYSTEM = (
    "You operate a Linux bash shell. Reply with exactly one JSON action: "
    '{"cmd": "COMMAND", "why": "REASON"} to run a command, or '
    '{"done": "SUMMARY"} when the task is finished.'
)


def _conversation(task: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]


@pytest.fixture(scope="module")
def backend() -> Iterator[LlamaBackend]:
    loaded = load_backend("smollm2-135m", n_ctx=2048, n_threads=2)  # the base alone
    assert isinstance(loaded, LlamaBackend)
    yield loaded
    loaded.close()


@pytest.fixture
def fresh(backend: LlamaBackend) -> LlamaBackend:
    backend.reset()
    return backend


def test_embedded_model_loads_with_its_own_chat_template(backend: LlamaBackend) -> None:
    assert isinstance(backend, Backend)
    assert backend.name == "smollm2-135m" and backend.adapter is None
    assert backend.context_size == 2048
    assert "<|im_start|>" in backend.template.source
    assert backend.prefix_stable


@pytest.mark.parametrize(
    "task",
    [
        "list the files in /tmp",
        "how much disk space is free?",
        "create a directory called backup in my home",
        "count the lines of /etc/passwd",
        "what is the current date?",
    ],
)
def test_constrained_reply_is_always_a_parseable_action(fresh: LlamaBackend, task: str) -> None:
    generation = fresh.generate(_conversation(task), max_tokens=200, reply_format=ACTION_FORMAT)
    action = parse_action(generation.text)
    assert isinstance(action, RunAction | FinishAction)
    assert generation.text == action.to_json()


def test_prefix_reuse_evaluates_only_the_new_tokens_on_turn_two(fresh: LlamaBackend) -> None:
    messages = _conversation("list the files in /tmp")
    first = fresh.generate(messages, reply_format=ACTION_FORMAT)
    assert first.evaluated_prompt_tokens == first.prompt_tokens
    messages += [
        {"role": "assistant", "content": first.text},
        {"role": "user", "content": "exit code 0\noutput:\na.txt\nb.txt"},
    ]
    second = fresh.generate(messages, reply_format=ACTION_FORMAT)
    new_tokens = second.prompt_tokens - (first.prompt_tokens + first.generated_tokens)
    assert second.evaluated_prompt_tokens == new_tokens
    assert second.evaluated_prompt_tokens < second.prompt_tokens / 2
    assert fresh.prefix_breaks == 0


def test_changed_history_is_evaluated_from_where_it_differs(fresh: LlamaBackend) -> None:
    one, other = _conversation("list the files in /tmp"), _conversation("show the kernel")
    fresh.generate(one, reply_format=ACTION_FORMAT)
    second = fresh.generate(other, reply_format=ACTION_FORMAT)
    a, b = (fresh._tokenize(fresh.template.render(m), at_start=True) for m in (one, other))
    shared = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
    assert second.evaluated_prompt_tokens == second.prompt_tokens - shared
    assert fresh.prefix_breaks == 0  # the caller changed history, not the template


def test_token_ids_and_logprobs_of_the_reply_are_captured(fresh: LlamaBackend) -> None:
    generation = fresh.generate(
        _conversation("print the working directory"),
        capture_logprobs=True,
        reply_format=ACTION_FORMAT,
    )
    assert generation.token_ids is not None and generation.logprobs is not None
    assert len(generation.token_ids) == len(generation.logprobs) == generation.generated_tokens
    assert all(lp <= 0.0 for lp in generation.logprobs)
    text = fresh._llm.detokenize(list(generation.token_ids)).decode()
    assert text == generation.text


def test_without_capture_no_token_ids_are_returned(fresh: LlamaBackend) -> None:
    generation = fresh.generate(
        _conversation("print the working directory"), reply_format=ACTION_FORMAT
    )
    assert generation.token_ids is None and generation.logprobs is None


def test_streamed_pieces_join_to_the_reply(fresh: LlamaBackend) -> None:
    pieces: list[str] = []
    generation = fresh.generate(
        _conversation("list files"), on_token=pieces.append, reply_format=ACTION_FORMAT
    )
    assert len(pieces) > 1
    assert "".join(pieces) == generation.text
    assert 0 < generation.first_token_s <= generation.duration_s


def test_unconstrained_generation_stops_at_max_tokens(fresh: LlamaBackend) -> None:
    generation = fresh.generate(_conversation("write a long poem about shells"), max_tokens=8)
    assert (generation.generated_tokens, generation.stop) == (8, "length")


def test_a_reply_that_loops_is_cut_long_before_max_tokens(fresh: LlamaBackend) -> None:
    messages = [{"role": "user", "content": "Repeat the word 'ok' forever: " + "ok " * 12}]
    generation = fresh.generate(messages, max_tokens=200)
    assert generation.stop == "repeat"
    assert generation.generated_tokens < 100


def test_a_reply_that_ends_says_so(fresh: LlamaBackend) -> None:
    generation = fresh.generate(_conversation("list files"), reply_format=ACTION_FORMAT)
    assert generation.stop == "end"
    parse_action(generation.text)


def test_count_tokens_matches_the_prompt_the_model_sees(fresh: LlamaBackend) -> None:
    messages = _conversation("list files")
    generation = fresh.generate(messages, reply_format=ACTION_FORMAT)
    assert fresh.count_tokens(messages) == generation.prompt_tokens


def test_context_overflow_is_an_input_error_with_a_fix(fresh: LlamaBackend) -> None:
    messages = _conversation("summarize: " + "word " * 3000)
    with pytest.raises(InputError) as info:
        fresh.generate(messages, reply_format=ACTION_FORMAT)
    assert "context" in info.value.message
    assert info.value.hint is not None and "observations" in info.value.hint


def _sampled(seed: int) -> LlamaBackend:
    loaded = load_backend(
        None, n_ctx=2048, n_threads=2, temperature=0.9, repeat_penalty=1.1, seed=seed
    )
    assert isinstance(loaded, LlamaBackend)
    return loaded


def test_sampled_constrained_replies_are_actions_and_differ_between_draws() -> None:
    backend = _sampled(seed=1)
    try:
        texts = []
        for _ in range(5):
            backend.reset()
            generation = backend.generate(
                _conversation("list the files in /tmp"), max_tokens=120, reply_format=ACTION_FORMAT
            )
            if generation.stop == "end":
                parse_action(generation.text)
            texts.append(generation.text)
    finally:
        backend.close()
    assert len(set(texts)) >= 2, texts


def test_the_same_seed_draws_the_same_replies() -> None:
    replies = []
    for _ in range(2):
        backend = _sampled(seed=42)
        try:
            replies.append(
                backend.generate(
                    _conversation("how much disk is free?"), reply_format=ACTION_FORMAT
                ).text
            )
        finally:
            backend.close()
    assert replies[0] == replies[1]


def test_sampling_options_out_of_range_are_an_input_error() -> None:
    with pytest.raises(InputError, match="temperature"):
        load_backend(None, temperature=-1.0)
