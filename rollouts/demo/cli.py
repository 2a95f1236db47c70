"""The command line, ``python -m rollouts.demo DEST [--runs | --curve NAME --steady] ...``;
``__main__.py`` only calls ``main``, so that the package can export it without importing
``__main__`` (which ``-m`` would then run twice, with a warning)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..install import install_hint
from .curves import CURVES
from .runs import RUNS, write_demo, write_demo_runs
from .scalars import scalars_available, write_demo_scalars

NO_SCALARS = (  # a semicolon, not parentheses: a checkout's hint ends in "(in the checkout)"
    "no TensorBoard scalars written: the tensorboard package is not installed;"
    f" {install_hint('tensorboard')}"
)


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
    parser.add_argument(
        "--no-scalars",
        action="store_true",
        help="write no TensorBoard scalars (written when the tensorboard package is there)",
    )
    args = parser.parse_args(argv)
    if args.runs and (args.curve or args.steady):
        parser.error("--runs writes one steady run per curve; drop --curve and --steady")
    steps = args.steps if args.steps is not None else 40 if args.runs else 12
    sizes = {"train_steps": steps, "samples_per_step": args.samples, "seed": args.seed}
    try:
        scalars = not args.no_scalars and scalars_available()
        if args.runs:
            for name, save in write_demo_runs(args.dest, **sizes).items():
                if scalars:  # beside rollout_result/, as a run with --use-tensorboard has them
                    write_demo_scalars(save, steps, RUNS[name], args.seed)
                print(f"wrote the {name} run to {save} ({_tree_size(save)})")
        else:
            curve = args.curve or "rise"
            out = write_demo(args.dest, **sizes, curve=curve, steady=args.steady)
            if scalars:
                write_demo_scalars(args.dest, steps, curve, args.seed)
            print(f"wrote demo rollouts to {out} ({_tree_size(out)})")
    except ValueError as exc:
        parser.error(str(exc))
    if not scalars and not args.no_scalars:
        print(NO_SCALARS)
    return 0
