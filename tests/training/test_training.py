"""`shellagent train` end to end on a tiny model: the adapter loads in llama.cpp, computes
what the trained PyTorch model computes, changes the output, and training resumes after a
stop. Bad input gets a clear error."""

from __future__ import annotations

import json
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

from shellagent.cli.main import main
from shellagent.errors import InputError, ModelUnavailable
from shellagent.model import load_backend
from shellagent.model.llama import LlamaBackend
from shellagent.training.train import TrainConfig, train
from tests.training.conftest import REPLY

PROMPT = [
    {"role": "system", "content": "You are a shell agent."},
    {"role": "user", "content": "Task: say the word number 99"},
]


def _config(tiny_model: Path, data: Path, out: Path, **kw: object) -> TrainConfig:
    base = dict(
        data=(data,),
        output=out,
        base=str(tiny_model),
        steps=12,
        learning_rate=5e-3,
        rank=8,
        alpha=16.0,
        held_out=0.2,
        batch_tokens=2048,
        save_every=2,
        seed=1,
    )
    base.update(kw)
    return TrainConfig(**base)  # type: ignore[arg-type]


def test_training_writes_an_adapter_that_changes_the_model(
    tiny_model: Path, sft_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "adapter.gguf"
    result = train(_config(tiny_model, sft_file, out), progress=lambda _line: None)
    assert out.is_file() and result.adapter_bytes == out.stat().st_size < 20_000_000
    assert result.held_out_loss_before is not None and result.held_out_loss_after is not None
    assert result.held_out_loss_after < result.held_out_loss_before
    plain = load_backend(str(tiny_model), n_ctx=256).generate(PROMPT, max_tokens=8).text
    tuned = load_backend(f"{tiny_model}+{out}", n_ctx=256).generate(PROMPT, max_tokens=8).text
    assert tuned != plain
    assert tuned.startswith(REPLY[:8]), tuned  # it learned the reply


def test_llama_cpp_with_the_adapter_computes_what_the_trained_model_does(
    tiny_model: Path, sft_file: Path, tmp_path: Path
) -> None:
    import llama_cpp
    import peft
    import torch

    from shellagent.training.base import load_llama

    out = tmp_path / "adapter.gguf"
    train(_config(tiny_model, sft_file, out, steps=3), progress=lambda _l: None)
    backend = load_backend(f"{tiny_model}+{out}", n_ctx=256)
    assert isinstance(backend, LlamaBackend)
    ids = backend.tokenize(backend.template.render(PROMPT), at_start=True)
    llm = backend._llm
    llm.reset()
    llm.eval(ids)
    ours = np.ctypeslib.as_array(
        llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(backend._n_vocab,)
    ).copy()
    # the same adapter, read back from GGUF into PEFT's layout, on the float base
    targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    with warnings.catch_warnings():  # a transformers deprecation inside PEFT
        warnings.simplefilter("ignore", FutureWarning)
        model = peft.get_peft_model(
            load_llama(tiny_model), peft.LoraConfig(r=8, lora_alpha=16, target_modules=targets)
        )
    _load_gguf_adapter(model, out)
    with torch.no_grad():
        theirs = model(torch.tensor([ids])).logits[0, -1].numpy()
    assert int(ours.argmax()) == int(theirs.argmax())
    assert float(np.abs(ours - theirs).max()) < 1e-2


def _load_gguf_adapter(model: object, path: Path) -> None:
    import torch

    from shellagent.training.export import read_adapter
    from tests.training.tiny_model import HEADS, KV_HEADS

    _, pairs = read_adapter(path, n_head=HEADS, n_head_kv=KV_HEADS)
    state = model.state_dict()  # type: ignore[attr-defined]
    for (layer, module), (a, b) in pairs.items():
        for which, array in (("A", a), ("B", b)):
            key = next(k for k in state if f"layers.{layer}.{module}.lora_{which}" in k)
            state[key] = torch.from_numpy(np.ascontiguousarray(array))
    model.load_state_dict(state)  # type: ignore[attr-defined]


def test_training_goes_on_from_an_adapter_of_the_same_base(
    tiny_model: Path, sft_file: Path, tmp_path: Path
) -> None:
    """--from: the run starts where the adapter left off (its held-out loss, its matrices),
    keeps its rank and alpha, and says where it came from; another base's is refused."""
    import gguf

    from shellagent.training.export import read_adapter
    from tests.training.tiny_model import HEADS, KV_HEADS

    first = tmp_path / "first.gguf"
    trained = train(_config(tiny_model, sft_file, first), progress=lambda _l: None)
    # a learning rate too small to move anything: the matrices come back as they went in
    again = tmp_path / "again.gguf"
    cfg = _config(
        tiny_model, sft_file, again, steps=1, learning_rate=1e-12, rank=4, alpha=3.0,
        start_from=first,
    )  # fmt: skip
    result = train(cfg, progress=lambda _l: None)
    assert result.held_out_loss_before == pytest.approx(trained.held_out_loss_after, rel=1e-4)
    alpha, old = read_adapter(first, n_head=HEADS, n_head_kv=KV_HEADS)
    alpha_again, new = read_adapter(again, n_head=HEADS, n_head_kv=KV_HEADS)
    assert alpha_again == alpha == 16.0 and set(new) == set(old)
    for where, (a, b) in old.items():
        assert np.allclose(new[where][0], a, atol=1e-6) and np.allclose(new[where][1], b, atol=1e-6)
    meta = {f.name: f for f in gguf.GGUFReader(str(again)).fields.values()}
    said = bytes(meta["shellagent.train.from"].parts[-1]).decode()
    assert said.startswith("first.gguf ")
    other = tmp_path / "other.gguf"
    from tests.training.tiny_model import write_tiny_model

    write_tiny_model(other, seed=7)
    with pytest.raises(ModelUnavailable, match="trained for another base model"):
        train(_config(other, sft_file, tmp_path / "x.gguf", start_from=first), progress=print)


def test_a_stopped_run_resumes_from_its_checkpoint(
    tiny_model: Path, sft_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "adapter.gguf"
    stop = threading.Event()
    lines: list[str] = []

    def progress(line: str) -> None:
        lines.append(line)
        if line.startswith("step 4/"):
            stop.set()

    with pytest.raises(KeyboardInterrupt):
        train(_config(tiny_model, sft_file, out), progress=progress, stop=stop)
    assert out.with_suffix(".ckpt").exists() and not out.exists()
    lines.clear()
    result = train(_config(tiny_model, sft_file, out), progress=lines.append)
    assert any(line.startswith("resuming at step 4 of 12") for line in lines), lines[:3]
    assert result.steps == 12 and out.exists() and not out.with_suffix(".ckpt").exists()
    assert "ETA" in lines[-3] or any("ETA" in line for line in lines)


def test_bad_input_is_a_clear_error(
    tiny_model: Path, sft_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
    with pytest.raises(InputError, match="no conversations with a model reply"):
        train(_config(tiny_model, empty, tmp_path / "x.gguf"), progress=lambda _l: None)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"messages": []}\nnot json\n')
    assert (
        main(["train", str(broken), "-o", str(tmp_path / "y.gguf"), "--base", str(tiny_model)]) == 2
    )
    assert f"{broken}:2: not an SFT record" in capsys.readouterr().err
    # an adapter for another base, and a file that is not an adapter
    adapter = tmp_path / "adapter.gguf"
    train(_config(tiny_model, sft_file, adapter, steps=1), progress=lambda _l: None)
    with pytest.raises(ModelUnavailable, match="trained for another base model"):
        load_backend(f"default+{adapter}")
    with pytest.raises(ModelUnavailable, match="not a LoRA adapter"):
        load_backend(f"{tiny_model}+{tiny_model}")
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x01")
    with pytest.raises(ModelUnavailable, match="truncated"):
        load_backend(f"{tiny_model}+{corrupt}")


def test_catalog_adapters_are_listed_and_load_by_name_through_daemon_and_not(
    tiny_model: Path,
    sft_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from shellagent.model.adapters import file_sha256

    adapter = tmp_path / "zebra.gguf"
    train(_config(tiny_model, sft_file, adapter), progress=lambda _l: None)
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(
        f'["tiny"]\ndescription = "tiny test base"\nurl = "file://{tiny_model}"\n'
        f'sha256 = "{file_sha256(tiny_model)}"\ncontext = 512\n\n'
        f'["zebra"]\ndescription = "says zebra"\nurl = "file://{adapter}"\n'
        'kind = "adapter"\nbase = "tiny"\n'
    )
    monkeypatch.setenv("SHELLAGENT_MODEL_CATALOG", str(catalog))
    models = tmp_path / "models"
    models.mkdir()
    (models / "tiny.gguf").symlink_to(tiny_model)
    (models / "zebra.gguf").symlink_to(adapter)
    monkeypatch.setenv("SHELLAGENT_DATA_DIR", str(tmp_path))
    assert main(["model", "list"]) == 0
    listing = capsys.readouterr().out
    assert "zebra" in listing and "adapter for tiny: --model tiny+zebra" in listing
    for spec in ("tiny+zebra", "zebra"):
        backend = load_backend(spec, n_ctx=256)
        assert backend.name == "tiny+zebra"
        assert backend.generate(PROMPT, max_tokens=8).text.startswith(REPLY[:8])
    # the same spec through `ask --no-daemon` and through a warm daemon
    import os
    import subprocess
    import sys
    import tempfile

    from tests.daemon.conftest import start_daemon, stop

    runtime = Path(tempfile.mkdtemp(prefix="sa-", dir="/tmp")) / "run"
    monkeypatch.setenv("SHELLAGENT_RUNTIME_DIR", str(runtime))
    ask = [sys.executable, "-m", "shellagent.cli.ask", "--json", "--dry-run", "--max-turns", "1"]
    for extra in (["--no-daemon", "--model", "tiny+zebra"], []):
        daemon = None if extra else start_daemon("--model", "tiny+zebra")
        try:
            out = subprocess.run(
                [*ask, *extra, "say the word number 7"],
                capture_output=True,
                text=True,
                env=dict(os.environ),
                timeout=300,
            ).stdout
        finally:
            if daemon is not None:
                stop(daemon)
        accepted = [json.loads(line) for line in out.splitlines() if '"accepted"' in line]
        assert accepted and accepted[0]["model"] == "tiny+zebra", out[-1500:]


def test_the_reply_only_loss_is_the_models_own_loss(tiny_model: Path, sft_file: Path) -> None:
    import torch

    from shellagent.training.data import encode, load_conversations
    from shellagent.training.train import _tensors, load_float_base, reply_loss

    tok = LlamaBackend(tiny_model, n_ctx=512, check_memory=False)
    samples = [s for c in load_conversations([sft_file]) if (s := encode(c, tok, max_tokens=512))]
    ids, labels, mask = _tensors(samples[:3], int(tok._llm.token_eos()))
    model = load_float_base(tiny_model)
    with torch.no_grad():
        full = float(model(input_ids=ids, attention_mask=mask, labels=labels).loss)
        ours = float(reply_loss(model, ids, labels, mask))
    assert abs(full - ours) < 1e-5, (full, ours)
