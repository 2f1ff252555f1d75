"""Cost of grammar-constrained decoding, and what prefix reuse saves over a session.

1. Time per generated token with the action grammar vs without, same backend, prompt and
   greedy settings (target: constrained <= 1.15x unconstrained).
2. The same with sampling (temperature 0.7, repeat penalty 1.1): constrained and
   unconstrained through the backend, and llama.cpp's own grammar sampler (``Llama.generate``
   with a ``LlamaGrammar``, which masks all n_vocab tokens on every step) as the baseline.
3. A five-turn session: prompt tokens, tokens actually evaluated and time to first token
   on turn 1 vs turn 5, and turn 5's time to first token with the cache dropped.
Prints figures; asserts nothing.

    python bench/grammar_bench.py [--model PATH.gguf] [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

from shellagent.agent.actions import ACTION_FORMAT
from shellagent.model.backend import Generation
from shellagent.model.embedded import embedded_model_path
from shellagent.model.llama import LlamaBackend

SYSTEM = (
    "You operate a Linux bash shell for the user. Reply with exactly one JSON action: "
    '{"cmd": "a shell command", "why": "one-line reason"} to run a command, or '
    '{"done": "summary"} when the task is finished. Example: '
    '{"cmd": "ls -la /var/log", "why": "see which logs exist"}'
)
TASK = "Find the five largest files under /var/log and report their sizes."
OBSERVATIONS = [
    "exit 0\n/var/log/syslog 12M\n/var/log/kern.log 4M\n/var/log/auth.log 2M",
    "exit 0\n/var/log/dpkg.log 900K\n/var/log/apt/history.log 300K",
    "exit 1\ndu: cannot read directory '/var/log/private': Permission denied",
    "exit 0\ntotal 24M",
]


def per_token_s(g: Generation) -> float:
    return (g.duration_s - g.first_token_s) / max(1, g.generated_tokens - 1)


def grammar_cost(backend: LlamaBackend, runs: int) -> None:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    free: list[float] = []
    constrained: list[float] = []
    for _ in range(runs):
        backend.reset()
        g_on = backend.generate(messages, reply_format=ACTION_FORMAT, max_tokens=96)
        backend.reset()
        g_off = backend.generate(messages, max_tokens=96)
        constrained.append(per_token_s(g_on))
        free.append(per_token_s(g_off))
    on, off = statistics.median(constrained), statistics.median(free)
    print(f"constrained:   {on * 1e3:6.2f} ms/token ({g_on.generated_tokens} tokens: {g_on.text})")
    print(f"unconstrained: {off * 1e3:6.2f} ms/token ({g_off.generated_tokens} tokens)")
    print(f"ratio constrained/unconstrained (median) = {on / off:.3f} (target <= 1.15)")
    print(f"ratio (best runs) = {min(constrained) / min(free):.3f}")


def sampled_cost(model: str, threads: int, runs: int) -> None:
    from llama_cpp.llama_grammar import LlamaGrammar

    from shellagent.agent.actions import ACTION_GBNF

    backend = LlamaBackend(
        model, n_ctx=4096, n_threads=threads, temperature=0.7, repeat_penalty=1.1, seed=3
    )
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    tokens = backend._prompt_tokens(backend.template.render(messages))
    ours: list[float] = []
    free: list[float] = []
    native: list[float] = []
    for _ in range(runs):
        backend.reset()
        ours.append(
            per_token_s(backend.generate(messages, reply_format=ACTION_FORMAT, max_tokens=96))
        )
        backend.reset()
        free.append(per_token_s(backend.generate(messages, max_tokens=96)))
        backend.reset()
        grammar = LlamaGrammar.from_string(ACTION_GBNF, verbose=False)
        count, first = 0, 0.0
        for _token in backend._llm.generate(
            tokens, grammar=grammar, temp=0.7, top_k=40, top_p=0.95, min_p=0.05,
            repeat_penalty=1.1,
        ):  # fmt: skip
            count += 1
            if count == 1:
                first = time.perf_counter()
            if count >= 96:
                break
        native.append((time.perf_counter() - first) / max(1, count - 1))
    on, off, old = (statistics.median(x) for x in (ours, free, native))
    print(f"sampled constrained (gate):      {on * 1e3:7.2f} ms/token")
    print(f"sampled unconstrained:           {off * 1e3:7.2f} ms/token")
    print(f"sampled, llama.cpp grammar sampler: {old * 1e3:7.2f} ms/token")
    print(f"ratio gate/unconstrained = {on / off:.3f}; llama.cpp sampler/gate = {old / on:.1f}x")
    backend.close()


def session(backend: LlamaBackend) -> None:
    backend.reset()
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    turns: list[Generation] = []
    for turn in range(5):
        g = backend.generate(messages, reply_format=ACTION_FORMAT, max_tokens=96)
        turns.append(g)
        print(
            f"turn {turn + 1}: prompt {g.prompt_tokens:4d} tok, evaluated "
            f"{g.evaluated_prompt_tokens:4d}, first token {g.first_token_s * 1e3:6.1f} ms"
        )
        if turn < 4:
            messages += [
                {"role": "assistant", "content": g.text},
                {"role": "user", "content": OBSERVATIONS[turn]},
            ]
    backend.reset()
    cold = backend.generate(
        messages[:-2] + messages[-2:], reply_format=ACTION_FORMAT, max_tokens=96
    )
    print(
        f"turn 5 without reuse: evaluated {cold.evaluated_prompt_tokens} tok, "
        f"first token {cold.first_token_s * 1e3:.1f} ms"
    )
    print(f"prefix breaks detected: {backend.prefix_breaks}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(embedded_model_path()))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    backend = LlamaBackend(args.model, n_ctx=4096, n_threads=args.threads)
    print(f"model {args.model}")
    grammar_cost(backend, args.runs)
    sampled_cost(args.model, args.threads, args.runs)
    session(backend)


if __name__ == "__main__":
    main()
