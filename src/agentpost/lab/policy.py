"""The lab's tiny policy, built from nothing: a BPE tokenizer trained with ``tokenizers`` on the
task corpus, and a small Llama-style model (transformers) with random weights.

``train_tokenizer`` learns byte-level BPE merges from the corpus texts and wraps them in a
``PreTrainedTokenizerFast`` with the lab transcript's special tokens and chat template
(``lab.transcript``); ``<|end|>`` is its EOS. ``lab_llama`` is about 1M parameters by default
(hidden 128, 4 layers): small enough to train on 2 CPU cores in minutes, large enough to learn
to copy file names and fields from the instruction into a command.

Layer: io (tokenizers, transformers and torch imported inside the functions).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agentpost.config_checks import at_least, check
from agentpost.lab.transcript import END, SPECIAL, TEMPLATE


@dataclass(frozen=True)
class PolicySize:
    hidden: int = 128
    layers: int = 4
    heads: int = 4
    intermediate: int = 384
    max_positions: int = 2048

    def __post_init__(self) -> None:
        rules = {k: (at_least(getattr(self, k), 1), "at least 1")
                 for k in ("hidden", "layers", "heads", "intermediate", "max_positions")}  # fmt: skip
        rules["hidden"] = (at_least(self.hidden, 1) and at_least(self.heads, 1)
                           and self.hidden % self.heads == 0, "a positive multiple of heads")  # fmt: skip
        check(self, rules)


SYNTAX_SPLIT = r"['\"/.,\n]"


def train_tokenizer(texts: Iterable[str], vocab_size: int = 1024, *,
                    llama_compatible: bool = False) -> Any:  # fmt: skip
    """Byte-level BPE over ``texts`` (rendered transcripts), with the transcript's specials.

    Default (the experiments): quotes, slashes, dots, commas and newlines are each their own
    piece, so a name is one token wherever the family writes it (``jobs`` in "/app/jobs.csv",
    ``timeout`` in "'timeout'", ``score`` in '"score"'), and everything else may merge: the
    commands' fixed syntax (``awk -F, 'NR==1{for(``, `` > /app``) becomes a few tokens, so a
    command is 17-23 tokens to sample, not 68-87 with every punctuation mark on its own
    (measured on the lab's commands). ``llama_compatible``: every whitespace character and
    punctuation mark its own piece, so no merge crosses a GPT-2 pre-tokenizer boundary and
    llama.cpp (``lab.gguf``, which can only name GPT-2's regex) tokenizes exactly as HF does."""
    import transformers
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    if llama_compatible:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(r"\s"), behavior="isolated"),
             pre_tokenizers.Punctuation(behavior="isolated"), byte_level]
        )  # fmt: skip
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(SYNTAX_SPLIT), behavior="isolated"), byte_level]
        )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<pad>", *SPECIAL],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts), trainer=trainer)
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token=END
    )
    fast.add_special_tokens({"additional_special_tokens": [s for s in SPECIAL if s != END]})
    fast.chat_template = TEMPLATE
    return fast


def lab_llama(tokenizer: Any, *, seed: int = 0, size: PolicySize | None = None) -> Any:
    """A randomly initialised Llama for ``tokenizer``'s vocabulary."""
    import torch
    import transformers

    size = size or PolicySize()
    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=size.hidden,
        intermediate_size=size.intermediate,
        num_hidden_layers=size.layers,
        num_attention_heads=size.heads,
        num_key_value_heads=size.heads,
        max_position_embeddings=size.max_positions,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    return transformers.LlamaForCausalLM(cfg)


def n_params(model: Any) -> int:
    return sum(p.numel() for p in model.parameters())
