"""Write a lab policy (HF Llama + byte-level BPE tokenizer) as a GGUF file that llama.cpp serves.

llama.cpp's own converter (``convert_hf_to_gguf.py``) lives in the llama.cpp source tree and
identifies tokenizers by a hash of known pre-trained ones; a tokenizer trained here is none of
them. So this writes the file directly with the ``gguf`` package (llama.cpp's own writer):
architecture ``llama``, the hyperparameters, every tensor under llama.cpp's names (q and k
permuted from HF's rotate-half layout to llama.cpp's, as the converter does), and the tokenizer
as ``gpt2`` BPE (its vocabulary, merges, special tokens as control tokens, the lab chat template),
which is what a ``tokenizers`` ByteLevel BPE is. Float32 throughout: the model is tiny.

Layer: io (torch, gguf imported inside the functions).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _permute(w: Any, n_head: int) -> Any:
    """HF q/k weight (rotate-half) → llama.cpp's interleaved rotary layout."""
    rows = w.shape[0]
    return w.reshape(n_head, 2, rows // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _tokenizer_fields(tok: Any) -> tuple[list[str], list[int], list[str]]:
    """(tokens by id, token types, merges) of a fast byte-level BPE tokenizer; a tokenizer
    whose merges cross GPT-2's pieces (the lab's default, ``policy.train_tokenizer``) is refused:
    llama.cpp would split its text otherwise and feed the model other ids."""
    state = json.loads(tok.backend_tokenizer.to_str())
    if "Punctuation" not in json.dumps(state.get("pre_tokenizer")):
        raise ValueError("this tokenizer merges across GPT-2 pre-tokenizer pieces; llama.cpp "
                         "would tokenize it differently: train it with "
                         "train_tokenizer(..., llama_compatible=True)")  # fmt: skip
    vocab: dict[str, int] = dict(state["model"]["vocab"])
    for added in state.get("added_tokens", []):
        vocab[added["content"]] = added["id"]
    tokens = [""] * (max(vocab.values()) + 1)
    for text, i in vocab.items():
        tokens[i] = text
    special = {a["content"] for a in state.get("added_tokens", []) if a.get("special")}
    types = [3 if t in special else 1 for t in tokens]  # 3: control, 1: normal
    merges = [m if isinstance(m, str) else " ".join(m) for m in state["model"]["merges"]]
    return tokens, types, merges


def write_gguf(model: Any, tok: Any, path: str | Path) -> Path:
    """``model`` (a ``LlamaForCausalLM``) and ``tok`` → a GGUF file at ``path``."""
    import gguf
    import numpy as np

    cfg = model.config
    path = Path(path)
    w = gguf.GGUFWriter(str(path), "llama")
    head_dim = cfg.hidden_size // cfg.num_attention_heads
    w.add_name("agentpost-lab-policy")
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(float(getattr(cfg, "rope_theta", None) or 10000.0))
    w.add_layer_norm_rms_eps(float(cfg.rms_norm_eps))
    w.add_vocab_size(cfg.vocab_size)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    tokens, types, merges = _tokenizer_fields(tok)
    tokens += [f"<unused{i}>" for i in range(len(tokens), cfg.vocab_size)]
    types += [5] * (cfg.vocab_size - len(types))  # 5: unused
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")  # GPT-2 regex, as ByteLevel uses
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_eos_token_id(tok.eos_token_id)
    w.add_pad_token_id(tok.pad_token_id)
    w.add_add_bos_token(False)
    w.add_chat_template(tok.chat_template)
    sd = {k: v.detach().float().cpu().numpy() for k, v in model.state_dict().items()}
    names = {
        "model.embed_tokens.weight": "token_embd.weight",
        "model.norm.weight": "output_norm.weight",
    }
    if "lm_head.weight" in sd and not cfg.tie_word_embeddings:
        names["lm_head.weight"] = "output.weight"
    per_layer = {
        "input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
        "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
        "post_attention_layernorm": "ffn_norm", "mlp.gate_proj": "ffn_gate",
        "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down",
    }  # fmt: skip
    for i in range(cfg.num_hidden_layers):
        for hf, ours in per_layer.items():
            names[f"model.layers.{i}.{hf}.weight"] = f"blk.{i}.{ours}.weight"
    for hf, ours in names.items():
        arr = sd[hf]
        if ours.endswith("attn_q.weight"):
            arr = _permute(arr, cfg.num_attention_heads)
        elif ours.endswith("attn_k.weight"):
            arr = _permute(arr, cfg.num_key_value_heads)
        w.add_tensor(ours, np.ascontiguousarray(arr, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
