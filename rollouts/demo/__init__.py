"""Deterministic generator of realistic Relax rollout step files (standard library only).

Used by the quick start (`./run demo`), by tests and by benchmarks. Output depends only on the
arguments: every step draws from its own ``random.Random`` seeded with a string, so the same
arguments give the same bytes on every machine and every run.

The accuracy follows a ``curve`` (``CURVES``): a steady rise (the default), a plateau, or a
collapse with a rising truncation rate. ``write_demo_runs`` writes one run of each, with
``steady`` draws, so that the convergence reading of ``rollouts.store.reading`` names each one.

Modules, each drawing on the ones before it:

- ``tokens``: the tokenizer stand-in (special tokens and ids, counts, ids and log-probs);
- ``prompts``: problems per dataset and the prompts built from them;
- ``samples``: one sample record, ``make_sample``;
- ``curves``: accuracy and truncation over a run, ``CURVES``;
- ``runs``: a run's step files, ``write_demo`` and ``write_demo_runs``, and the fixed
  placements (NaN reward, object rewards, empty response, odd labels) tests point at;
- ``big_step``: one step file of any size for benchmarks, ``write_big_step``;
- ``cli``: ``python -m rollouts.demo``.
"""

from __future__ import annotations

from .big_step import write_big_step
from .cli import main
from .curves import CURVES, Curve
from .prompts import (
    EVAL_DATASETS,
    IMAGE_TOKENS,
    PROBLEMS_BY_DATASET,
    STYLES,
    Problem,
    Prompt,
    make_problem,
    make_prompt,
)
from .runs import NON_STEP_FILES, RUNS, write_demo, write_demo_runs, write_step
from .samples import MAX_RESPONSE_LENGTH, STATUS_WEIGHTS, STATUSES, make_sample
from .tokens import ENDOFTEXT, IM_END

__all__ = [
    "CURVES",
    "ENDOFTEXT",
    "EVAL_DATASETS",
    "IMAGE_TOKENS",
    "IM_END",
    "MAX_RESPONSE_LENGTH",
    "NON_STEP_FILES",
    "PROBLEMS_BY_DATASET",
    "RUNS",
    "STATUSES",
    "STATUS_WEIGHTS",
    "STYLES",
    "Curve",
    "Problem",
    "Prompt",
    "main",
    "make_problem",
    "make_prompt",
    "make_sample",
    "write_big_step",
    "write_demo",
    "write_demo_runs",
    "write_step",
]
