"""A tiny llama model in GGUF (2 layers, 64 wide, random weights) with the embedded
SmolLM2's tokenizer and chat template: loads in llama.cpp and transformers in a second,
so training runs end to end in the test suite in seconds."""

from __future__ import annotations

from pathlib import Path

import numpy as np

LAYERS, WIDTH, HEADS, KV_HEADS, FFN = 2, 64, 4, 2, 128


def write_tiny_model(path: Path, seed: int = 0) -> Path:
    import gguf

    from shellagent.model.embedded import embedded_model_path

    source = gguf.GGUFReader(str(embedded_model_path()))
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny test model")
    writer.add_context_length(2048)
    writer.add_embedding_length(WIDTH)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_rope_dimension_count(WIDTH // HEADS)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    for field in source.fields.values():
        if field.name.startswith("tokenizer."):
            kind = field.types[0]
            value = field.contents()
            if kind == gguf.GGUFValueType.ARRAY:
                writer.add_array(field.name, value)
            elif kind == gguf.GGUFValueType.STRING:
                writer.add_string(field.name, value)
            elif kind == gguf.GGUFValueType.BOOL:
                writer.add_bool(field.name, value)
            else:
                writer.add_uint32(field.name, int(value))
    vocab = len(source.fields["tokenizer.ggml.tokens"].contents())
    rng = np.random.default_rng(seed)

    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.05).astype(np.float32)

    writer.add_tensor("token_embd.weight", w(vocab, WIDTH))
    writer.add_tensor("output_norm.weight", np.ones(WIDTH, dtype=np.float32))
    head_dim = WIDTH // HEADS
    for i in range(LAYERS):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(WIDTH, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.attn_q.weight", w(WIDTH, WIDTH))
        writer.add_tensor(f"blk.{i}.attn_k.weight", w(KV_HEADS * head_dim, WIDTH))
        writer.add_tensor(f"blk.{i}.attn_v.weight", w(KV_HEADS * head_dim, WIDTH))
        writer.add_tensor(f"blk.{i}.attn_output.weight", w(WIDTH, WIDTH))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(WIDTH, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", w(FFN, WIDTH))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", w(FFN, WIDTH))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", w(WIDTH, FFN))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
