"""A LoRA adapter as GGUF: what llama.cpp's ``--lora`` (llama-cpp-python ``lora_path``)
applies over a quantized base.

Tensors are named like the base's (``blk.N.attn_q.weight``) with ``.lora_a`` (rank x in)
and ``.lora_b`` (out x rank); metadata says ``general.type = adapter``, ``adapter.type =
lora`` and ``adapter.lora.alpha``. llama.cpp stores the query and key projections of llama
models with their rows permuted for its rotary embedding, so ``lora_b`` of those two gets
the same permutation. The base's sha256 and name are recorded so a mismatched base is
refused with a clear message (``model/adapters.py``), plus how the adapter was made.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from shellagent.model.adapters import BASE_NAME_KEY, BASE_SHA_KEY

HF_TO_GGUF = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}


def permute_rows(w: np.ndarray[Any, Any], n_head: int) -> np.ndarray[Any, Any]:
    """llama.cpp's layout of a query or key projection's output rows (HF -> GGUF)."""
    return (
        w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


def write_adapter(
    path: Path,
    pairs: Mapping[tuple[int, str], tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]],
    *,
    alpha: float,
    n_head: int,
    n_head_kv: int,
    base_sha256: str,
    base_name: str,
    info: Mapping[str, str] | None = None,
) -> None:
    """Write ``pairs`` ((layer, HF module) -> (A, B)) as a GGUF LoRA adapter."""
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", float(alpha))
    writer.add_string(BASE_SHA_KEY, base_sha256)
    writer.add_string(BASE_NAME_KEY, base_name)
    for key, value in (info or {}).items():
        writer.add_string(f"shellagent.train.{key}", value)
    for (layer, module), (a, b) in sorted(pairs.items()):
        name = f"blk.{layer}.{HF_TO_GGUF[module]}.weight"
        if module == "self_attn.q_proj":
            b = permute_rows(b, n_head)
        elif module == "self_attn.k_proj":
            b = permute_rows(b, n_head_kv)
        writer.add_tensor(f"{name}.lora_a", np.ascontiguousarray(a, dtype=np.float32))
        writer.add_tensor(f"{name}.lora_b", np.ascontiguousarray(b, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def read_adapter(
    path: Path, *, n_head: int, n_head_kv: int
) -> tuple[float, dict[tuple[int, str], tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]]:
    """A GGUF LoRA adapter's alpha and its (layer, HF module) -> (A, B) matrices in
    transformers' layout: what ``write_adapter`` wrote, read back to train further."""
    import gguf

    from shellagent.errors import InputError
    from shellagent.training.base import unpermute_rows

    to_hf = {v: k for k, v in HF_TO_GGUF.items()}
    reader = gguf.GGUFReader(str(path))
    field = reader.fields.get("adapter.lora.alpha")
    if field is None:
        raise InputError(f"{path} has no adapter.lora.alpha: not a LoRA adapter")
    alpha = float(field.parts[field.data[0]][0])
    found: dict[tuple[int, str], dict[str, np.ndarray[Any, Any]]] = {}
    for tensor in reader.tensors:
        parts = tensor.name.split(".")  # blk.N.attn_q.weight.lora_a
        if len(parts) != 5 or parts[0] != "blk" or parts[2] not in to_hf:
            raise InputError(f"{path}: unexpected tensor {tensor.name}")
        if tensor.tensor_type != gguf.GGMLQuantizationType.F32:
            raise InputError(f"{path}: {tensor.name} is not f32 (only f32 adapters train on)")
        shape = tuple(int(n) for n in reversed(tensor.shape))
        array = np.array(tensor.data, dtype=np.float32).reshape(shape)
        module = to_hf[parts[2]]
        if parts[4] == "lora_b" and module == "self_attn.q_proj":
            array = unpermute_rows(array, n_head)
        elif parts[4] == "lora_b" and module == "self_attn.k_proj":
            array = unpermute_rows(array, n_head_kv)
        found.setdefault((int(parts[1]), module), {})[parts[4]] = array
    pairs = {where: (ab["lora_a"], ab["lora_b"]) for where, ab in found.items()}
    return alpha, pairs
