"""A complete stable-baselines3 PPO run on CartPole-v1, as the viewer hosts it.

    pip install -e ".[sb3]"
    python manage.py train examples/sb3-ppo.toml        # from the Training page
    python examples/sb3_ppo.py --run-dir runs/try      # or on its own (Ctrl+C stops and saves)

Everything the viewer needs comes from one callback, `rollouts.integrations.sb3.RelaxCallback`
(the control file, progress lines with SB3's diagnostics, atomic checkpoints, `resume.json`)
and `sb3.learn` (the emergency checkpoint and `training_failure.json` on an exception). The rest
is an ordinary SB3 script: SB3's own verbose tables on stdout, a Monitor CSV of the episodes
(`<run dir>/monitor.csv`), and `--resume` to continue a checkpoint with
`reset_num_timesteps=False` (`--timesteps` then counts the steps *added*).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--run-dir", required=True, help="where the checkpoints, resume.json and monitor.csv go")
    add("--timesteps", type=int, default=20000, help="learn() target; with --resume: steps added")
    add("--learning-rate", type=float, default=3e-4)
    add("--n-steps", type=int, default=512, help="env steps per rollout (one update each)")
    add("--batch-size", type=int, default=64)
    add("--n-epochs", type=int, default=10)
    add("--clip-range", type=float, default=0.2)
    add("--ent-coef", type=float, default=0.0)
    add("--gamma", type=float, default=0.99)
    add("--seed", type=int, default=0)
    add("--device", default="cpu", help="cpu, cuda or auto")
    add("--poll-every", type=int, default=32, help="env steps between reads of the control file")
    add("--recovery-every", type=int, default=2000, help="env steps between <stem>_latest.zip")
    add("--checkpoint-every", type=int, default=20000, help="env steps between numbered ones")
    add("--checkpoint-keep", type=int, default=3, help="numbered checkpoints kept")
    add("--resume", metavar="PATH", help="a model zip, its sidecar, a resume.json or a run dir")
    add("--ignore-control", action="store_true", help="never read the control file (tests)")
    add(
        "--fail-at",
        type=int,
        metavar="N",
        help="raise in the env at its N-th step (tests);"
        " a resumed run gets past it, so the same command line resumes",
    )
    return parser.parse_args(argv)


def make_env(run_dir: Path, fail_at: int | None, append: bool) -> Any:
    import gymnasium as gym
    from stable_baselines3.common.monitor import Monitor

    class FailAt(gym.Wrapper):
        """An env that raises at its N-th step: the emergency checkpoint, tried for real."""

        def __init__(self, env: Any, at: int) -> None:
            super().__init__(env)
            self.at, self.steps = at, 0

        def step(self, action: Any) -> Any:
            self.steps += 1
            if self.steps >= self.at:
                raise RuntimeError(f"injected failure at env step {self.steps}")
            return self.env.step(action)

    env: Any = gym.make("CartPole-v1")
    if fail_at is not None:
        env = FailAt(env, fail_at)
    # A resumed run appends to the episodes of the run it continues.
    return Monitor(env, str(run_dir / "monitor.csv"), override_existing=not append)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    from stable_baselines3 import PPO

    from rollouts.integrations import sb3

    fail_at = None if args.resume else args.fail_at
    env = make_env(run_dir, fail_at, append=(run_dir / "monitor.csv").exists())
    wanted = {
        "learning_rate": args.learning_rate,
        "n_steps": args.n_steps,
        "batch_size": args.batch_size,
        "n_epochs": args.n_epochs,
        "clip_range": args.clip_range,
        "ent_coef": args.ent_coef,
        "gamma": args.gamma,
    }
    if args.resume:
        model = sb3.resume(args.resume, env, requested=wanted, device=args.device)
    else:
        model = PPO("MlpPolicy", env, verbose=1, seed=args.seed, device=args.device, **wanted)
    callback = sb3.RelaxCallback(
        run_dir,
        stem="ppo_cartpole",
        poll_every=args.poll_every,
        recovery_every=args.recovery_every,
        checkpoint_every=args.checkpoint_every,
        checkpoint_keep=args.checkpoint_keep,
        read_control=not args.ignore_control,
    )
    sb3.learn(model, args.timesteps, callback=callback, reset_num_timesteps=not args.resume)
    env.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
