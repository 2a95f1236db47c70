"""One big step file for benchmarks: long samples with full token-id and log-prob arrays,
streamed to any size. The arrays are spliced in from pre-serialized pools, because encoding
millions of numbers per line with ``json.dumps`` would make a 1 GB step take minutes."""

# Seeded `random` is the point here.
# ruff: noqa: S311

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any

from .prompts import make_prompt
from .samples import make_reasoning, make_sample
from .tokens import IM_END, IM_END_ID, VOCAB, draw_log_probs


class _Pool:
    """Pre-serialized JSON array items; any run of them is one substring, copied, not encoded."""

    def __init__(self, items: Sequence[str]) -> None:
        self.text = ", ".join(items)
        self.offsets = [0, *accumulate(len(s) + 2 for s in items)]

    def run(self, start: int, n: int) -> str:
        return self.text[self.offsets[start] : self.offsets[start + n] - 2] if n else ""


_BIG_POOL, _BIG_MIN, _BIG_MAX = 1 << 16, 2_000, 20_480
_ARRAYS = '"response_token_ids": [], "response_rollout_log_probs": []'


def write_big_step(path: Path, target_bytes: int, *, seed: int = 0, step: int = 0) -> int:
    """Stream samples of 2k-20k tokens (lines ~60-600 KB) until ``target_bytes``; return count."""
    rng = random.Random(f"{seed}:big:{step}")
    ids = _Pool([str(i) for i in rng.choices(VOCAB, k=_BIG_POOL)])
    lps = _Pool([repr(x) for x in draw_log_probs(rng, _BIG_POOL)])
    prose = make_reasoning(rng, False, 6 * _BIG_MAX // 40)  # ~40 chars a sentence, ~4 a token
    path.parent.mkdir(parents=True, exist_ok=True)
    written = count = 0
    prompt = make_prompt(rng)
    with path.open("wb") as f:
        while written < target_bytes:
            if count and count % 8 == 0:
                prompt = make_prompt(rng)
            n = int(math.exp(rng.uniform(math.log(_BIG_MIN), math.log(_BIG_MAX))))
            status = "truncated" if rng.random() < 0.1 else "completed"
            n = _BIG_MAX if status == "truncated" else n
            start = rng.randrange(len(prose) - 4 * n)
            response = "<think>\n" + prose[start : start + 4 * n]
            if status == "completed":
                response += f"\n</think>\n\n$\\boxed{{{prompt.problem.answer}}}${IM_END}"
            rec = make_sample(
                rng,
                step=step,
                sample_index=count,
                group_index=count // 8,
                prompt=prompt,
                status=status,
                response=response,
                token_ids=False,
            )
            rec["response_length"] = rec["response_token_count"] = n
            rec["total_length"] = rec["total_token_count"] = n + prompt.tokens
            # Empty arrays in writer order (just before label), then splice the pooled runs in.
            ordered: dict[str, Any] = {}
            for key, value in rec.items():
                if key == "label":
                    ordered["response_token_ids"] = ordered["response_rollout_log_probs"] = []
                ordered[key] = value
            head = json.dumps(ordered, ensure_ascii=False)
            a, b = rng.randrange(_BIG_POOL - n), rng.randrange(_BIG_POOL - n)
            token_run = (
                ids.run(a, n - 1) + f", {IM_END_ID}" if status == "completed" else ids.run(a, n)
            )
            arrays = f'"response_token_ids": [{token_run}], '
            arrays += f'"response_rollout_log_probs": [{lps.run(b, n)}]'
            written += f.write((head.replace(_ARRAYS, arrays, 1) + "\n").encode("utf-8"))
            count += 1
    return count
