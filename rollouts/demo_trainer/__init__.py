"""A fake but realistic GRPO/PPO trainer for the demo and the tests (no Django).

`python -m rollouts.demo_trainer --run-dir DIR` runs steps of rollout, PPO update and, every
few steps, evaluation. Each step writes `rollout_result/train/<step>.jsonl` from the demo
content (`rollouts.demo`), prints a progress JSON line and every few steps an
stable-baselines3-style table, appends episode rows, keeps checkpoints and `resume.json`
current, and reads the control file (`rollouts.control`) to pause or stop.

Modules:

- ``curves``: every metric of each regime (rising, plateau, kl) as a function of timesteps;
- ``samples``: the train and eval records of a step, from the demo generator;
- ``table``: the SB3 verbose table;
- ``files``: the run directory's files, written atomically; ``--resume`` targets;
- ``loop``: the training loop, the graceful stop and the emergency save;
- ``cli``: the command line.
"""

from __future__ import annotations

from .cli import main
from .curves import REGIMES, metrics
from .loop import Options, Trainer

__all__ = ["REGIMES", "Options", "Trainer", "main", "metrics"]
