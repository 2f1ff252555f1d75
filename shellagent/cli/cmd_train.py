"""``shellagent train``: fine-tune the model on SFT data into a LoRA adapter (GGUF).

Needs the ``train`` extra (PyTorch, transformers, PEFT): ``./install.sh --train``. Ctrl-C
stops after the current step and keeps a checkpoint; the same command resumes from it.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Any


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "train",
        help="fine-tune the model on SFT exports into a LoRA adapter (GGUF)",
        description=(__doc__ or "").strip()
        + "\n\nexample: shellagent export --format sft -o mine.jsonl && "
        "shellagent train mine.jsonl -o ~/adapters/mine.gguf",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("data", nargs="+", type=Path, metavar="EXPORT.jsonl")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="ADAPTER.gguf")
    parser.add_argument("--base", default="default", help="base model: catalog name or GGUF")
    parser.add_argument(
        "--from", dest="start_from", type=Path, default=None, metavar="ADAPTER.gguf",
        help="train this adapter (of the same base) further; its rank and alpha are kept",
    )  # fmt: skip
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--steps", type=int, default=None, help="overrides --epochs")
    parser.add_argument("--learning-rate", "--lr", type=float, default=2e-4, dest="lr")
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--alpha", type=float, default=32.0)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-tokens", type=int, default=1024, help="per conversation")
    parser.add_argument("--batch-tokens", type=int, default=4096)
    parser.add_argument("--held-out", type=float, default=0.05, help="share kept for scoring")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from shellagent.errors import UsageError
    from shellagent.training.train import TrainConfig, train

    if args.rank < 1 or args.lr <= 0 or not 0 <= args.held_out < 1:
        raise UsageError("--rank must be >= 1, --lr > 0 and --held-out in [0, 1)")
    cfg = TrainConfig(
        data=tuple(args.data),
        output=args.output.expanduser(),
        base=args.base,
        epochs=args.epochs,
        steps=args.steps,
        learning_rate=args.lr,
        rank=args.rank,
        alpha=args.alpha,
        threads=args.threads,
        seed=args.seed,
        max_tokens=args.max_tokens,
        batch_tokens=args.batch_tokens,
        held_out=args.held_out,
        start_from=args.start_from.expanduser() if args.start_from else None,
    )
    stop = threading.Event()
    try:
        result = train(
            cfg, progress=lambda line: print(line, file=sys.stderr, flush=True), stop=stop
        )
    except KeyboardInterrupt:
        print(
            f"stopped; a checkpoint is kept next to {cfg.output}: run the same command to resume",
            file=sys.stderr,
        )
        return 130
    summary = {
        "adapter": str(result.adapter),
        "steps": result.steps,
        "examples": result.examples,
        "held_out_examples": result.held_out_examples,
        "seconds": round(result.seconds, 1),
        "examples_per_s": round(result.examples_per_s, 3),
        "train_loss": result.train_loss,
        "held_out_loss_before": result.held_out_loss_before,
        "held_out_loss_after": result.held_out_loss_after,
        "adapter_bytes": result.adapter_bytes,
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"adapter {result.adapter} ({result.adapter_bytes / 1e6:.1f} MB): {result.steps} "
            f"steps on {result.examples} examples in {result.seconds:.0f} s; held-out loss "
            f"{result.held_out_loss_before} -> {result.held_out_loss_after}; use it with "
            f"ask --model {args.base}+{result.adapter}"
        )
    return 0
