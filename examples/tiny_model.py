"""A tiny randomly initialised chat model, built locally, so the training examples run on a
CPU with nothing downloaded: a word-level tokenizer trained on the export's own text, a
chat template that renders tools and tool calls (with generation markers, so TRL can train
on assistant turns only), and a 2-layer Llama-style model."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

# Renders system/user/assistant/tool turns, the offered tools, and tool calls as JSON.
CHAT_TEMPLATE = (
    "{% if tools %}<tools>{% for tool in tools %}{{ tool | tojson }}{% endfor %}</tools>\n{% endif %}"
    "{% for message in messages %}"
    "{% if message['role'] == 'assistant' %}<assistant>{% generation %}"
    "{% if message['content'] %}{{ message['content'] }}{% endif %}"
    "{% if message['tool_calls'] %}{% for call in message['tool_calls'] %}"
    "<call>{{ call['function']['name'] }} {{ call['function']['arguments'] | tojson }}</call>"
    "{% endfor %}{% endif %}</s>{% endgeneration %}\n"
    "{% elif message['role'] == 'tool' %}<tool>{{ message['content'] }}</tool>\n"
    "{% else %}<{{ message['role'] }}>{{ message['content'] }}</{{ message['role'] }}>\n{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
)
SPECIAL = ["<pad>", "<unk>", "</s>", "<assistant>", "<user>", "</user>", "<system>", "</system>", "<tool>", "</tool>", "<call>", "</call>", "<tools>", "</tools>"]


def texts_of(rows: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """Every string in the rows (messages, prompts, tool schemas), for the tokenizer's vocabulary."""
    for row in rows:
        yield json.dumps(row, ensure_ascii=False, default=str)


def build_tokenizer(texts: Iterable[str], vocab_size: int = 4000) -> Any:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(texts, trainers.WordLevelTrainer(vocab_size=vocab_size, special_tokens=SPECIAL))
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", unk_token="<unk>", eos_token="</s>")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_model(tokenizer: Any) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return LlamaForCausalLM(config)
