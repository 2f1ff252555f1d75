"""The agent's GGUF base as a float PyTorch model, read and dequantized here.

transformers can read GGUF itself, but it also rebuilds the tokenizer (tens of seconds for
a 49k vocabulary) and training never needs it (llama.cpp tokenizes, as at run time). This
reads the llama tensors with the ``gguf`` package, dequantizes them, undoes llama.cpp's row
permutation of the query and key projections, and loads them into a
``LlamaForCausalLM`` built from the file's own metadata.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from shellagent.errors import InputError

_LAYER = {
    "attn_norm": "input_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}


def unpermute_rows(w: np.ndarray[Any, Any], n_head: int) -> np.ndarray[Any, Any]:
    """llama.cpp's query/key row order back to transformers' (GGUF -> HF)."""
    return (
        w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


def load_llama(path: Path) -> Any:
    """A float32 ``LlamaForCausalLM`` with the weights of the GGUF at ``path``."""
    import gguf
    import torch
    import transformers

    from shellagent.model.gguf import read_layout

    found, infos, data_start = read_layout(path)

    def meta(key: str) -> Any:
        return found.get(key)

    if meta("general.architecture") != "llama":
        raise InputError(f"{path}: training supports llama-architecture models only")
    n_head = int(meta("llama.attention.head_count"))
    n_head_kv = int(meta("llama.attention.head_count_kv") or n_head)
    tensors = {t.name: t for t in infos}
    config = transformers.LlamaConfig(
        vocab_size=int(tensors["token_embd.weight"].shape[1]),
        hidden_size=int(meta("llama.embedding_length")),
        intermediate_size=int(meta("llama.feed_forward_length")),
        num_hidden_layers=int(meta("llama.block_count")),
        num_attention_heads=n_head,
        num_key_value_heads=n_head_kv,
        rms_norm_eps=float(meta("llama.attention.layer_norm_rms_epsilon") or 1e-5),
        rope_parameters={
            "rope_type": "default",
            "rope_theta": float(meta("llama.rope.freq_base") or 10000.0),
        },
        max_position_embeddings=int(meta("llama.context_length") or 2048),
        tie_word_embeddings="output.weight" not in tensors,
        bos_token_id=meta("tokenizer.ggml.bos_token_id"),
        eos_token_id=meta("tokenizer.ggml.eos_token_id"),
    )
    model = transformers.LlamaForCausalLM(config)
    state: dict[str, torch.Tensor] = {}
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    for name, tensor in tensors.items():
        kind = gguf.GGMLQuantizationType(tensor.kind)
        block, type_size = gguf.GGML_QUANT_SIZES[kind]
        count = int(np.prod(tensor.shape))
        start = data_start + tensor.offset
        data = raw[start : start + count // block * type_size]
        if kind in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16):
            data = data.view(np.float32 if kind == gguf.GGMLQuantizationType.F32 else np.float16)
        rows = tuple(reversed(tensor.shape))
        array = gguf.quants.dequantize(data.reshape(rows[:-1] + (-1,)), kind)
        array = np.array(array, dtype=np.float32).reshape(rows)
        parts = name.split(".")
        if name == "token_embd.weight":
            key = "model.embed_tokens.weight"
        elif name == "output_norm.weight":
            key = "model.norm.weight"
        elif name == "output.weight":
            key = "lm_head.weight"
        elif parts[0] == "blk" and parts[2] in _LAYER:
            if parts[2] == "attn_q":
                array = unpermute_rows(array, n_head)
            elif parts[2] == "attn_k":
                array = unpermute_rows(array, n_head_kv)
            key = f"model.layers.{parts[1]}.{_LAYER[parts[2]]}.weight"
        else:
            continue
        state[key] = torch.from_numpy(array)
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [m for m in missing if not (config.tie_word_embeddings and m == "lm_head.weight")]
    if missing or unexpected:
        raise InputError(f"{path}: tensors do not fit a llama model ({missing or unexpected})")
    if config.tie_word_embeddings:
        model.tie_weights()
    model.train(False)
    return model
