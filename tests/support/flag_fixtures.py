# ruff: noqa: RUF001  (Chinese text, its full-width punctuation on purpose)
"""Labelled steps for the flags: each failure and its near-misses, as realistic responses.

Every sample is a Relax record (prompt, response, reward, label, status, response_length,
group_index, ...) with the flags a careful reader would give it (`expected`). The unit tests
(tests/unit/test_flags.py) judge them one by one; bench/flags_precision.py counts how often the
rules agree with the labels. Built in code (deterministic), written as JSONL by `write_steps`.

A loop is built as `prefix + unit * n` (or `... + end`): its cycle is `len(unit)` characters
repeated `n` times, which the tests state in the reasons they expect (`Sample.loop`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.data import relax_line

PROMPT = (
    "<|im_start|>system\nPlease reason step by step, and put your final answer within "
    "\\boxed{{}}.<|im_end|>\n<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"
)
END = "<|im_end|>"

_TEMPLATES = (
    "First, note that {a} + {b} = {c}.",
    "Multiplying both sides by {a} gives ${d}x = {e}$, so we divide next.",
    "The remainder when {e} is divided by {a} is {r}, which we keep for later.",
    "We check the case $n = {a}$: the expression equals {c} there.",
    "Substituting $x = {b}$ into $x^2 + {a}x$ yields ${f}$.",
    "Hence the sum of the first {a} terms is {g}.",
    "Since {b} is {parity}, the product with {a} is {parity2}.",
    "Let me verify with a smaller instance: for {r} items the count is {h}.",
    "Now the ratio $\\frac{{{a}}}{{{b}}}$ simplifies, because the gcd of {a} and {b} is {k}.",
    "The triangle has sides {a}, {b} and {c}, so by the triangle inequality it exists.",
    "Therefore the number of valid pairs up to {e} is {g}.",
    "Alternatively, counting the complement gives {f} - {c} = {m}.",
)


def derivation(seed: int, sentences: int) -> str:
    """Varied reasoning prose with inline maths: no sentence twice."""
    rng = random.Random(seed)
    out, paragraph = [], []
    for i in range(sentences):
        a, b = rng.randint(2, 97), rng.randint(2, 97)
        values = {
            "a": a,
            "b": b,
            "c": a + b,
            "d": a * 3 + i,
            "e": a * b + i,
            "f": b * b + a * b,
            "g": a * (a + 1) // 2 + i,
            "h": rng.randint(10, 999),
            "k": _gcd(a, b),
            "m": b * b + a * b - a - b,
            "r": (a * b + i) % a,
            "parity": "even" if b % 2 == 0 else "odd",
            "parity2": "even" if a * b % 2 == 0 else "odd",
        }
        paragraph.append(_TEMPLATES[(i * 5 + seed) % len(_TEMPLATES)].format(**values))
        if len(paragraph) == 4:
            out.append(" ".join(paragraph))
            paragraph = []
    if paragraph:
        out.append(" ".join(paragraph))
    return "\n\n".join(out)


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


def healthy(seed: int, answer: str = "12", sentences: int = 12, end: str = END) -> str:
    """A Qwen-style response: reasoning in <think>, a short summary, a final \\boxed{}."""
    return (
        f"<think>\n{derivation(seed, sentences)}\n</think>\n\n"
        f"Putting it together, the answer is $\\boxed{{{answer}}}$.{end}"
    )


@dataclass
class Sample:
    """One record and the flags it should get; `loop` (cycle chars, repeats) as built."""

    name: str
    record: dict[str, Any]
    expected: frozenset[str]
    near_miss: bool = False  # a sample built to look like a failure that is not one
    loop: tuple[int, int] | None = None
    # What the rules give instead of `expected`, where they cannot tell (docs/performance.md,
    # "Precision on our fixtures", says why); None: the rules agree with the label.
    known: frozenset[str] | None = None


@dataclass
class Step:
    name: str
    samples: list[Sample] = field(default_factory=list)

    def add(
        self,
        name: str,
        response: Any,
        expected: tuple[str, ...] = (),
        *,
        near_miss: bool = False,
        loop: tuple[int, int] | None = None,
        known: tuple[str, ...] | None = None,
        **fields: Any,
    ) -> Sample:
        i = len(self.samples)
        record: dict[str, Any] = {
            "rollout_id": 0,
            "sample_index": i,
            "prompt": PROMPT.format(question=f"{self.name}: question {i // 4}"),
            "response": response,
            "reward": 1.0,
            "label": "12",
            "status": "completed",
            "response_length": _tokens(response),
            "total_length": 80 + _tokens(response),
            "group_index": i // 4,
        }
        record.update(fields)
        if "label" in fields and fields["label"] is _NO_LABEL:
            del record["label"]
        sample = Sample(
            name,
            record,
            frozenset(expected),
            near_miss,
            loop,
            None if known is None else frozenset(known),
        )
        self.samples.append(sample)
        return sample

    def filler(self, count: int, first_seed: int = 100, **fields: Any) -> None:
        """Healthy samples that set the step's norms (an answer, ~300 tokens)."""
        for j in range(count):
            self.add(f"healthy {j}", healthy(first_seed + j, sentences=10 + j % 4), **fields)


_NO_LABEL = object()


def _tokens(response: Any) -> int:
    """About one token per 4 characters (a stand-in for the tokenizer's count)."""
    return max(1, len(response) // 4) if isinstance(response, str) else 0


# -- the steps ------------------------------------------------------------------------------
LOOP_SENTENCE = "So the answer should be 12, but let me check the parity argument again. "
LOOP_PHRASE = "Wait, "
LOOP_PARAGRAPH = (
    "Let me reconsider the problem from the start. We have two pumps that fill the tank "
    "at different rates, and the first one alone takes 6 hours. If both work together the "
    "time drops, since their rates add up. So the combined rate is 1/6 + 1/4 = 5/12 of the "
    "tank per hour, which means the tank is full after 12/5 hours.\n\n"
)
REPEATED_MIDDLE = (
    "Let me double-check the arithmetic once more. ",
    "The sum of the digits is still 21, so that part holds. ",
    "Hmm, I keep getting the same value for the remainder. ",
)
CASES = "\n".join(
    f"Case {k}: if the first die shows {k}, the second must show {12 - k - 2} or less, which "
    f"gives {min(6, 10 - k)} outcomes."
    for k in range(1, 7)
)


def _table(rows: int, seed: int) -> str:
    rng = random.Random(seed)
    lines = ["| n | n^2 | n^3 | n mod 7 |", "| --- | --- | --- | --- |"]
    for _ in range(rows):
        n = rng.randint(2, 999)
        lines.append(f"| {n} | {n * n} | {n**3} | {n % 7} |")
    return "\n".join(lines)


def repeats_step() -> Step:
    step = Step("repeats")
    step.filler(6)
    prefix = derivation(1, 6) + "\n\n"
    step.add(
        "ends in a sentence repeated 40 times",
        "<think>\n" + prefix + LOOP_SENTENCE * 40,
        ("repeats", "no_answer"),
        loop=(len(LOOP_SENTENCE), 40),
        reward=0.0,
    )
    step.add(
        "ends in 'Wait, ' repeated 150 times, cut",
        "<think>\n" + derivation(2, 8) + " " + LOOP_PHRASE * 150,
        ("repeats", "cut"),
        loop=(len(LOOP_PHRASE), 150),
        reward=0.0,
        status="truncated",
    )
    step.add(
        "ends in a paragraph repeated 6 times, then the end token",
        "<think>\n" + derivation(3, 4) + "\n\n" + LOOP_PARAGRAPH * 6 + END,
        ("repeats", "no_answer"),
        loop=(len(LOOP_PARAGRAPH), 6),
        reward=0.0,
    )
    middle = "".join(
        derivation(40 + k, 1) + " " + "".join(REPEATED_MIDDLE) for k in range(10)
    ).replace("\n\n", " ")
    step.add(
        "mostly sentences repeated in the middle, then an answer",
        f"<think>\n{middle}\n</think>\n\nThe answer is $\\boxed{{12}}$.{END}",
        ("repeats",),
    )
    early = " ".join("".join(REPEATED_MIDDLE) for _ in range(150))
    step.add(
        "repeated sentences dominate, all of them before the last 8 kB (known miss)",
        f"<think>\n{early}\n\n{derivation(44, 200)}\n</think>\n\nThe answer is "
        f"$\\boxed{{12}}$.{END}",
        ("repeats",),
        known=(),
        response_length=500,
    )
    step.add(
        "a long varied derivation (4 kB)",
        healthy(7, sentences=55),
        near_miss=True,
    )
    step.add(
        "markdown tables with the same structure",
        "<think>\nLet me tabulate the values.\n\n"
        + "\n\nAnd the next block:\n\n".join(_table(8, s) for s in range(5))
        + "\n</think>\n\nOnly one row satisfies all conditions, so the answer is "
        f"$\\boxed{{12}}$.{END}",
        near_miss=True,
    )
    step.add(
        "a counting loop: one sentence, its number changing (known miss)",
        "<think>\n"
        + derivation(4, 4)
        + "\n\n"
        + " ".join(
            f"Let me try n = {k}, which does not work for {k} either." for k in range(1, 90)
        ),
        ("repeats", "no_answer"),
        known=("no_answer",),
        reward=0.0,
    )
    checks = "\n".join(
        f"- Candidate {c}: {c} + {20 - c} = 20 and {c} x {20 - c} = {c * (20 - c)}. "
        "This satisfies both conditions."
        if c * (20 - c) == 96
        else f"- Candidate {c}: the product is {c * (20 - c)}, not 96. This fails the test."
        for c in range(2, 19)
    )
    step.add(
        "a verification that repeats a short verdict",
        f"<think>\nLet me check every candidate.\n\n{checks}\n</think>\n\nThe larger "
        f"number is $\\boxed{{12}}$.{END}",
        near_miss=True,
    )
    step.add(
        "a list of cases with similar wording",
        f"<think>\nWe split on the first die.\n\n{CASES}\n\nAdding up: 5 + 5 + 5 + 5 + 5 + 4 "
        f"would double count, so I recount carefully.\n</think>\n\nThere are $\\boxed{{12}}$ "
        f"favourable outcomes.{END}",
        near_miss=True,
    )
    return step


ENGLISH_THEN_CHINESE = (
    "We need the number of integers below 100 divisible by 3 or 5. By inclusion and "
    "exclusion, there are 33 multiples of 3 and 19 multiples of 5, and 6 multiples of 15. "
)
CHINESE_TAIL = (
    "所以我们把这两个集合合并起来，再减去重复计算的部分。"
    "这样得到的结果就是满足条件的整数个数，我们再检查一遍边界情况。"
)
CHINESE_REASONING = (
    "我们先考虑题目给出的条件。设两个数的和为二十，积为九十六。"
    "根据韦达定理，这两个数是某个二次方程的两个根。"
    "我们解这个方程，得到两个根分别是八和十二。"
    "再检查一下：八加十二等于二十，八乘十二等于九十六，条件都满足。"
)
ENGLISH_TAIL = (
    "Now I will continue in English because it is easier to verify the remaining steps. "
    "The larger root is the one we want, and it satisfies both equations given above. "
)
KOREAN_TAIL = (
    "이제 두 근을 다시 확인해 보겠습니다. 여덟과 열둘을 더하면 스물이고, 곱하면 아흔여섯입니다. "
    "따라서 더 큰 수는 열둘입니다. "
)
CODE_CHINESE = (
    "```python\nimport numpy as np\n\n# 计算所有满足条件的整数\nvalues = np.arange(1, 100)\n"
    "# 统计能被三或五整除的个数\ncount = ((values % 3 == 0) | (values % 5 == 0)).sum()\n"
    "print(count)  # 输出结果\n```"
)
CHINESE_WITH_TERMS = (
    "我们用 Python 和 numpy 来验证这个结果。设 $x+y=20$，$xy=96$，"
    "那么 $x$ 和 $y$ 是方程 $t^2-20t+96=0$ 的两个根。"
    "解得 $t=8$ 或 $t=12$，所以较大的数是十二。"
    "为了确认，我们在 numpy 里枚举所有整数对，结果一致。"
)


def mixed_script_step() -> Step:
    step = Step("mixed_script")
    step.filler(6)
    step.add(
        "English reasoning that switches to Chinese prose",
        f"<think>\n{derivation(11, 6)}\n\n{ENGLISH_THEN_CHINESE}{CHINESE_TAIL}\n</think>\n\n"
        f"The answer is $\\boxed{{12}}$.{END}",
        ("mixed_script",),
    )
    step.add(
        "Chinese reasoning that switches to English prose",
        f"<think>\n{CHINESE_REASONING}\n\n{ENGLISH_TAIL}\n</think>\n\n"
        f"所以答案是 $\\boxed{{12}}$。{END}",
        ("mixed_script",),
    )
    step.add(
        "an English term given in Chinese once",
        f"<think>\nThis is the Chinese remainder theorem (中国剩余定理) in disguise.\n\n"
        f"{derivation(14, 8)}\n</think>\n\nThe answer is $\\boxed{{12}}$.{END}",
        near_miss=True,
    )
    step.add(
        "Chinese reasoning that switches to Korean",
        f"<think>\n{CHINESE_REASONING}\n\n{KOREAN_TAIL}\n</think>\n\n"
        f"所以答案是 $\\boxed{{12}}$。{END}",
        ("mixed_script",),
    )
    step.add(
        "a code block with Chinese comments",
        f"<think>\n{derivation(12, 6)}\n\nLet me check it with code:\n\n{CODE_CHINESE}\n\n"
        f"The code agrees.\n</think>\n\nThe answer is $\\boxed{{12}}$.{END}",
        near_miss=True,
    )
    step.add(
        "the prompt quoted back in Chinese (quotes and a block quote)",
        "<think>\nThe problem says “两个数的和是二十，积是九十六，求较大的数。” "
        "so I translate it first.\n\n> 两个数的和是二十，积是九十六，求较大的数。\n\n"
        f"{derivation(13, 6)}\n</think>\n\nThe answer is $\\boxed{{12}}$.{END}",
        near_miss=True,
    )
    step.add(
        "Chinese reasoning that restates the English problem unquoted (known false flag)",
        "<think>\n题目是：Two numbers add up to twenty and multiply to ninety-six, and we "
        "are asked for the larger one, so we set up the equations first.\n\n"
        f"{CHINESE_REASONING}\n</think>\n\n所以答案是 $\\boxed{{12}}$。{END}",
        near_miss=True,
        known=("mixed_script",),
    )
    step.add(
        "Chinese with formulas and a few English terms",
        f"<think>\n{CHINESE_REASONING}\n\n{CHINESE_WITH_TERMS}\n</think>\n\n"
        f"所以答案是 $\\boxed{{12}}$。{END}",
        near_miss=True,
    )
    return step


def no_answer_step() -> Step:
    step = Step("no_answer")
    step.filler(6)
    step.add(
        "no \\boxed{} among samples that have one",
        f"<think>\n{derivation(21, 10)}\n</think>\n\nSo the larger number is twelve.{END}",
        ("no_answer",),
    )
    step.add(
        "the answer inside <answer></answer>",
        f"<think>\n{derivation(22, 10)}\n</think>\n\n<answer>12</answer>{END}",
        near_miss=True,
    )
    step.add(
        "\\boxed{} early, then a long verification",
        f"<think>\n{derivation(23, 4)}\n</think>\n\nThe answer is $\\boxed{{12}}$.\n\n"
        f"**Verification.** {derivation(24, 20)}\n\nEverything checks out.{END}",
        near_miss=True,
    )
    return step


def no_format_step() -> Step:
    """A step where the answer format is not used: nobody is missing anything."""
    step = Step("no_format")
    for j in range(6):
        step.add(
            f"plain answer {j}",
            f"<think>\n{derivation(30 + j, 10)}\n</think>\n\nThe larger number is 12.{END}",
            near_miss=True,
        )
    step.filler(2)
    return step


def reward_step() -> Step:
    step = Step("reward_disagrees")
    step.filler(4)
    step.add("reward 1, wrong answer", healthy(51, "15"), ("reward_disagrees",), reward=1.0)
    step.add("reward 0, right answer", healthy(52, "12"), ("reward_disagrees",), reward=0.0)
    step.add("right answer, reward 0.8 (length penalty)", healthy(53), reward=0.8, near_miss=True)
    step.add(
        "0.5 written as \\frac{1}{2}", healthy(54, "\\frac{1}{2}"), label="0.5", near_miss=True
    )
    step.add("1,000 against 1000", healthy(55, "1,000"), label="1000", near_miss=True)
    step.add("1,000 against the number 1000", healthy(56, "1,000"), label=1000, near_miss=True)
    step.add("no label", healthy(57, "7"), label=_NO_LABEL, near_miss=True)
    step.add(
        "an equal answer the reader cannot see is equal (known false flag)",
        healthy(59, "\\frac{1}{2}\\sqrt{3}"),
        label="\\frac{\\sqrt{3}}{2}",
        near_miss=True,
        known=("reward_disagrees",),
    )
    step.add(
        "the answer as an equation x = 12 (known false flag)",
        healthy(60, "x = 12"),
        near_miss=True,
        known=("reward_disagrees",),
    )
    step.add("wrong answer, reward 0", healthy(58, "13"), reward=0.0, near_miss=True)
    return step


def empty_cut_step() -> Step:
    step = Step("empty_cut")
    step.filler(8)
    step.add("empty string", "", ("empty",), reward=0.0)
    step.add("only whitespace", "  \n\n\t ", ("empty",), reward=0.0)
    step.add("null", None, ("empty",), reward=0.0)
    step.add(
        "cut at the length limit",
        "<think>\n" + derivation(61, 16),
        ("cut",),
        reward=0.0,
        status="truncated",
        response_length=4096,
    )
    return step


def outlier_step() -> Step:
    step = Step("outlier_length")
    for j in range(12):
        step.add(f"healthy {j}", healthy(70 + j), response_length=280 + 4 * j)
    step.add(
        "9,000 tokens among ~300",
        healthy(90, sentences=40),
        ("outlier_length",),
        response_length=9000,
    )
    return step


def wide_step() -> Step:
    """Lengths spread naturally (easy and hard prompts): no outliers."""
    step = Step("wide_spread")
    for j, length in enumerate((150, 210, 300, 420, 600, 850, 1200, 1700, 2400, 3300, 4500)):
        step.add(f"length {length}", healthy(80 + j), response_length=length, near_miss=True)
    return step


def all_steps() -> list[Step]:
    return [
        repeats_step(),
        mixed_script_step(),
        no_answer_step(),
        no_format_step(),
        reward_step(),
        empty_cut_step(),
        outlier_step(),
        wide_step(),
    ]


def write_steps(directory: Path, steps: list[Step] | None = None) -> dict[str, Path]:
    """Each step as `<directory>/<i>.jsonl` (Relax's writer: raw non-ASCII); name -> path."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {}
    for i, step in enumerate(steps or all_steps()):
        path = directory / f"{i}.jsonl"
        path.write_text("".join(relax_line(s.record) for s in step.samples), encoding="utf-8")
        paths[step.name] = path
    return paths
