"""One sample record: the response text (reasoning, answer markup, how it ends for each
status), its token ids and log-probs, the reward, and the keys in the Relax writer's order."""

# CJK strings use fullwidth punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import random
from typing import Any

from .prompts import EVAL_DATASETS, IMAGE_TOKENS, Prompt, make_prompt
from .tokens import ENDOFTEXT, IM_END, count_tokens, draw_log_probs, draw_token_ids

MAX_RESPONSE_LENGTH = 4096
STATUSES, STATUS_WEIGHTS = ("completed", "truncated", "aborted", "failed"), (91, 6, 2.5, 0.5)

# Every sentence (and every part of one a sentence end splits off) carries its own numbers, so a
# long response does not say the same sentence three times: that is the `repeats` flag's sign of
# a degenerate sample, which healthy demo samples must not show. Each template is as long, in
# ASCII and in other characters, as the one it replaced for every draw: {p}, {q} and {r} are
# three digits ({P} and {Q} in Chinese digits), so responses keep their token counts and every
# later draw of a step (token ids, statuses, rewards) stays what it was. As many templates as
# the draws (`rng.choice`) have always been made over: eight English, six Chinese.
_EN_STEPS = (
    "First, we restate what {p} and {q} give us.",
    "The quantities given are {a} and {b}, so I start from {r} as a sum.",
    "Half of {a} is $\\frac{{{a}}}{{2}}$, which helps with {q} later.",
    "So far we have ${a} + {b} = {s}$.",
    "Wait, {r} doesn't look right, so I recompute {p} with more care.",
    "Let me double-check {r} by working backwards from {p} and from {q}.",
    "Alternatively, write $x = {a} \\cdot {b}$ and simplify it in stages.",
    "Hmm, I should not count {p} or {q} twice while we work out {r}.",
)
_ZH_STEPS = (
    "首先，来理解{P}和{Q}。",
    "设 $x$，由{P}和{Q}列出方程。",
    "计算 ${a} + {b} = {s}$，这一步没有问题。",
    "等下，{P}和{Q} 🤔",
    "所以中间结果是 $\\frac{{{a}}}{{{b}}}$。",
    "嗯，{P}和{Q}是对的 ✅",
)
_ZH_DIGITS = "〇一二三四五六七八九"


def _zh_number(n: int) -> str:
    return "".join(_ZH_DIGITS[int(d)] for d in str(n))


def make_reasoning(rng: random.Random, zh: bool, sentences: int) -> str:
    """Step-by-step reasoning with fresh numbers; Chinese sentences run on without spaces."""
    out = []
    for _ in range(sentences):
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        p, q = a + 100, b + 100
        template = rng.choice(_ZH_STEPS if zh else _EN_STEPS)
        if zh:
            out.append(template.format(a=a, b=b, s=a + b, P=_zh_number(p), Q=_zh_number(q)))
        else:
            out.append(template.format(a=a, b=b, s=a + b, p=p, q=q, r=a + b + 100))
    return ("" if zh else " ").join(out)


def _wrong_answer(rng: random.Random, answer: str) -> str | None:
    if not answer or rng.random() < 0.2:
        return None  # no final answer at all: a format failure rather than a wrong number
    if answer.lstrip("-").isdigit():
        return str(int(answer) + rng.choice((-10, -2, -1, 1, 2, 3)))
    return rng.choice([a for a in ("\\frac{1}{2}", "2", "\\sqrt{2}") if a != answer])


def _response(rng: random.Random, p: Prompt, status: str, final: str | None, max_len: int) -> str:
    zh = p.style == "zh"
    opening = "" if p.style in ("think", "vision", "messages") else "<think>\n"
    if status == "truncated":
        # Keep writing reasoning past the budget, then cut mid-sentence as the engine does.
        text, tokens = opening, 0
        while tokens < max_len:
            chunk = make_reasoning(rng, zh, 8) + "\n"
            text, tokens = text + chunk, tokens + count_tokens(chunk)
        return text[: len(text) - len(text) // 20].rstrip(" .。\n")
    if status != "completed":
        if rng.random() < 0.5:
            return ""
        text = opening + make_reasoning(rng, zh, 1)
        return text[: rng.randint(1, len(text))]
    body = make_reasoning(rng, zh, rng.randint(3, 25))
    end = ENDOFTEXT if rng.random() < 0.1 else IM_END
    if final is None:
        tail = "这道题我没有解出来。" if zh else "This completes the argument."
    elif zh:
        tail = f"所以答案是 $\\boxed{{{final}}}$。🎉"
    elif p.style in ("tools", "vision"):
        tail = f"<answer>{final}</answer>"
    else:
        tail = f"Therefore, the final answer is $\\boxed{{{final}}}$."
    closing = "\n</think>\n\n" if opening or p.style == "think" else "\n\n"
    if p.style == "vision":
        body = "Looking at the image, " + body
    return f"{opening}{body}{closing}{tail}{end}"


def make_sample(
    rng: random.Random,
    *,
    step: int,
    sample_index: int,
    group_index: int | None,
    kind: str = "train",
    dataset: str | None = None,
    token_ids: bool = True,
    prompt: Prompt | None = None,
    p_correct: float = 0.5,
    status: str | None = None,
    response: str | None = None,
    log_probs: bool | None = None,
    multi_reward: bool = False,
    max_response_length: int = MAX_RESPONSE_LENGTH,
) -> dict[str, Any]:
    """One record with keys in writer order. ``log_probs=None`` includes them 30% of the time."""
    if prompt is None:
        prompt = make_prompt(rng)
    if status is None:
        status = rng.choices(STATUSES, STATUS_WEIGHTS)[0]
    answer, correct, final = prompt.problem.answer, False, None
    if status == "completed":
        correct = bool(answer) and rng.random() < p_correct
        final = answer if correct else _wrong_answer(rng, answer)
    if response is None:
        response = _response(rng, prompt, status, final, max_response_length)
    n = max_response_length if status == "truncated" else count_tokens(response)
    reward: Any = 1.0 if correct else 0.0
    if status == "failed":
        reward = None
    elif multi_reward:
        reward = {"acc": reward, "format": 1.0 if final else 0.5 if status == "completed" else 0.0}
    pl = prompt.tokens
    rec: dict[str, Any] = {
        "rollout_id": step, "sample_index": sample_index, "prompt": prompt.prompt,
        "response": response, "reward": reward, "prompt_length": pl, "response_length": n,
        "total_length": pl + n, "prompt_token_count": pl, "response_token_count": n,
        "total_token_count": pl + n,
    }  # fmt: skip
    if prompt.images:
        rec["image_count"] = prompt.images
        rec["image_token_count"] = rec["multimodal_token_count"] = prompt.images * IMAGE_TOKENS
    rec.update(agent_turns=prompt.agent_turns, status=status, group_index=group_index)
    if token_ids:
        rec["response_token_ids"] = draw_token_ids(rng, n, response)
        if log_probs is None:
            log_probs = rng.random() < 0.3
        if log_probs:
            rec["response_rollout_log_probs"] = draw_log_probs(rng, n)
    rec["label"] = prompt.problem.label
    if prompt.multimodal:
        rec.update(prompt.multimodal)
    if kind == "eval":
        rec["dataset"] = dataset or EVAL_DATASETS[0]
    return rec
