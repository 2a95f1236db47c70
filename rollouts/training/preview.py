"""The offline preview: three synthetic snapshots (rising, plateau, KL too large) with exactly
the keys of a real one, made in memory: no process is started and nothing is written.

A real run leaves episode rows, a `resume.json` and checkpoints in its run directory; the
preview makes the same parts up (there is no run directory to read), so the episode table and
the recovery box are drawn too, and a page that reads them is checked by the preview as well."""

# ruff: noqa: S311

from __future__ import annotations

import json
import math
import random
from typing import Any

from .episodes import EPISODE_ROWS
from .episodes import empty as empty_episodes
from .logring import LogRing
from .progress import Progress
from .snapshot import PREVIEWS, assemble, backend_part, job_part
from .spec import Spec

STEPS = 40
PER_STEP = 2048
START = 1_700_000_000.0


def _metrics(regime: str, step: int, rng: random.Random) -> dict[str, float]:
    x = step / STEPS
    if regime == "rising":
        reward = 20 + 180 * (1 - math.exp(-3 * x)) + rng.gauss(0, 4)
        kl = 0.01 + 0.004 * rng.random()
    elif regime == "plateau":
        reward = 150 + 0.05 * step + rng.gauss(0, 1.5)  # flat within its noise
        kl = 0.008 + 0.004 * rng.random()
    else:
        reward = 20 + 120 * x + rng.gauss(0, 6)
        kl = 0.01 + 0.09 * x**2 + 0.005 * rng.random()
    return {
        "ep_rew_mean": reward,
        "approx_kl": kl,
        "explained_variance": min(0.95, -0.3 + 1.6 * x),
        "entropy_loss": -1.4 + 0.6 * x,
        "value_loss": 40 * math.exp(-2 * x) + rng.random(),
        "clip_fraction": 0.05 + 2 * kl,
        "fps": 900 + rng.gauss(0, 20),
    }


def preview_snapshot(
    spec: Spec, regime: str, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    if regime not in PREVIEWS:
        raise ValueError(f"preview must be one of {', '.join(PREVIEWS)}")
    rng = random.Random(0)  # fixed: each preview reads as its name says (tested)
    progress, log = Progress(), LogRing()
    total = STEPS * PER_STEP * 5 // 4
    for step in range(1, STEPS + 1):
        line = {
            "event": "progress",
            "timesteps": step * PER_STEP,
            "total_timesteps": total,
            "phase": ("rollout", "update", "eval")[step % 3],
            **_metrics(regime, step, rng),
        }
        text = json.dumps(line)
        log.add(text, progress.feed(text, START + step * 2.0) or "stdout")
    log.add("[preview] a synthetic run: no process was started", "stderr")
    wall = STEPS * 2.0
    record = {
        "id": f"preview-{regime}",
        "command": ["python", "train.py", "--preview", regime],
        "started_at": START,
        "pid": None,
        "values": spec.defaults(),
        "run": f"preview-{regime}",
        "device": spec.device,
    }
    job = job_part(record, "running", wall, backend_part(spec.backend, spec.ray.get("address")))
    snapshot = assemble(
        spec, job, progress, log, None, params or {}, end=START + wall, preview=regime
    )
    snapshot["episodes"] = _episodes(spec, progress, rng)
    snapshot["recovery"] = _recovery(spec, START + wall)
    return snapshot


def _episodes(spec: Spec, progress: Progress, rng: random.Random) -> dict[str, Any]:
    """An episode row per step, as a run's episode CSV gives them (none if the spec has none)."""
    if not spec.episodes:
        return empty_episodes()
    rows = [
        [n, round(p.metrics.get("ep_rew_mean") or 0.0, 3), 150 + rng.randrange(100), 2.0 * n]
        for n, p in enumerate(progress.snapshot(), start=1)
    ]
    return {
        "columns": ["episode", "reward", "length", "time"],
        "rows": rows[-EPISODE_ROWS:],
        "total": len(rows),
        "offset": 0,
        "limit": EPISODE_ROWS,
    }


def _recovery(spec: Spec, now: float) -> dict[str, Any]:
    """The recovery part of a run that keeps its checkpoints: the pointer and the files."""
    ticks = STEPS * PER_STEP
    latest = f"{spec.checkpoints}/latest.json"
    numbered = [
        {
            "name": f"{spec.checkpoints}/step-{s}.json",
            "sidecar": None,
            "timesteps": s * PER_STEP,
            "kind": "checkpoint",
        }
        for s in (STEPS, STEPS - 5, STEPS - 10)
    ]
    return {
        "resume": {"checkpoint": latest, "timesteps": ticks, "step": STEPS, "updated": now},
        "checkpoints": [
            {"name": latest, "sidecar": None, "timesteps": ticks, "kind": "latest"},
            *numbered,
            {
                "name": f"{spec.checkpoints}/baseline.json",
                "sidecar": None,
                "timesteps": 0,
                "kind": "baseline",
            },
        ],
        "forced_stop": None,
        "failure": None,
    }
