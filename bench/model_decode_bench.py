"""Decode speed of shellagent's llama backend vs raw llama-cpp-python, same model and run.

Both sides decode the same token prompt with the same settings (greedy, no grammar, same
threads and context); runs are interleaved and the median tokens/s of each is compared.
Target: backend / raw >= 0.95. Prints figures; asserts nothing.

With ``--adapter LORA.gguf`` it compares the backend with and without that adapter instead.

    python bench/model_decode_bench.py [--model PATH.gguf] [--adapter LORA.gguf] [--tokens 128]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator
from typing import Any, cast

from llama_cpp import Llama

from shellagent.model.embedded import embedded_model_path
from shellagent.model.llama import LlamaBackend

MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant who explains shell commands."},
    {
        "role": "user",
        "content": "Explain in detail what each of these commands does: ls, cd, cp, mv, rm, "
        "mkdir, find, grep, sed, awk, tar, rsync, chmod, chown, df, du, ps, kill.",
    },
]


def raw_run(llm: Llama, tokens: list[int], n: int) -> tuple[int, float]:
    llm.reset()  # type: ignore[no-untyped-call]
    start = time.perf_counter()
    first = 0.0
    count = 0
    stream = llm.create_completion(prompt=tokens, max_tokens=n, temperature=0.0, stream=True)
    last = 0.0
    for chunk in cast(Iterator[dict[str, Any]], stream):
        if chunk["choices"][0]["finish_reason"] is not None and not chunk["choices"][0]["text"]:
            continue  # the closing chunk carries no token
        count += 1
        last = time.perf_counter() - start
        if count == 1:
            first = last
    return count, (count - 1) / (last - first)


def backend_run(backend: LlamaBackend, n: int) -> tuple[int, float]:
    backend.reset()
    generation = backend.generate(MESSAGES, max_tokens=n)
    return generation.generated_tokens, generation.tokens_per_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(embedded_model_path()))
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ctx", type=int, default=2048)
    parser.add_argument("--adapter", help="compare with this LoRA adapter instead of raw")
    args = parser.parse_args()
    if args.adapter:
        compare_adapter(args)
        return

    backend = LlamaBackend(args.model, n_ctx=args.ctx, n_threads=args.threads)
    raw = Llama(args.model, n_ctx=args.ctx, n_threads=args.threads, seed=0, verbose=False)
    tokens = backend._tokenize(backend.template.render(MESSAGES), at_start=True)
    print(f"model {args.model}")
    print(f"prompt {len(tokens)} tokens, decode up to {args.tokens}, threads {args.threads}")

    backend_run(backend, 8)  # warm-up both
    raw_run(raw, tokens, 8)
    ours: list[float] = []
    theirs: list[float] = []
    for i in range(args.runs):
        n_ours, tps_ours = backend_run(backend, args.tokens)
        n_raw, tps_raw = raw_run(raw, tokens, args.tokens)
        ours.append(tps_ours)
        theirs.append(tps_raw)
        print(
            f"run {i + 1}: backend {tps_ours:6.1f} tok/s ({n_ours} tok)   "
            f"raw {tps_raw:6.1f} tok/s ({n_raw} tok)"
        )
    med_ours, med_raw = statistics.median(ours), statistics.median(theirs)
    best_ours, best_raw = max(ours), max(theirs)
    print(f"median backend {med_ours:.1f} tok/s, raw {med_raw:.1f} tok/s")
    print(f"ratio backend/raw (median) = {med_ours / med_raw:.3f} (target >= 0.95)")
    # The best run of each is the least disturbed by other load on the machine.
    print(f"ratio backend/raw (best)   = {best_ours / best_raw:.3f}")


def compare_adapter(args: argparse.Namespace) -> None:
    plain = LlamaBackend(args.model, n_ctx=args.ctx, n_threads=args.threads)
    adapted = LlamaBackend(args.model, n_ctx=args.ctx, n_threads=args.threads, adapter=args.adapter)
    print(f"model {args.model}, adapter {args.adapter}, threads {args.threads}")
    backend_run(plain, 8)
    backend_run(adapted, 8)
    rates: dict[str, list[float]] = {"plain": [], "adapter": []}
    for i in range(args.runs):
        for name, backend in (("plain", plain), ("adapter", adapted)):
            count, tps = backend_run(backend, args.tokens)
            rates[name].append(tps)
            print(f"run {i + 1}: {name:8} {tps:6.1f} tok/s ({count} tok)")
    med = {name: statistics.median(values) for name, values in rates.items()}
    print(f"median plain {med['plain']:.1f} tok/s, with adapter {med['adapter']:.1f} tok/s")
    print(f"ratio adapter/plain (median) = {med['adapter'] / med['plain']:.3f}")


if __name__ == "__main__":
    main()
