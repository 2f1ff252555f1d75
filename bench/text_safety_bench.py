"""What keeping model text visible and the daemon trusted costs, against baselines in the
same run.

1. Grammar, against the previous one (one negated class of C0 controls, \\u escapes
   allowed): checking and accepting each token of typical replies, and the slow path that
   masks the whole vocabulary; with --decode also greedy constrained decoding (ms/token).
2. parse_action on typical replies, against json.loads of the same text.
3. Display: shown() on a reason, reveal() on a command, clean_output() on 64 KB of output,
   against the previous C0/C1-only output cleaning.
4. ask's connect(): directory, socket and SO_PEERCRED checks, against a bare connect.
5. Jobs: the keyed seal (key read from disk each time), against the previous sha256.
Prints figures; asserts nothing.

    python bench/text_safety_bench.py [--decode [--runs 3]]
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shellagent.agent.actions import ACTION_FORMAT, ACTION_GBNF, parse_action

# The grammar as it was before model text was limited to visible characters.
PREVIOUS_GBNF = r"""
root    ::= run | done | sched
run     ::= "{\"cmd\": " cmd ", \"why\": " why "}"
done    ::= "{\"done\": " text "}"
sched   ::= "{\"every\": \"" every "\", \"on\": \"" day "\", " when
when    ::= "\"at\": \"" hhmm "\", \"name\": " name "}"
every   ::= "hour" | "day" | "week" | "month"
day     ::= "mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun"
hhmm    ::= ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]
name    ::= "\"" lead char{0,59} "\""
cmd     ::= "\"" lead char{0,399} "\""
why     ::= "\"" char{0,160} "\""
text    ::= "\"" lead char{0,399} "\""
lead    ::= [^"\\\x00-\x1f\x7f ]
char    ::= [^"\\\x00-\x1f\x7f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
""".lstrip()

SYSTEM = (
    "You operate a Linux bash shell for the user. Reply with exactly one JSON action: "
    '{"cmd": "a shell command", "why": "one-line reason"} to run a command, or '
    '{"done": "summary"} when the task is finished. Example: '
    '{"cmd": "ls -la /var/log", "why": "see which logs exist"}'
)
TASKS = [
    "Find the five largest files under /var/log and report their sizes.",
    "Résume les fichiers modifiés aujourd'hui dans ~/Documents, s'il te plaît.",
    "ホームディレクトリのファイル数を数えてください。",
]


def per_call(fn: Callable[[], Any], repeat: int) -> float:
    """Median seconds per call over 5 batches of ``repeat`` calls."""
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        times.append((time.perf_counter() - start) / repeat)
    return statistics.median(times)


REPLIES = [
    {"cmd": "du -ah /var/log 2>/dev/null | sort -rh | head -n 5", "why": "largest logs first"},
    {"cmd": "find ~/Documents -newermt today -type f", "why": "fichiers modifiés aujourd'hui"},
    {"done": "ホームディレクトリには 42 個のファイルがあります。✅"},
    {"every": "week", "on": "sun", "at": "03:00", "name": "backup documents"},
]


def grammar_checks() -> None:
    """The grammar's own cost, without the model's: every token of typical replies checked
    and accepted, and the whole vocabulary masked, under each grammar (vocabulary only)."""
    import llama_cpp
    import numpy as np

    from shellagent.model.embedded import embedded_model_path
    from shellagent.model.grammar_gate import GrammarGate

    llm = llama_cpp.Llama(model_path=str(embedded_model_path()), vocab_only=True, verbose=False)
    vocab, n_vocab = llama_cpp.llama_model_get_vocab(llm.model), int(llm.n_vocab())
    texts = [json.dumps(r, ensure_ascii=False, separators=(", ", ": ")) for r in REPLIES]
    tokens = [llm.tokenize(t.encode(), add_bos=False, special=False) for t in texts]
    count = sum(len(t) for t in tokens)
    logits = np.random.default_rng(0).standard_normal(n_vocab).astype(np.float32)
    inside = llm.tokenize(b'{"cmd": "ls", "why": "list', add_bos=False, special=False)

    def walk(gbnf: str) -> None:
        for reply in tokens:
            gate = GrammarGate(vocab, n_vocab, gbnf)
            for token in reply:
                assert gate.allows(token)
                gate.accept(token)
            gate.close()

    def mask(gbnf: str) -> float:
        gate = GrammarGate(vocab, n_vocab, gbnf)
        for token in inside:
            gate.accept(token)
        took = per_call(functools.partial(gate.allowed_ids, logits), 3)
        gate.close()
        return took

    new_walk, old_walk = (
        per_call(functools.partial(walk, g), 3) for g in (ACTION_GBNF, PREVIOUS_GBNF)
    )
    new_mask, old_mask = mask(ACTION_GBNF), mask(PREVIOUS_GBNF)
    print(
        f"1. grammar ({count} tokens of {len(texts)} typical replies; {n_vocab} in the vocabulary)"
    )
    print(
        f"   check+accept per token: new {new_walk / count * 1e6:.1f} µs, previous "
        f"{old_walk / count * 1e6:.1f} µs ({new_walk / old_walk:.2f}x)"
    )
    print(
        f"   whole-vocabulary mask inside a reason: new {new_mask * 1e3:.1f} ms, previous "
        f"{old_mask * 1e3:.1f} ms ({new_mask / old_mask:.2f}x)"
    )
    llm.close()


def decoding(runs: int) -> None:
    """Greedy constrained decoding with each grammar through the backend: ms/token (load
    sensitive: the model's threads), and how often the greedy choice was refused so the
    whole vocabulary had to be masked (the slow path; a count, not a time)."""
    from shellagent.model import grammar_gate
    from shellagent.model.backend import ReplyFormat
    from shellagent.model.embedded import embedded_model_path
    from shellagent.model.llama import LlamaBackend

    masks = [0]
    slow_path = grammar_gate.GrammarGate.best_allowed

    def counted(self: Any, logits: Any) -> int:
        masks[0] += 1
        return slow_path(self, logits)

    grammar_gate.GrammarGate.best_allowed = counted  # type: ignore[method-assign]
    backend = LlamaBackend(str(embedded_model_path()), n_ctx=4096, n_threads=2)
    previous = ReplyFormat("previous", PREVIOUS_GBNF, ACTION_FORMAT.json_schema)
    per: dict[str, list[float]] = {"new": [], "previous": []}
    counts = {"new": [0, 0], "previous": [0, 0]}  # tokens, masks
    for _ in range(runs):
        for task in TASKS:
            messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]
            for name, fmt in (("new", ACTION_FORMAT), ("previous", previous)):
                backend.reset()
                masks[0] = 0
                g = backend.generate(messages, reply_format=fmt, max_tokens=96)
                per[name].append((g.duration_s - g.first_token_s) / max(1, g.generated_tokens - 1))
                counts[name][0] += g.generated_tokens
                counts[name][1] += masks[0]
    grammar_gate.GrammarGate.best_allowed = slow_path  # type: ignore[method-assign]
    new, old = (statistics.median(per[k]) for k in ("new", "previous"))
    print("   greedy constrained decoding (median over tasks and runs)")
    print(f"   new {new * 1e3:.2f} ms/token, previous {old * 1e3:.2f} ms/token ({new / old:.3f}x)")
    for name, (tokens, masked) in counts.items():
        print(f"   {name}: {masked} whole-vocabulary masks in {tokens} tokens")
    backend.close()


def parsing() -> None:
    replies = [
        json.dumps({"cmd": "find /var/log -type f -size +1M | head", "why": "big logs"}),
        json.dumps(
            {"done": "Les fichiers modifiés aujourd'hui : a.txt, b.txt ✅"}, ensure_ascii=False
        ),
        json.dumps({"every": "week", "on": "sun", "at": "03:00", "name": "backup documents"}),
    ]
    ours = statistics.mean(per_call(functools.partial(parse_action, r), 2000) for r in replies)
    base = statistics.mean(per_call(functools.partial(json.loads, r), 2000) for r in replies)
    print("2. parse_action on typical replies")
    print(f"   {ours * 1e6:.1f} µs per reply; json.loads alone {base * 1e6:.1f} µs")
    print(f"   ratio {ours / base:.1f}x")


def previous_clean_output(text: str) -> str:
    """The output cleaning before: C0 and C1 controls only."""
    text = text.replace("\r\n", "\n")
    out = []
    for ch in text:
        code = ord(ch)
        if ch in "\n\t" or (code >= 0x20 and code != 0x7F and not 0x80 <= code < 0xA0):
            out.append(ch)
        else:
            out.append(f"⟨\\x{code:02x}⟩")
    return "".join(out)


def display() -> None:
    from shellagent.cli.display import clean_output, reveal, shown

    why = "list the five largest files under /var/log, sorted by size"
    command = "du -ah /var/log 2>/dev/null | sort -rh | head -n 5"
    output = ("drwxr-xr-x  2 root root  4096 Nov 22 10:00 répertoire 日本\n" * 1200)[:65536]
    t_why = per_call(lambda: shown(why), 2000)
    t_cmd = per_call(lambda: reveal(command), 2000)
    t_out = per_call(lambda: clean_output(output), 5)
    t_prev = per_call(lambda: previous_clean_output(output), 5)
    print("3. display escaping")
    print(f"   shown(reason) {t_why * 1e6:.1f} µs; reveal(command) {t_cmd * 1e6:.1f} µs")
    print(
        f"   clean_output(64 KB) {t_out * 1e3:.2f} ms ({len(output) / t_out / 1e6:.1f} MB/s); "
        f"previous {t_prev * 1e3:.2f} ms ({t_out / t_prev:.2f}x)"
    )


def connecting() -> None:
    from shellagent.cli.ask_client import connect

    base = Path(tempfile.mkdtemp(prefix="sa-bench-", dir="/tmp"))
    run = base / "run"
    run.mkdir(mode=0o700)
    path = run / "daemon.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.chmod(path, 0o600)
    listener.listen(128)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            conn, _ = listener.accept()
            conn.close()

    threading.Thread(target=accept, daemon=True).start()

    def bare() -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(str(path))
        s.close()

    t_bare = per_call(bare, 500)
    t_checked = per_call(lambda: connect(path).close(), 500)
    stop.set()
    bare()  # wake the accept loop
    listener.close()
    print("4. ask's connect()")
    print(
        f"   checked {t_checked * 1e6:.0f} µs, bare {t_bare * 1e6:.0f} µs: "
        f"+{(t_checked - t_bare) * 1e6:.0f} µs per ask ({t_checked / t_bare:.2f}x)"
    )


def sealing() -> None:
    from shellagent.jobs.seal import seal

    os.environ.setdefault("SHELLAGENT_STATE_DIR", tempfile.mkdtemp(prefix="sa-bench-state-"))
    material = json.dumps({"commands": ["tar czf backups/docs.tgz -C ../Documents ."] * 3})
    t_seal = per_call(lambda: seal(material.encode()), 2000)
    t_hash = per_call(lambda: hashlib.sha256(material.encode()).hexdigest(), 2000)
    print("5. job approval")
    print(
        f"   keyed seal {t_seal * 1e6:.1f} µs (key read each time), unkeyed sha256 "
        f"{t_hash * 1e6:.1f} µs ({t_seal / t_hash:.0f}x; per job listed or run)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--decode", action="store_true", help="also time decoding (slow)")
    args = parser.parse_args()
    grammar_checks()
    if args.decode:
        decoding(args.runs)
    parsing()
    display()
    connecting()
    sealing()


if __name__ == "__main__":
    main()
