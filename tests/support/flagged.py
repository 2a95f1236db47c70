"""A step with a known set of flagged samples, one kind of failure at known positions each
(`flagged_step`), and a run whose repeats rate rises step by step (`rising_repeats`): what the
table, statistics, samples API and trends tests of the flags build on. Every expectation is
derived from the positions chosen here, never read from a page."""

from __future__ import annotations

from typing import Any

from .data import sample

ROWS = 40
LABEL = "7"
HEALTHY = "Let me think about it. So the answer is \\boxed{7}."
LOOP = "So the answer is \\boxed{7}. " + "I will check this again now. " * 50
MIXED = (
    "Let me think about it carefully and add the numbers. "
    "我们需要仔细计算这个数字的结果然后得到最后的答案。 So the answer is \\boxed{7}."
)

# flag -> the positions written to have it (and nothing else)
FLAGGED: dict[str, tuple[int, ...]] = {
    "repeats": (8, 20, 33),
    "mixed_script": (39,),
    "no_answer": (14, 27),
    "reward_disagrees": (36,),
    "empty": (3, 17),
    "cut": (5, 11, 23, 25),
    "outlier_length": (30,),
}


def flagged_record(i: int) -> dict[str, Any]:
    """Sample `i` of the flagged step: healthy unless FLAGGED names its position."""
    record = sample(
        i, response=HEALTHY, label=LABEL, reward=1.0, response_length=100 + i % 5, dataset="math"
    )
    if i in FLAGGED["repeats"]:
        record["response"] = LOOP
    elif i in FLAGGED["mixed_script"]:
        record["response"] = MIXED
    elif i in FLAGGED["no_answer"]:
        record.update(response="I do not know.", reward=0.0)
    elif i in FLAGGED["reward_disagrees"]:
        record["response"] = "So it is \\boxed{8}."
    elif i in FLAGGED["empty"]:
        record["response"] = ""
    elif i in FLAGGED["cut"]:
        record["status"] = "truncated"
    elif i in FLAGGED["outlier_length"]:
        record["response_length"] = 5000
    return record


def flagged_step() -> list[dict[str, Any]]:
    return [flagged_record(i) for i in range(ROWS)]


def flagged_rows(flag: str) -> list[int]:
    return sorted(FLAGGED[flag])


def rising_repeats(steps: int = 12, per_step: int = 20) -> list[list[dict[str, Any]]]:
    """`steps` steps of `per_step` samples; step k (0-based) has k looping responses, so the
    repeats rate climbs from 0 to (steps - 1) / per_step, one sample a step."""
    run = []
    for k in range(steps):
        records = [
            sample(i, response=LOOP if i < k else HEALTHY, label=LABEL, reward=1.0)
            for i in range(per_step)
        ]
        run.append(records)
    return run
