"""Deterministic generator of realistic Relax rollout step files (standard library only).

Used by the README quick start, by tests and by benchmarks. Output depends only on the
arguments: every step draws from its own ``random.Random`` seeded with a string, so the same
arguments give the same bytes on every machine and every run.

Fixed placements, in every curve, so that tests and docs can point at them (``write_demo``):

- the single NaN reward: train step ``min(1, train_steps - 1)``,
  sample_index ``min(3, samples_per_step - 1)``;
- object rewards ``{"acc": ..., "format": ...}``: every train sample of step
  ``train_steps // 2`` (step 6 by default), except failed samples, whose reward is null;
- an empty response (status ``aborted``): train step 0, sample_index 0;
- label ``0`` (an int) on group 1 and label ``""`` on group 2 of train step 0;
- a ``failed`` sample: the last sample of the last train step (others occur at random).

The accuracy follows a ``curve`` (``CURVES``): a steady rise (the default), a plateau, or a
collapse with a rising truncation rate. ``write_demo_runs`` writes one run of each, with
``steady`` draws, so that the convergence reading of ``rollouts.store.trends`` names each one.
"""

# CJK strings use fullwidth punctuation on purpose, and seeded `random` is the point here.
# ruff: noqa: RUF001, S311

from __future__ import annotations

import argparse
import json
import math
import random
import re
from array import array
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from itertools import accumulate, pairwise
from pathlib import Path
from typing import Any, NamedTuple

MAX_RESPONSE_LENGTH = 4096
IMAGE_TOKENS = 256  # a 448x448 image: 32x32 patches of 14 px, merged 2x2
STYLES = ("plain", "think", "tools", "vision", "messages", "zh")
EVAL_DATASETS = ("gsm8k", "math500", "中文数学")
NON_STEP_FILES = ("notes.jsonl", "20.pending.json")

_STATUSES, _STATUS_WEIGHTS = ("completed", "truncated", "aborted", "failed"), (91, 6, 2.5, 0.5)
_TRUNCATED = _STATUS_WEIGHTS[1]  # per cent, unless a curve says otherwise
IM_END, ENDOFTEXT = "<|im_end|>", "<|endoftext|>"
# Qwen tokenizer ids, so token-id views show the special tokens where a user expects them.
_ENDOFTEXT_ID, _IM_END_ID, _THINK_ID = 151643, 151645, 151667
_VOCAB = range(_ENDOFTEXT_ID)
_SPECIAL = re.compile(r"<\|[a-z_]+\|>|</?(?:think|tool_call|tool_response|answer)>")

_SYSTEM = (
    "You are a helpful assistant. Please reason step by step, "
    "and put your final answer within \\boxed{}."
)
_SYSTEM_ZH = "你是一个乐于助人的助手。请一步一步推理，并把最终答案写在 \\boxed{} 中。"
_TOOL_SCHEMAS = [
    {"type": "function", "function": {"name": name, "description": desc, "parameters": {
        "type": "object", "properties": {arg: {"type": "string"}}, "required": [arg]}}}
    for name, desc, arg in (("python", "Run Python code, return stdout.", "code"),
                            ("search", "Search the web.", "query"))
]  # fmt: skip
_SYSTEM_TOOLS = (
    f"{_SYSTEM}\n\n# Tools\n\nYou may call one or more functions to assist with the user query."
    "\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    + "\n".join(json.dumps(schema) for schema in _TOOL_SCHEMAS)
    + "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags."
)
_EN_STEPS = (
    "First, let me restate what we need to find.",
    "The quantities given are {a} and {b}, so I start by combining them.",
    "Half of {a} is $\\frac{{{a}}}{{2}}$, which will be useful later.",
    "So far we have ${a} + {b} = {s}$.",
    "Wait, that does not look right. Let me recompute more carefully.",
    "Let me double-check by working backwards from the candidate answer.",
    "Alternatively, write $x = {a} \\cdot {b}$ and simplify step by step.",
    "Hmm, I should make sure I am not double counting anything here.",
)
_ZH_STEPS = (
    "首先，我们来理解题目的意思。",
    "设未知数为 $x$，根据题意列出方程。",
    "计算 ${a} + {b} = {s}$，这一步没有问题。",
    "等一下，我再检查一遍 🤔",
    "所以中间结果是 $\\frac{{{a}}}{{{b}}}$。",
    "嗯，这样算下来应该是对的 ✅",
)


class Problem(NamedTuple):
    question: str
    answer: str  # what a correct response puts in \boxed{}
    expr: str  # what the python tool is asked to run in agent prompts
    label: Any  # the reference answer as the dataset stores it


class Prompt(NamedTuple):
    style: str
    prompt: str | list[dict[str, str]]
    problem: Problem
    tokens: int
    agent_turns: int
    images: int
    multimodal: dict[str, Any] | None


def _p(question: str, answer: object, expr: str) -> Problem:
    return Problem(question, str(answer), expr, str(answer))


def _latex(f: Fraction) -> str:
    return str(f.numerator) if f.denominator == 1 else f"\\frac{{{f.numerator}}}{{{f.denominator}}}"


def _problem(r: random.Random, name: str) -> Problem:
    a, b, c = r.randint(3, 25), r.randint(2, 15), r.randint(1, 5)
    match name:
        case "clips":
            q = (f"Natalia sold clips to {2 * a} of her friends in April, and then she sold half "
                 "as many clips in May. How many clips did Natalia sell altogether?")  # fmt: skip
            return _p(q, 3 * a, f"{2 * a} + {a}")
        case "change":
            q = f"A pen costs ${c + 1}. Maya buys {b} pens and pays with a $100 bill. Her change?"
            return _p(q, 100 - (c + 1) * b, f"100 - {c + 1} * {b}")
        case "fraction":
            d = 2 * (c + 1)
            x, y = a % d + 1, b % d + 1
            q = f"Compute $\\frac{{{x}}}{{{d}}} + \\frac{{{y}}}{{{d}}}$ as a common fraction."
            return _p(q, _latex(Fraction(x + y, d)), f"Fraction({x + y}, {d})")
        case "divisors":
            n = a * b
            q = f"What is the sum of all positive divisors of ${n}$?"
            return _p(q, sum(d for d in range(1, n + 1) if n % d == 0), f"sum(divisors({n}))")
        case "sqrt":
            return _p(f"Find $x$ such that $\\sqrt{{x + {b}}} = {a}$.", a * a - b, f"{a}**2 - {b}")
        case "apples":
            q = f"小明有{a}个苹果，又买了{b}个，然后吃掉了{c}个。他现在还有多少个苹果？"
            return _p(q, a + b - c, f"{a} + {b} - {c}")
        case "rectangle":
            q = f"一个长方形的长是{a}厘米，宽是{b}厘米，它的面积是多少平方厘米？"
            return _p(q, a * b, f"{a} * {b}")
        case _:
            q = f"一本书有{a * b}页，小红每天读{a}页，需要多少天读完？"
            return _p(q, b, f"{a * b} // {a}")


_BY_DATASET = {
    "gsm8k": ("clips", "change"),
    "math500": ("fraction", "divisors", "sqrt"),
    "中文数学": ("apples", "rectangle", "pages"),
}


def _zero_problem(r: random.Random) -> Problem:
    a, b = r.randint(2, 9), r.randint(2, 9)
    q = f"Evaluate $({a} - {a}) \\cdot {b} + \\frac{{0}}{{{b}}}$."
    return Problem(q, "0", f"({a} - {a}) * {b}", 0)


_UNLABELED = Problem("Prove that there are infinitely many prime numbers.", "", "", "")


def _count_tokens(text: str) -> int:
    """A tokenizer stand-in: special markers are one token, ASCII ~4 chars, CJK one char."""
    specials = len(_SPECIAL.findall(text))
    rest = _SPECIAL.sub("", text)
    ascii_chars = len(rest.encode("ascii", "ignore"))
    return specials + math.ceil(ascii_chars / 4) + len(rest) - ascii_chars


def _turn(role: str, content: str) -> str:
    return f"<|im_start|>{role}\n{content}{IM_END}\n"


def make_prompt(
    rng: random.Random, style: str | None = None, *, problem: Problem | None = None
) -> Prompt:
    """One GRPO prompt; every sample of a group is generated from the same ``Prompt``."""
    style = style or rng.choice(STYLES)
    if problem is None:
        names = _BY_DATASET["中文数学" if style == "zh" else rng.choice(EVAL_DATASETS[:2])]
        problem = _problem(rng, rng.choice(names))
    q, turns, images = problem.question, 1, 0
    # Holds the images' summary, then (below) the record fields that wrap it.
    mm: dict[str, Any] | None = None
    prompt: str | list[dict[str, str]]
    if style == "messages":
        prompt = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": q}]
        tokens = sum(_count_tokens(m["content"]) + 5 for m in prompt) + 3
    else:
        system, user, history, opening = _SYSTEM, q, "", ""
        if style == "zh":
            system = _SYSTEM_ZH
        elif style == "think":
            opening = "<think>\n"
        elif style == "vision":
            images = 1 + (rng.random() < 0.25)
            pads = f"<|vision_start|>{'<|image_pad|>' * IMAGE_TOKENS}<|vision_end|>"
            user = pads * images + "Based on the figure, " + q[0].lower() + q[1:]
            pil = "<PIL.Image.Image image mode=RGB size=448x448 at 0x7F{:010X}>"
            mm = {"images": [pil.format(rng.getrandbits(40)) for _ in range(images)]}
        elif style == "tools":
            system = _SYSTEM_TOOLS
            calls: list[tuple[str, dict[str, str], str]] = []
            if not problem.expr or rng.random() < 0.4:
                calls.append(("search", {"query": q[:60]}, "Found 3 results. 1. Wikipedia: ..."))
            if problem.expr:
                calls.append(("python", {"code": f"print({problem.expr})"}, problem.answer))
            for name, args, result in calls:
                call = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
                history += _turn("assistant", f"<tool_call>\n{call}\n</tool_call>")
                history += _turn("tool", f"<tool_response>\n{result}\n</tool_response>")
            turns += len(calls)
        prompt = _turn("system", system) + _turn("user", user) + history
        prompt += f"<|im_start|>assistant\n{opening}"
        tokens = _count_tokens(prompt)
    if mm is not None:
        mm = {"multimodal_inputs": mm, "multimodal_train_inputs": {
            "pixel_values": f"Tensor(shape=[{1024 * images}, 1176], dtype=torch.bfloat16)",
            "image_grid_thw": f"Tensor(shape=[{images}, 3], dtype=torch.int64)"}}  # fmt: skip
    return Prompt(style, prompt, problem, tokens, turns, images, mm)


def _reasoning(rng: random.Random, zh: bool, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        out.append(rng.choice(_ZH_STEPS if zh else _EN_STEPS).format(a=a, b=b, s=a + b))
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
            chunk = _reasoning(rng, zh, 8) + "\n"
            text, tokens = text + chunk, tokens + _count_tokens(chunk)
        return text[: len(text) - len(text) // 20].rstrip(" .。\n")
    if status != "completed":
        if rng.random() < 0.5:
            return ""
        text = opening + _reasoning(rng, zh, 1)
        return text[: rng.randint(1, len(text))]
    body = _reasoning(rng, zh, rng.randint(3, 25))
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


def _token_ids(rng: random.Random, n: int, response: str) -> list[int]:
    ids = rng.choices(_VOCAB, k=n)
    if ids and response.startswith("<think>"):
        ids[0] = _THINK_ID
    if ids and response.endswith((IM_END, ENDOFTEXT)):
        ids[-1] = _IM_END_ID if response.endswith(IM_END) else _ENDOFTEXT_ID
    return ids


def _log_probs(rng: random.Random, n: int) -> list[float]:
    # Through float32 like the trainer's tensors, so the values print with their long reprs.
    return array("f", [-rng.expovariate(5.0) for _ in range(n)]).tolist()


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
        status = rng.choices(_STATUSES, _STATUS_WEIGHTS)[0]
    answer, correct, final = prompt.problem.answer, False, None
    if status == "completed":
        correct = bool(answer) and rng.random() < p_correct
        final = answer if correct else _wrong_answer(rng, answer)
    if response is None:
        response = _response(rng, prompt, status, final, max_response_length)
    n = max_response_length if status == "truncated" else _count_tokens(response)
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
        rec["response_token_ids"] = _token_ids(rng, n, response)
        if log_probs is None:
            log_probs = rng.random() < 0.3
        if log_probs:
            rec["response_rollout_log_probs"] = _log_probs(rng, n)
    rec["label"] = prompt.problem.label
    if prompt.multimodal:
        rec.update(prompt.multimodal)
    if kind == "eval":
        rec["dataset"] = dataset or EVAL_DATASETS[0]
    return rec


def write_step(path: Path, records: Iterable[dict[str, Any]]) -> int:
    """Write like the Relax writer: truncate, one ``json.dumps`` line per record, UTF-8."""
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with path.open("wb") as f:
        for record in records:
            line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
            written += f.write(line)
    return written


def _progress(step: int, steps: int) -> float:
    return step / max(1, steps - 1)


def _accuracy(step: int, steps: int) -> float:
    return 0.25 + 0.55 * step / max(1, steps - 1)


def _plateau(step: int, steps: int) -> float:
    # Most of the gain in the first quarter of the run, then flat at 0.6.
    return 0.6 - 0.35 * max(0.0, 1 - 4 * _progress(step, steps)) ** 2


def _collapse(step: int, steps: int) -> float:
    # Up to 0.75 half-way, then back down to where it started.
    return 0.75 - 0.5 * abs(2 * _progress(step, steps) - 1)


def _longer_answers(step: int, steps: int) -> float:
    # In the second half, more and more answers hit the length limit: from 6 % to 70 %.
    return _TRUNCATED + 64 * max(0.0, 2 * _progress(step, steps) - 1)


class Curve(NamedTuple):
    accuracy: Callable[[int, int], float]  # (step, steps) -> P(correct) of a completed answer
    truncated: Callable[[int, int], float] = lambda step, steps: _TRUNCATED  # per cent


CURVES = {
    "rise": Curve(_accuracy),
    "plateau": Curve(_plateau),
    "collapse": Curve(_collapse, _longer_answers),
}
RUNS = {"steady-rise": "rise", "plateau": "plateau", "collapse": "collapse"}  # name -> curve


def _status_weights(curve: Curve, step: int, steps: int) -> tuple[float, ...]:
    truncated = curve.truncated(step, steps)
    return (97 - truncated, truncated, *_STATUS_WEIGHTS[2:])


def _clamp(p: float) -> float:
    return min(1.0, max(0.0, p))


def _wobble(seed: int, step: int, completed: int) -> int:
    """Step-to-step noise of a steady run, in answers: the difference of two draws, which
    cancels over any stretch of steps (unlike white noise), so a flat curve reads as flat."""
    spread = max(1, completed // 30)
    a, b = (random.Random(f"{seed}:wobble:{s}").randint(0, spread) for s in (step, step - 1))
    return a - b


def _train_records(
    seed: int,
    step: int,
    steps: int,
    samples: int,
    group_size: int,
    curve: Curve = CURVES["rise"],
    steady: bool = False,
) -> list[dict[str, Any]]:
    rng = random.Random(f"{seed}:train:{step}")
    n_groups = -(-samples // group_size)
    specials = {min(1, n_groups - 1): _zero_problem(rng), min(2, n_groups - 1): _UNLABELED}
    p, weights = curve.accuracy(step, steps), _status_weights(curve, step, steps)
    fixed = {0: "aborted"} if step == 0 else {}
    if step == steps - 1:
        fixed.setdefault(samples - 1, "failed")
    # Every fourth group is all-solved or all-failed: equal rewards, no GRPO signal.
    saturated = [i // group_size % 4 == 2 for i in range(samples)]
    # Steady draws: a step of 64 independent samples has a mean reward noisy by ~0.1, enough to
    # hide any curve. So statuses come in their shares, and the step's completed answers hold
    # as many correct ones as the curve says; each free answer is correct with the share of
    # correct ones still owed (an urn): exact count, random places, as in a large batch.
    owed, left = 0.0, 0
    if steady:
        bounds = [round(saturated.count(False) * c / sum(weights)) for c in accumulate(weights)]
        plan = [s for s, (lo, hi) in zip(_STATUSES, pairwise([0, *bounds]), strict=True)
                for _ in range(hi - lo)]  # fmt: skip
        rng.shuffle(plan)
        statuses = [fixed.get(i) or ("completed" if sat else plan.pop())
                    for i, sat in enumerate(saturated)]  # fmt: skip
        completed = [i for i, s in enumerate(statuses) if s == "completed"]
        sat_groups = range(2, n_groups, 4)  # as many solved as the curve says, give or take one
        solved = set(rng.sample(sat_groups, int(p * len(sat_groups) + rng.random())))
        owed = round(p * len(completed)) + _wobble(seed, step, len(completed))
        owed -= sum(saturated[i] and i // group_size in solved for i in completed)
        left = sum(not saturated[i] for i in completed)
    records = []
    for g in range(n_groups):
        problem = specials.get(g) if step == 0 else None
        prompt = make_prompt(rng, STYLES[(g + step) % len(STYLES)], problem=problem)
        if g % 4 == 2:
            group_p = float(g in solved) if steady else float(rng.random() < p)
        else:
            group_p = _clamp(p + rng.uniform(-0.2, 0.2))
        for i in range(g * group_size, min(samples, (g + 1) * group_size)):
            status = (
                statuses[i] if steady else fixed.get(i) or ("completed" if saturated[i] else None)
            )
            if status is None:  # the draw make_sample would make, at the same place
                status = rng.choices(_STATUSES, weights)[0]
            urn = steady and status == "completed" and not saturated[i]
            record = make_sample(
                rng, step=step, sample_index=i, group_index=g, prompt=prompt,
                status=status, response="" if step == i == 0 else None,
                p_correct=_clamp(owed / left) if urn else group_p,
                multi_reward=step == steps // 2)  # fmt: skip
            if urn:
                reward, left = record["reward"], left - 1
                owed -= reward["acc"] if isinstance(reward, dict) else reward
            records.append(record)
    if step == min(1, steps - 1):
        records[min(3, samples - 1)]["reward"] = math.nan
    return records


def _eval_records(
    seed: int, step: int, steps: int, samples: int, curve: Curve = CURVES["rise"]
) -> list[dict[str, Any]]:
    rng = random.Random(f"{seed}:eval:{step}")
    weights = _status_weights(curve, step, steps)
    records = []
    # gsm8k and 中文数学 have one sample per prompt (group_index null); math500 has 4 per prompt.
    for dataset, per_prompt, shift in zip(EVAL_DATASETS, (0, 4, 0), (0.15, -0.1, 0.0), strict=True):
        p = _clamp(curve.accuracy(step, steps) + shift)
        prompt = None
        for i in range(max(1, samples // 4)):
            if prompt is None or not per_prompt or i % per_prompt == 0:
                style = "zh" if dataset == "中文数学" else rng.choice(("plain", "think"))
                prompt = make_prompt(
                    rng, style, problem=_problem(rng, rng.choice(_BY_DATASET[dataset]))
                )
            group = i // per_prompt if per_prompt else None
            records.append(make_sample(
                rng, step=step, sample_index=i, group_index=group, kind="eval", dataset=dataset,
                prompt=prompt, p_correct=p, status=rng.choices(_STATUSES, weights)[0],
                log_probs=False))  # fmt: skip
    return records


def write_demo(
    root: Path,
    *,
    train_steps: int = 12,
    eval_every: int = 4,
    samples_per_step: int = 64,
    group_size: int = 8,
    seed: int = 0,
    curve: str = "rise",
    steady: bool = False,
) -> Path:
    """Write a demo run under ``root/rollout_result`` and return that directory.

    ``curve`` names the accuracy over the run (a key of ``CURVES``). ``steady`` makes each
    train step's mean reward follow it closely, as a large batch would; without it a step of
    64 samples is as noisy as a real one. Rewrites (never deletes) the files it owns, so
    repeating a call gives identical bytes.
    """
    if min(train_steps, eval_every, samples_per_step, group_size) < 1:
        raise ValueError("train_steps, eval_every, samples_per_step and group_size must be >= 1")
    if curve not in CURVES:
        raise ValueError(f"curve must be one of {', '.join(CURVES)}, not {curve!r}")
    shape, out = CURVES[curve], Path(root) / "rollout_result"
    for step in range(train_steps):
        records = _train_records(
            seed, step, train_steps, samples_per_step, group_size, shape, steady
        )
        write_step(out / "train" / f"{step}.jsonl", records)
    for step in range(0, train_steps, eval_every):
        records = _eval_records(seed, step, train_steps, samples_per_step, shape)
        write_step(out / "eval" / f"{step}.jsonl", records)
    # Beside the steps, as in real runs; the viewer must not list them as steps.
    notes: list[dict[str, Any]] = [
        {"rollout_id": 999, "note": "scratch notes, not a step"},
        {"note": "resumed at 0"},
    ]
    write_step(out / "train" / NON_STEP_FILES[0], notes)
    write_step(out / "train" / NON_STEP_FILES[1], [{"rollout_id": 20, "status": "pending"}])
    return out


def write_demo_runs(
    root: Path,
    *,
    train_steps: int = 40,
    eval_every: int = 5,
    samples_per_step: int = 64,
    group_size: int = 8,
    seed: int = 0,
) -> dict[str, Path]:
    """Write one steady run per ``RUNS`` entry under ``root/<name>``; return name -> save dir."""
    runs = {name: Path(root) / name for name in RUNS}
    for name, save in runs.items():
        write_demo(
            save, train_steps=train_steps, eval_every=eval_every,
            samples_per_step=samples_per_step, group_size=group_size, seed=seed,
            curve=RUNS[name], steady=True,
        )  # fmt: skip
    return runs


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
    ids = _Pool([str(i) for i in rng.choices(_VOCAB, k=_BIG_POOL)])
    lps = _Pool([repr(x) for x in _log_probs(rng, _BIG_POOL)])
    prose = _reasoning(rng, False, 6 * _BIG_MAX // 40)  # ~40 chars a sentence, ~4 a token
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
                rng, step=step, sample_index=count, group_index=count // 8, prompt=prompt,
                status=status, response=response, token_ids=False)  # fmt: skip
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
                ids.run(a, n - 1) + f", {_IM_END_ID}" if status == "completed" else ids.run(a, n)
            )
            arrays = f'"response_token_ids": [{token_run}], '
            arrays += f'"response_rollout_log_probs": [{lps.run(b, n)}]'
            written += f.write((head.replace(_ARRAYS, arrays, 1) + "\n").encode("utf-8"))
            count += 1
    return count


def _size(directory: Path) -> str:
    return f"{sum(p.stat().st_size for p in directory.rglob('*') if p.is_file()) / 1e6:.1f} MB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rollouts.demo", description="Write a deterministic demo Relax run."
    )
    parser.add_argument(
        "dest", type=Path, help="save dir (DEST/rollout_result); --runs: their parent"
    )
    parser.add_argument("--steps", type=int, help="train steps (default 12, or 40 with --runs)")
    parser.add_argument("--samples", type=int, default=64, help="samples per step (default 64)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--curve", choices=CURVES, help="accuracy over the run (default rise)")
    parser.add_argument(
        "--steady", action="store_true", help="step means follow the curve, as in a large batch"
    )
    parser.add_argument(
        "--runs", action="store_true", help=f"write {', '.join(RUNS)} runs as DEST/<name>"
    )
    args = parser.parse_args(argv)
    if args.runs and (args.curve or args.steady):
        parser.error("--runs writes one steady run per curve; drop --curve and --steady")
    steps = args.steps if args.steps is not None else 40 if args.runs else 12
    sizes = {"train_steps": steps, "samples_per_step": args.samples, "seed": args.seed}
    try:
        if args.runs:
            for name, save in write_demo_runs(args.dest, **sizes).items():
                print(f"wrote the {name} run to {save} ({_size(save)})")
            return 0
        out = write_demo(args.dest, **sizes, curve=args.curve or "rise", steady=args.steady)
    except ValueError as exc:
        parser.error(str(exc))
    print(f"wrote demo rollouts to {out} ({_size(out)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
