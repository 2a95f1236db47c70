"""A small training child for the job runner's tests (real processes, no mock).

    python fake_trainer.py --run-dir DIR --mode obey|ignore|crash [--steps N]
        [--step-seconds S] [--crash-at N] [--resume CHECKPOINT]

obey: reads rollouts.control between steps (pause blocks, stop saves and exits 0).
ignore: never reads it, and starts a grandchild (`sleep`) in its group: a stop must kill both.
crash: raises at --crash-at after writing a checkpoint each step (resume.json kept current).
Each step prints a progress JSON line; every 3rd step a stable-baselines3 style table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from rollouts.control import TrainingControl, atomic_write_json

PER_STEP = 10


def table(timesteps: int, reward: float) -> str:
    rows = [
        "-----------------------------------",
        "| rollout/           |            |",
        f"|    ep_rew_mean     | {reward:<10.4g} |",
        "| time/              |            |",
        f"|    total_timesteps | {timesteps:<10} |",
        "| train/             |            |",
        "|    clip_fraction   | 0.12       |",
        "-----------------------------------",
    ]
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--mode", default="obey")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--step-seconds", type=float, default=0.1)
    parser.add_argument("--crash-at", type=int, default=5)
    parser.add_argument("--resume", default=None)
    args = parser.parse_args()
    run = Path(args.run_dir)
    (run / "checkpoints").mkdir(parents=True, exist_ok=True)
    start = 0
    if args.resume:
        start = json.loads(Path(args.resume).read_text())["step"]
        print(f"resuming from step {start}", flush=True)
    if args.mode == "ignore":
        subprocess.Popen(["sleep", "300"])  # a grandchild in the same process group
    control = TrainingControl() if args.mode != "ignore" else None
    with open(run / "episodes.csv", "a") as episodes:
        if start == 0:
            episodes.write("episode,reward,length,time\n")
        for step in range(start + 1, args.steps + 1):
            if control is not None and control.check():
                atomic_write_json(run / "stopped.json", {"step": step - 1})
                print("stopped on request", flush=True)
                return 0
            time.sleep(args.step_seconds)
            ticks = step * PER_STEP
            reward = 1.0 + step * 0.5
            line = {"event": "progress", "timesteps": ticks, "total_timesteps": args.steps * 10}
            line.update(phase="rollout", ep_rew_mean=reward, approx_kl=0.01, explained_variance=0.5)
            print(json.dumps(line), flush=True)
            if step % 3 == 0:
                print(table(ticks, reward), flush=True)
            episodes.write(f"{step},{reward},{step + 3},{time.time():.3f}\n")
            episodes.flush()
            checkpoint = {"step": step, "timesteps": ticks}
            atomic_write_json(run / "checkpoints" / "latest.json", checkpoint)
            pointer = {"checkpoint": "checkpoints/latest.json", "timesteps": ticks, "step": step}
            atomic_write_json(run / "resume.json", pointer)
            if args.mode == "crash" and step == args.crash_at:
                atomic_write_json(run / "training_failure.json", {"step": step, "error": "boom"})
                print("Traceback (most recent call last):", file=sys.stderr, flush=True)
                raise RuntimeError("boom")
    print("done", os.getpid(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
