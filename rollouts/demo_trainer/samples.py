"""The rollout records of one training step and of one evaluation, from the demo content.

Each step draws from its own `random.Random`, seeded by (seed, timesteps): a resumed run
writes the very records the uninterrupted run would have. The share of correct answers among
the completed ones follows the curve's reward, so the step files agree with the progress lines.
"""

# Seeded `random` is the point here.
# ruff: noqa: S311

from __future__ import annotations

import random
from typing import Any

from rollouts.demo import (
    EVAL_DATASETS,
    PROBLEMS_BY_DATASET,
    STATUS_WEIGHTS,
    STATUSES,
    make_problem,
    make_prompt,
    make_sample,
)

GROUP_SIZE = 4  # GRPO: samples per prompt
MAX_RESPONSE_LENGTH = 2048


def _clamp(p: float) -> float:
    return min(1.0, max(0.0, p))


def train_records(
    seed: int, step: int, timesteps: int, samples: int, reward: float
) -> list[dict[str, Any]]:
    """The `samples` records of train step `step`, which starts at `timesteps`."""
    rng = random.Random(f"{seed}:demo-trainer:train:{timesteps}")
    statuses = rng.choices(STATUSES, STATUS_WEIGHTS, k=samples)
    completed = [i for i, status in enumerate(statuses) if status == "completed"]
    correct = set(rng.sample(completed, round(_clamp(reward) * len(completed))))
    records = []
    for i in range(samples):
        if i % GROUP_SIZE == 0:
            prompt = make_prompt(rng)
        records.append(
            make_sample(
                rng,
                step=step,
                sample_index=i,
                group_index=i // GROUP_SIZE,
                prompt=prompt,
                status=statuses[i],
                p_correct=1.0 if i in correct else 0.0,
                max_response_length=MAX_RESPONSE_LENGTH,
            )
        )
    return records


def eval_records(
    seed: int, step: int, timesteps: int, samples: int, reward: float
) -> list[dict[str, Any]]:
    """An evaluation at train step `step`: a quarter of `samples` from each eval dataset."""
    rng = random.Random(f"{seed}:demo-trainer:eval:{timesteps}")
    records = []
    for dataset, shift in zip(EVAL_DATASETS, (0.1, -0.1, 0.0), strict=True):
        for i in range(max(1, samples // 4)):
            style = "zh" if dataset == "中文数学" else rng.choice(("plain", "think"))
            problem = make_problem(rng, rng.choice(PROBLEMS_BY_DATASET[dataset]))
            records.append(
                make_sample(
                    rng,
                    step=step,
                    sample_index=i,
                    group_index=None,
                    kind="eval",
                    dataset=dataset,
                    prompt=make_prompt(rng, style, problem=problem),
                    p_correct=_clamp(reward + shift),
                    log_probs=False,
                    max_response_length=MAX_RESPONSE_LENGTH,
                )
            )
    return records


def mean_reward(records: list[dict[str, Any]]) -> float:
    """The mean numeric reward of `records` (failed samples, reward null, left out)."""
    rewards = [r["reward"] for r in records if isinstance(r.get("reward"), int | float)]
    return sum(rewards) / len(rewards) if rewards else 0.0
