"""The training curves of each regime: every metric a pure function of (timesteps, seed).

Nothing here depends on the step count, the run length or the clock, so a run resumed from a
checkpoint continues exactly the curve it left (the same timesteps give the same numbers), and
two runs with the same seed draw the same noise.
"""

# Seeded `random` is the point here.
# ruff: noqa: S311

from __future__ import annotations

import math
import random

REGIMES = ("rising", "plateau", "kl")
LEARNING_RATE = 3e-4
CLIP_RANGE = 0.2
KL_LIMIT = 0.05  # the reading calls a policy update too large above this approx_kl


def _noise(seed: int, regime: str, key: str, timesteps: int, spread: float) -> float:
    """Gaussian noise of standard deviation `spread`, fixed by (seed, regime, key, timesteps)."""
    return random.Random(f"{seed}:{regime}:{key}:{timesteps}").gauss(0.0, spread)


def _approach(timesteps: int, scale: float) -> float:
    """0 at the start, 1 in the long run: how far a quantity has moved towards its target."""
    return 1.0 - math.exp(-timesteps / scale)


def metrics(regime: str, timesteps: int, seed: int = 0, step_size: int = 16) -> dict[str, float]:
    """The PPO diagnostics after `timesteps`: reward, KL, value fit, entropy, losses.

    `step_size` (timesteps a step) only sets the lag of the plateau's noise, so that the noise
    of consecutive steps cancels; resume with the same `--samples-per-step` to keep the curve.
    """
    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {', '.join(REGIMES)}, not {regime!r}")
    t = max(0, timesteps)

    def noise(key: str, spread: float) -> float:
        return _noise(seed, regime, key, t, spread)

    if regime == "rising":  # reward climbs steadily, updates stay small, the critic fits
        reward = 0.15 + 0.7 * _approach(t, 1500) + noise("reward", 0.004)
        kl = 0.008 + abs(noise("kl", 0.002))
        clip = 0.06 + abs(noise("clip", 0.01))
        variance = 0.9 - 0.6 * math.exp(-t / 400) + noise("ev", 0.01)
        entropy = -(0.55 + 0.5 * math.exp(-t / 2000)) + noise("entropy", 0.005)
        value = 0.02 + 0.25 * math.exp(-t / 500) + abs(noise("value", 0.004))
    elif regime == "plateau":  # the reward no longer moves: flat with noise
        # The difference of two draws: noise that cancels over any stretch (white noise would
        # tilt a short window one way or the other, and a flat curve would not read as flat).
        wobble = noise("reward", 0.01) - _noise(seed, regime, "reward", t - step_size, 0.01)
        reward = 0.55 + wobble
        kl = 0.006 + abs(noise("kl", 0.0015))
        clip = 0.04 + abs(noise("clip", 0.008))
        variance = 0.85 + noise("ev", 0.01)
        entropy = -0.45 + noise("entropy", 0.004)
        value = 0.015 + abs(noise("value", 0.003))
    else:  # "kl": updates grow too large, the entropy collapses, the reward stalls
        reward = 0.2 + 0.25 * _approach(t, 500) + noise("reward", 0.02)
        kl = 0.01 + 0.11 * _approach(t, 150) + abs(noise("kl", 0.004))
        clip = 0.1 + 0.3 * _approach(t, 150) + abs(noise("clip", 0.01))
        variance = 0.6 + noise("ev", 0.05)
        entropy = -(0.15 + 0.85 * math.exp(-t / 300)) + noise("entropy", 0.01)
        value = 0.05 + abs(noise("value", 0.02))
    return {
        "ep_rew_mean": round(min(1.0, max(0.0, reward)), 4),
        "approx_kl": round(kl, 5),
        "explained_variance": round(min(1.0, variance), 4),
        "entropy_loss": round(entropy, 4),
        "value_loss": round(value, 5),
        "clip_fraction": round(min(1.0, clip), 4),
        "policy_gradient_loss": round(-0.01 - kl / 2 + noise("pg", 0.002), 5),
        "learning_rate": LEARNING_RATE,
        "clip_range": CLIP_RANGE,
    }
