"""The command line, ``python -m rollouts.demo DEST [--runs | --curve NAME --steady] ...``;
``__main__.py`` only calls ``main``, so that the package can export it without importing
``__main__`` (which ``-m`` would then run twice, with a warning)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .curves import CURVES
from .runs import RUNS, write_demo, write_demo_runs


def _tree_size(directory: Path) -> str:
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
                print(f"wrote the {name} run to {save} ({_tree_size(save)})")
            return 0
        out = write_demo(args.dest, **sizes, curve=args.curve or "rise", steady=args.steady)
    except ValueError as exc:
        parser.error(str(exc))
    print(f"wrote demo rollouts to {out} ({_tree_size(out)})")
    return 0
