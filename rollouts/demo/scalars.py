"""A demo run's TensorBoard scalars: what a Relax run started with ``--use-tensorboard`` writes to
``<save>/tensorboard_log/`` beside ``rollout_result/``, on the same step axis, so ``./run demo``
shows the trainer's metrics next to its samples.

Written with TensorBoard's own pieces (its ``Event`` proto and ``RecordWriter``), so it needs
the optional ``tensorboard`` package; without it the demo has no scalars and says so. The file
name and every wall time are fixed, so the same arguments write the same bytes.
"""

from __future__ import annotations

# ruff: noqa: S311 (a demo's curves, not secrets)
import math
import random
from pathlib import Path

from .curves import CURVES

EVENT_FILE = "events.out.tfevents.1764547200.demo"
START_TIME = 1764547200.0  # 2025-12-01T00:00:00Z: a fixed wall time, not the clock's
STEP_SECONDS = 30.0
# The policy's KL to the reference by the end of the run: a collapse drifts far past the
# trends' "KL too large" threshold (0.05); a healthy run stays well under it.
FINAL_KL = {"rise": 0.02, "plateau": 0.03, "collapse": 0.2}


def scalars_available() -> bool:
    try:
        import tensorboard.compat.proto.event_pb2
        import tensorboard.summary.writer.record_writer  # noqa: F401
    except ImportError:
        return False
    return True


def demo_scalars(steps: int, curve: str, seed: int = 0) -> dict[int, dict[str, float]]:
    """step -> {tag: value}: the train/, rollout/ and perf/ scalars of each train step."""
    shape, rng = CURVES[curve], random.Random(f"{seed}:scalars:{curve}")
    final_kl = FINAL_KL.get(curve, 0.03)
    out = {}
    for step in range(steps):
        t = step / max(steps - 1, 1)
        kl = final_kl * t**2 + 0.001 + rng.uniform(0, 0.002)
        out[step] = {
            "train/kl_loss": kl,
            "train/entropy_loss": 0.9 - (0.85 if curve == "collapse" else 0.4) * t,
            "train/grad_norm": 0.4 + rng.uniform(0, 0.2) + (3 * t**3 if curve == "collapse" else 0),
            "train/lr": 1e-6,
            "rollout/raw_reward": shape.accuracy(step, steps),
            "rollout/response_len/mean": 350 + 100 * math.sin(t * math.pi) + rng.uniform(-20, 20),
            "perf/step_time": STEP_SECONDS + rng.uniform(-3, 3),
        }
    return out


def write_demo_scalars(save: Path, steps: int, curve: str, seed: int = 0) -> Path:
    """Write ``save/tensorboard_log/<EVENT_FILE>`` (replacing it) and return its path."""
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.record_writer import RecordWriter

    path = save / "tensorboard_log" / EVENT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        writer = RecordWriter(f)
        writer.write(Event(wall_time=START_TIME, file_version="brain.Event:2").SerializeToString())
        for step, values in demo_scalars(steps, curve, seed).items():
            wall_time = START_TIME + STEP_SECONDS * (step + 1)
            for tag, value in values.items():
                summary = Summary(value=[Summary.Value(tag=tag, simple_value=value)])
                event = Event(wall_time=wall_time, step=step, summary=summary)
                writer.write(event.SerializeToString())
    return path
