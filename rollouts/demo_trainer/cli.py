"""`python -m rollouts.demo_trainer`: the command line of the demo trainer."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from .curves import REGIMES
from .loop import Options, Trainer


def _at_least(minimum: int) -> type:
    def parse(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}")
        return value

    return parse  # type: ignore[return-value]


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 3600:
        raise argparse.ArgumentTypeError("must be between 0 and 3600")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m rollouts.demo_trainer",
        description="A fake GRPO/PPO trainer: writes rollout steps, checkpoints and progress.",
    )
    p.add_argument("--run-dir", type=Path, required=True, help="where the run's files go")
    p.add_argument("--steps", type=_at_least(0), default=20, help="steps to run (added on resume)")
    p.add_argument("--step-seconds", type=_seconds, default=0.5, help="wall time of one step")
    p.add_argument("--regime", choices=REGIMES, default="rising", help="the curves' shape")
    p.add_argument("--samples-per-step", type=_at_least(1), default=16, help="timesteps per step")
    p.add_argument("--eval-every", type=_at_least(0), default=5, help="steps between evals")
    p.add_argument("--table-every", type=_at_least(0), default=4, help="steps between SB3 tables")
    p.add_argument("--checkpoint-every", type=_at_least(0), default=5, help="steps between step-N")
    p.add_argument("--keep-checkpoints", type=_at_least(1), default=3, help="numbered ones kept")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resume", type=Path, help="a checkpoint, a resume.json or a run directory")
    p.add_argument("--fail-at-step", type=_at_least(0), help="raise at this step (tests)")
    p.add_argument("--control-file", help="pause/stop requests (default: env RELAX_CONTROL_FILE)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    options = Options(**vars(args))
    return Trainer(options).run()
