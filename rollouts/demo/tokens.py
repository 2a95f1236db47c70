"""The tokenizer stand-in: special tokens with their Qwen ids, token counts, random token ids
and log-probs. No real tokenizer, so the demo stays standard library only and deterministic."""

from __future__ import annotations

import math
import random
import re
from array import array

IM_END, ENDOFTEXT = "<|im_end|>", "<|endoftext|>"
# Qwen tokenizer ids, so token-id views show the special tokens where a user expects them.
ENDOFTEXT_ID, IM_END_ID, THINK_ID = 151643, 151645, 151667
VOCAB = range(ENDOFTEXT_ID)
_SPECIAL = re.compile(r"<\|[a-z_]+\|>|</?(?:think|tool_call|tool_response|answer)>")


def count_tokens(text: str) -> int:
    """A tokenizer stand-in: special markers are one token, ASCII ~4 chars, CJK one char."""
    specials = len(_SPECIAL.findall(text))
    rest = _SPECIAL.sub("", text)
    ascii_chars = len(rest.encode("ascii", "ignore"))
    return specials + math.ceil(ascii_chars / 4) + len(rest) - ascii_chars


def draw_token_ids(rng: random.Random, n: int, response: str) -> list[int]:
    ids = rng.choices(VOCAB, k=n)
    if ids and response.startswith("<think>"):
        ids[0] = THINK_ID
    if ids and response.endswith((IM_END, ENDOFTEXT)):
        ids[-1] = IM_END_ID if response.endswith(IM_END) else ENDOFTEXT_ID
    return ids


def draw_log_probs(rng: random.Random, n: int) -> list[float]:
    # Through float32 like the trainer's tensors, so the values print with their long reprs.
    return array("f", [-rng.expovariate(5.0) for _ in range(n)]).tolist()
