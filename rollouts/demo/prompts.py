"""Problems and the prompts built from them: question texts per dataset, chat templates,
agent prompts with tool schemas and past calls, vision prompts with image placeholders."""

# CJK strings use fullwidth punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import json
import random
from fractions import Fraction
from typing import Any, NamedTuple

from .tokens import IM_END, count_tokens

IMAGE_TOKENS = 256  # a 448x448 image: 32x32 patches of 14 px, merged 2x2
STYLES = ("plain", "think", "tools", "vision", "messages", "zh")
EVAL_DATASETS = ("gsm8k", "math500", "中文数学")

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


def make_problem(rng: random.Random, name: str) -> Problem:
    """A problem of kind ``name`` (see ``PROBLEMS_BY_DATASET``) with freshly drawn numbers."""
    a, b, c = rng.randint(3, 25), rng.randint(2, 15), rng.randint(1, 5)
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


PROBLEMS_BY_DATASET = {
    "gsm8k": ("clips", "change"),
    "math500": ("fraction", "divisors", "sqrt"),
    "中文数学": ("apples", "rectangle", "pages"),
}


def make_zero_problem(rng: random.Random) -> Problem:
    """A problem whose label is the int ``0``, not a string: a falsy label the viewer must show."""
    a, b = rng.randint(2, 9), rng.randint(2, 9)
    q = f"Evaluate $({a} - {a}) \\cdot {b} + \\frac{{0}}{{{b}}}$."
    return Problem(q, "0", f"({a} - {a}) * {b}", 0)


UNLABELED_PROBLEM = Problem("Prove that there are infinitely many prime numbers.", "", "", "")


def _turn(role: str, content: str) -> str:
    return f"<|im_start|>{role}\n{content}{IM_END}\n"


def make_prompt(
    rng: random.Random, style: str | None = None, *, problem: Problem | None = None
) -> Prompt:
    """One GRPO prompt; every sample of a group is generated from the same ``Prompt``."""
    style = style or rng.choice(STYLES)
    if problem is None:
        names = PROBLEMS_BY_DATASET["中文数学" if style == "zh" else rng.choice(EVAL_DATASETS[:2])]
        problem = make_problem(rng, rng.choice(names))
    q, turns, images = problem.question, 1, 0
    # Holds the images' summary, then (below) the record fields that wrap it.
    mm: dict[str, Any] | None = None
    prompt: str | list[dict[str, str]]
    if style == "messages":
        prompt = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": q}]
        tokens = sum(count_tokens(m["content"]) + 5 for m in prompt) + 3
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
        tokens = count_tokens(prompt)
    if mm is not None:
        mm = {"multimodal_inputs": mm, "multimodal_train_inputs": {
            "pixel_values": f"Tensor(shape=[{1024 * images}, 1176], dtype=torch.bfloat16)",
            "image_grid_thw": f"Tensor(shape=[{images}, 3], dtype=torch.int64)"}}  # fmt: skip
    return Prompt(style, prompt, problem, tokens, turns, images, mm)
