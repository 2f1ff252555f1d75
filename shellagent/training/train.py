"""LoRA training of the agent's model on a CPU, with PyTorch and PEFT.

The base is the same GGUF the agent runs (quantized), dequantized into a float llama
model by ``base.load_llama`` (seconds, no tokenizer rebuilt).
Training is plain AdamW with a short warm-up and a cosine decay, on batches packed up to
``batch_tokens`` tokens, with loss only on the model's replies (see ``data``). Progress
lines carry the loss, examples/s and an ETA; a checkpoint is saved every ``save_every``
steps and when the run is stopped (Ctrl-C), and the same command resumes from it. A
held-out part of the data is scored before and after. The result is a GGUF adapter
(``export``) that records how it was made.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from shellagent.errors import EnvironmentProblem, InputError
from shellagent.training.data import IGNORE, Sample, encode, load_conversations, split

if TYPE_CHECKING:
    import numpy as np

    Matrix: TypeAlias = np.ndarray[Any, Any]  # a LoRA matrix, A or B

TARGETS = (
    "self_attn.q_proj",
    "self_attn.k_proj",
    "self_attn.v_proj",
    "self_attn.o_proj",
    "mlp.gate_proj",
    "mlp.up_proj",
    "mlp.down_proj",
)


@dataclass(frozen=True)
class TrainConfig:
    data: tuple[Path, ...]
    output: Path
    base: str = "default"
    epochs: float = 1.0
    steps: int | None = None  # overrides epochs
    learning_rate: float = 2e-4
    rank: int = 16
    alpha: float = 32.0
    threads: int | None = None
    seed: int = 0
    max_tokens: int = 1024
    batch_tokens: int = 4096
    held_out: float = 0.05
    save_every: int = 20
    targets: tuple[str, ...] = TARGETS
    start_from: Path | None = None  # an adapter of this base to train further

    def fingerprint(self) -> str:
        """What makes a checkpoint resumable: everything but the step budget and threads."""
        keep = {k: str(v) for k, v in asdict(self).items() if k not in ("threads", "steps")}
        return hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class TrainResult:
    adapter: Path
    steps: int
    examples: int
    held_out_examples: int
    seconds: float
    examples_per_s: float
    train_loss: float
    held_out_loss_before: float | None
    held_out_loss_after: float | None
    adapter_bytes: int
    info: dict[str, str] = field(default_factory=dict)


def _require() -> Any:
    try:
        import peft
        import torch
        import transformers
    except ImportError:
        raise EnvironmentProblem(
            "training needs PyTorch, transformers and PEFT, which are not installed",
            hint="pip install 'shellagent[train]' (or ./install.sh --train)",
        ) from None
    return torch, transformers, peft


def resolve_base(spec: str) -> tuple[Path, str, str]:
    """(GGUF path, name, sha256) of a local base model spec."""
    from shellagent.model.adapters import file_sha256
    from shellagent.model.catalog import installed_path, lookup

    if spec in ("", "default", "smollm2-135m"):
        entry = lookup("smollm2-135m")
        return installed_path(entry), entry.name, entry.sha256 or file_sha256(installed_path(entry))
    candidate = Path(spec).expanduser()
    if candidate.is_file():
        return candidate, candidate.stem, file_sha256(candidate)
    entry = lookup(spec)
    path = installed_path(entry)
    if entry.kind != "model" or not path.is_file():
        raise InputError(f"{spec} is not a downloaded base model", hint="shellagent model list")
    return path, entry.name, entry.sha256 or file_sha256(path)


def load_float_base(gguf: Path) -> Any:
    """The base as a float transformers model (``base.load_llama``)."""
    _require()
    from shellagent.training.base import load_llama

    return load_llama(gguf)


def batches(samples: Sequence[Sample], batch_tokens: int, rng: random.Random) -> list[list[Sample]]:
    """Samples of similar length together, each batch at most ``batch_tokens`` padded."""
    ordered = sorted(samples, key=lambda s: len(s.tokens))
    out: list[list[Sample]] = []
    current: list[Sample] = []
    for sample in ordered:
        longest = max([len(sample.tokens), *(len(s.tokens) for s in current)])
        if current and longest * (len(current) + 1) > batch_tokens:
            out.append(current)
            current = []
        current.append(sample)
    if current:
        out.append(current)
    rng.shuffle(out)
    return out


def _tensors(batch: Sequence[Sample], pad: int) -> tuple[Any, Any, Any]:
    torch, _, _ = _require()
    width = max(len(s.tokens) for s in batch)
    ids = torch.full((len(batch), width), pad, dtype=torch.long)
    labels = torch.full((len(batch), width), IGNORE, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, s in enumerate(batch):
        ids[row, : len(s.tokens)] = torch.tensor(s.tokens)
        labels[row, : len(s.labels)] = torch.tensor(s.labels)
        mask[row, : len(s.tokens)] = 1
    return ids, labels, mask


def reply_loss(model: Any, ids: Any, labels: Any, mask: Any) -> Any:
    """The mean cross-entropy of the trained tokens (the model's replies), as
    ``model(labels=…).loss`` computes it, with the output layer applied only where a token
    is trained. Over a 49,152-token vocabulary the logits of every position were most of a
    step's memory (about 0.8 GB per 4,096 tokens, twice over with their gradient), and a
    reply is a small share of a conversation."""
    torch, _, _ = _require()
    causal = model.get_base_model() if hasattr(model, "get_base_model") else model
    hidden = causal.model(input_ids=ids, attention_mask=mask).last_hidden_state
    target = labels[:, 1:]
    trained = target != IGNORE
    logits = causal.lm_head(hidden[:, :-1][trained])
    return torch.nn.functional.cross_entropy(logits.float(), target[trained])


def train(
    cfg: TrainConfig,
    *,
    progress: Callable[[str], None] = print,
    stop: threading.Event | None = None,
) -> TrainResult:
    """Run the training ``cfg`` describes (resuming its checkpoint) and write the adapter."""
    torch, _, peft = _require()
    from shellagent.model.llama import LlamaBackend

    started = time.monotonic()
    stop = stop or threading.Event()
    torch.manual_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    gguf, base_name, base_sha = resolve_base(cfg.base)
    tok = LlamaBackend(gguf, n_ctx=512, check_memory=False)
    conversations = load_conversations(cfg.data)
    samples = [s for c in conversations if (s := encode(c, tok, max_tokens=cfg.max_tokens))]
    if not samples:
        raise InputError("no conversation fits in --max-tokens with at least one reply")
    train_set, held_set = split(samples, cfg.held_out, cfg.seed)
    pad = int(tok._llm.token_eos())
    del tok
    model = load_float_base(gguf)
    start = _start_from(cfg, gguf, base_sha, model.config) if cfg.start_from else None
    if start is not None:  # its rank and alpha are the run's
        cfg = replace(cfg, rank=start.rank, alpha=start.alpha)
    lora = peft.LoraConfig(
        r=cfg.rank,
        lora_alpha=cfg.alpha,
        lora_dropout=0.0,
        bias="none",
        target_modules=[t.split(".")[-1] for t in cfg.targets],
        task_type="CAUSAL_LM",
    )
    with warnings.catch_warnings():  # transformers' deprecations inside PEFT: not ours to fix
        warnings.simplefilter("ignore", FutureWarning)
        model = peft.get_peft_model(model, lora)
    if start is not None:
        start.load_into(model, torch)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg.learning_rate, weight_decay=0.0)
    rng = random.Random(cfg.seed)
    per_epoch = batches(train_set, cfg.batch_tokens, random.Random(cfg.seed))
    total = cfg.steps if cfg.steps is not None else max(1, math.ceil(len(per_epoch) * cfg.epochs))
    warmup = max(1, total // 20)

    def lr_at(step: int) -> float:
        if step < warmup:
            return cfg.learning_rate * (step + 1) / warmup
        progress_frac = (step - warmup) / max(1, total - warmup)
        return cfg.learning_rate * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress_frac)))

    checkpoint = cfg.output.with_suffix(".ckpt")
    step, seen, losses = 0, 0, []
    if checkpoint.exists():
        state = torch.load(checkpoint, weights_only=False)
        if state.get("fingerprint") == cfg.fingerprint():
            peft.set_peft_model_state_dict(model, state["lora"])
            optimizer.load_state_dict(state["optimizer"])
            step, seen, losses = state["step"], state["seen"], state["losses"]
            rng.setstate(state["rng"])
            progress(f"resuming at step {step} of {total} from {checkpoint}")
        else:
            progress(f"{checkpoint} is from a different run: starting afresh")

    def save() -> None:
        torch.save(
            {
                "fingerprint": cfg.fingerprint(),
                "lora": peft.get_peft_model_state_dict(model),
                "optimizer": optimizer.state_dict(),
                "step": step,
                "seen": seen,
                "losses": losses,
                "rng": rng.getstate(),
            },
            checkpoint,
        )

    def held_out_loss() -> float | None:
        if not held_set:
            return None
        model.eval()
        total_loss, count = 0.0, 0
        with torch.no_grad():
            for batch in batches(held_set, cfg.batch_tokens, random.Random(0)):
                ids, labels, mask = _tensors(batch, pad)
                n = sum(s.trained_tokens for s in batch)
                total_loss += float(reply_loss(model, ids, labels, mask)) * n
                count += n
        model.train()
        return total_loss / max(1, count)

    before = held_out_loss() if step == 0 else None
    if before is not None:
        progress(f"held-out loss before training: {before:.4f} ({len(held_set)} examples)")
    model.train()
    order: list[list[Sample]] = []
    run_start, run_seen, first_step = time.monotonic(), 0, step
    while step < total:
        if stop.is_set():
            save()
            raise KeyboardInterrupt
        if not order:
            order = list(per_epoch)
            rng.shuffle(order)
        batch = order.pop()
        ids, labels, mask = _tensors(batch, pad)
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step)
        loss = reply_loss(model, ids, labels, mask)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        seen += len(batch)
        run_seen += len(batch)
        losses.append(float(loss.detach()))
        elapsed = time.monotonic() - run_start
        rate = run_seen / max(1e-9, elapsed)
        eta = (total - step) * elapsed / (step - first_step)
        recent = sum(losses[-10:]) / len(losses[-10:])
        progress(
            f"step {step}/{total}  loss {recent:.4f}  {rate:.2f} examples/s  ETA {_duration(eta)}"
        )
        if step % cfg.save_every == 0:
            save()
    after = held_out_loss()
    if after is not None:
        progress(f"held-out loss after training: {after:.4f}")
    seconds = time.monotonic() - started
    info = {
        "base": base_name,
        "data_sha256": _files_sha(cfg.data),
        "seed": str(cfg.seed),
        "steps": str(step),
        "rank": str(cfg.rank),
        "alpha": str(cfg.alpha),
        "learning_rate": str(cfg.learning_rate),
        "engine": f"torch {torch.__version__}, peft {peft.__version__}",
        "wall_time_s": f"{seconds:.0f}",
        "train_loss": f"{sum(losses[-10:]) / max(1, len(losses[-10:])):.4f}",
        "held_out_loss": f"{after:.4f}" if after is not None else "",
    }
    if cfg.start_from is not None:
        from shellagent.model.adapters import file_sha256

        info["from"] = f"{cfg.start_from.name} {file_sha256(cfg.start_from)}"
    _export(model, cfg, base_sha, base_name, info)
    checkpoint.unlink(missing_ok=True)
    return TrainResult(
        adapter=cfg.output,
        steps=step,
        examples=len(train_set),
        held_out_examples=len(held_set),
        seconds=seconds,
        examples_per_s=seen / max(1e-9, seconds),
        train_loss=float(info["train_loss"]),
        held_out_loss_before=before,
        held_out_loss_after=after,
        adapter_bytes=cfg.output.stat().st_size,
        info=info,
    )


@dataclass(frozen=True)
class _Start:
    """An adapter's matrices to start from, in transformers' layout."""

    alpha: float
    pairs: dict[tuple[int, str], tuple[Matrix, Matrix]]

    @property
    def rank(self) -> int:
        return int(next(iter(self.pairs.values()))[0].shape[0])

    def load_into(self, model: Any, torch: Any) -> None:
        """Copy the matrices into ``model``'s LoRA weights (PEFT), every one of them."""
        import re

        pattern = re.compile(r"layers\.(\d+)\.(self_attn\.\w+|mlp\.\w+)\.lora_([AB])\.")
        filled = 0
        with torch.no_grad():
            for key, param in model.named_parameters():
                m = pattern.search(key)
                if m is None:
                    continue
                pair = self.pairs.get((int(m.group(1)), m.group(2)))
                if pair is None:
                    raise InputError(
                        f"the adapter has no LoRA for {m.group(2)} of layer {m.group(1)}"
                    )
                matrix = pair[0] if m.group(3) == "A" else pair[1]
                if tuple(param.shape) != matrix.shape:
                    raise InputError(
                        f"the adapter's {key} is {matrix.shape}, not {tuple(param.shape)}"
                    )
                param.copy_(torch.from_numpy(matrix))
                filled += 1
        if filled != 2 * len(self.pairs):
            raise InputError("the adapter's LoRA places are not the ones this run trains")


def _start_from(cfg: TrainConfig, gguf: Path, base_sha: str, config: Any) -> _Start:
    """The adapter ``cfg.start_from``, checked to be one of this base."""
    from shellagent.model.adapters import check_adapter
    from shellagent.training.export import read_adapter

    assert cfg.start_from is not None
    check_adapter(cfg.start_from, gguf, base_sha256=base_sha)
    alpha, pairs = read_adapter(
        cfg.start_from,
        n_head=int(config.num_attention_heads),
        n_head_kv=int(config.num_key_value_heads),
    )
    if not pairs:
        raise InputError(f"{cfg.start_from} holds no LoRA matrices")
    return _Start(alpha, pairs)


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


def _files_sha(files: Sequence[Path]) -> str:
    h = hashlib.sha256()
    for path in files:
        h.update(path.read_bytes())
    return h.hexdigest()


def _export(
    model: Any, cfg: TrainConfig, base_sha: str, base_name: str, info: dict[str, str]
) -> None:
    """The trained LoRA matrices of ``model`` (PEFT) into a GGUF adapter at ``cfg.output``."""
    import re

    from shellagent.training.export import write_adapter

    state = model.state_dict()
    pairs: dict[tuple[int, str], tuple[Matrix, Matrix]] = {}
    pattern = re.compile(r"layers\.(\d+)\.(self_attn\.\w+|mlp\.\w+)\.lora_([AB])\.")
    found: dict[tuple[int, str], dict[str, Matrix]] = {}  # A and B of each place
    for key, tensor in state.items():
        m = pattern.search(key)
        if m:
            found.setdefault((int(m.group(1)), m.group(2)), {})[m.group(3)] = (
                tensor.detach().float().numpy()
            )
    for where, ab in found.items():
        pairs[where] = (ab["A"], ab["B"])
    config = model.base_model.model.config
    cfg.output.parent.mkdir(parents=True, exist_ok=True)
    temp = cfg.output.with_name(cfg.output.name + ".partial")
    write_adapter(
        temp,
        pairs,
        alpha=cfg.alpha,
        n_head=int(config.num_attention_heads),
        n_head_kv=int(config.num_key_value_heads),
        base_sha256=base_sha,
        base_name=base_name,
        info=info,
    )
    temp.replace(cfg.output)
