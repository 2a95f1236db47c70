"""Demo runs on disk: the train and eval step records of a run along its curve, the files
beside the steps, and the named runs of ``./run demo``.

Fixed placements, in every curve, so that tests and docs can point at them (``write_demo``):

- the single NaN reward: train step ``min(1, train_steps - 1)``,
  sample_index ``min(3, samples_per_step - 1)``;
- object rewards ``{"acc": ..., "format": ...}``: every train sample of step
  ``train_steps // 2`` (step 6 by default), except failed samples, whose reward is null;
- an empty response (status ``aborted``): train step 0, sample_index 0;
- label ``0`` (an int) on group 1 and label ``""`` on group 2 of train step 0;
- a ``failed`` sample: the last sample of the last train step (others occur at random);
- degenerate samples, one or more of each flag, on other samples of every train step
  (``degenerate``), chosen by the step's own generator.
"""

# Seeded `random` is the point here.
# ruff: noqa: S311

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable
from itertools import accumulate, pairwise
from pathlib import Path
from typing import Any

from .curves import CURVES, Curve, status_weights
from .degenerate import place_degenerate
from .prompts import (
    EVAL_DATASETS,
    PROBLEMS_BY_DATASET,
    STYLES,
    UNLABELED_PROBLEM,
    Problem,
    Prompt,
    make_problem,
    make_prompt,
    make_zero_problem,
)
from .samples import STATUSES, make_sample

NON_STEP_FILES = ("notes.jsonl", "20.pending.json")
# The train set: group g of step s draws prompt (s * groups + g) % TRAIN_PROMPTS, so with 8
# groups a step each prompt comes back every third step.
TRAIN_PROMPTS = 24
RUNS = {"steady-rise": "rise", "plateau": "plateau", "collapse": "collapse"}  # name -> curve


def write_step(path: Path, records: Iterable[dict[str, Any]]) -> int:
    """Write like the Relax writer: truncate, one ``json.dumps`` line per record, UTF-8."""
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with path.open("wb") as f:
        for record in records:
            line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
            written += f.write(line)
    return written


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
    specials = {
        min(1, n_groups - 1): make_zero_problem(rng),
        min(2, n_groups - 1): UNLABELED_PROBLEM,
    }
    p, weights = curve.accuracy(step, steps), status_weights(curve, step, steps)
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
        plan = [
            s
            for s, (lo, hi) in zip(STATUSES, pairwise([0, *bounds]), strict=True)
            for _ in range(hi - lo)
        ]
        rng.shuffle(plan)
        statuses = [
            fixed.get(i) or ("completed" if sat else plan.pop()) for i, sat in enumerate(saturated)
        ]
        completed = [i for i, s in enumerate(statuses) if s == "completed"]
        sat_groups = range(2, n_groups, 4)  # as many solved as the curve says, give or take one
        solved = set(rng.sample(sat_groups, int(p * len(sat_groups) + rng.random())))
        owed = round(p * len(completed)) + _wobble(seed, step, len(completed))
        owed -= sum(saturated[i] and i // group_size in solved for i in completed)
        left = sum(not saturated[i] for i in completed)
    records = []
    for g in range(n_groups):
        problem = specials.get(g) if step == 0 else None
        prompt = _train_prompt(seed, (step * n_groups + g) % TRAIN_PROMPTS, problem)
        if g % 4 == 2:
            group_p = float(g in solved) if steady else float(rng.random() < p)
        else:
            group_p = _clamp(p + rng.uniform(-0.2, 0.2))
        for i in range(g * group_size, min(samples, (g + 1) * group_size)):
            status = (
                statuses[i] if steady else fixed.get(i) or ("completed" if saturated[i] else None)
            )
            if status is None:  # the draw make_sample would make, at the same place
                status = rng.choices(STATUSES, weights)[0]
            urn = steady and status == "completed" and not saturated[i]
            record = make_sample(
                rng,
                step=step,
                sample_index=i,
                group_index=g,
                prompt=prompt,
                status=status,
                response="" if step == i == 0 else None,
                p_correct=_clamp(owed / left) if urn else group_p,
                multi_reward=step == steps // 2,
            )
            if urn:
                reward, left = record["reward"], left - 1
                owed -= reward["acc"] if isinstance(reward, dict) else reward
            records.append(record)
    if step == min(1, steps - 1):
        records[min(3, samples - 1)]["reward"] = math.nan
    # The fixed placements above stay as they are (the labels 0 and "" are groups 1 and 2).
    kept = {0, min(3, samples - 1), samples - 1}
    if step == 0:
        kept.update(range(group_size, min(samples, 3 * group_size)))
    flagged = random.Random(f"{seed}:degenerate:{step}")
    place_degenerate(records, flagged, curve.loops(step, steps), kept)
    return records


def _eval_records(
    seed: int, step: int, steps: int, samples: int, curve: Curve = CURVES["rise"]
) -> list[dict[str, Any]]:
    rng = random.Random(f"{seed}:eval:{step}")
    weights = status_weights(curve, step, steps)
    records = []
    # gsm8k and 中文数学 have one sample per prompt (group_index null); math500 has 4 per prompt.
    for dataset, per_prompt, shift in zip(EVAL_DATASETS, (0, 4, 0), (0.15, -0.1, 0.0), strict=True):
        p = _clamp(curve.accuracy(step, steps) + shift)
        prompt = None
        for i in range(max(1, samples // 4)):
            if prompt is None or not per_prompt or i % per_prompt == 0:
                prompt = _eval_prompt(seed, dataset, i // per_prompt if per_prompt else i)
            group = i // per_prompt if per_prompt else None
            records.append(
                make_sample(
                    rng,
                    step=step,
                    sample_index=i,
                    group_index=group,
                    kind="eval",
                    dataset=dataset,
                    prompt=prompt,
                    p_correct=p,
                    status=rng.choices(STATUSES, weights)[0],
                    log_probs=False,
                )
            )
    return records


def _train_prompt(seed: int, k: int, problem: Problem | None) -> Prompt:
    """The train set's prompt `k`: the same text every time the sampler draws it again, as a
    real run's dataset does (a prompt's page follows it over the steps)."""
    rng = random.Random(f"{seed}:prompt:{k}")
    return make_prompt(rng, STYLES[k % len(STYLES)], problem=problem)


def _eval_prompt(seed: int, dataset: str, k: int) -> Prompt:
    """An eval set's prompt `k`: the same in every eval round, so two rounds compare prompt by
    prompt."""
    rng = random.Random(f"{seed}:eval-prompt:{dataset}:{k}")
    style = "zh" if dataset == "中文数学" else rng.choice(("plain", "think"))
    problem = make_problem(rng, rng.choice(PROBLEMS_BY_DATASET[dataset]))
    return make_prompt(rng, style, problem=problem)


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
            save,
            train_steps=train_steps,
            eval_every=eval_every,
            samples_per_step=samples_per_step,
            group_size=group_size,
            seed=seed,
            curve=RUNS[name],
            steady=True,
        )
    return runs
