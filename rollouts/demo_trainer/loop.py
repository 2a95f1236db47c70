"""The training loop: steps of rollout, update and evaluation, with checkpoints, the control
file, a graceful stop, and an emergency save when anything goes wrong."""

from __future__ import annotations

import json
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from rollouts.control import TrainingControl

from .curves import CLIP_RANGE, LEARNING_RATE, metrics
from .files import RunFiles, load_resume, write_jsonl
from .samples import GROUP_SIZE, eval_records, mean_reward, train_records
from .table import format_table

PROGRESS_KEYS = ("ep_rew_mean", "approx_kl", "explained_variance", "entropy_loss", "value_loss",
                 "clip_fraction")  # fmt: skip
N_EPOCHS = 4  # PPO epochs per update: `train/n_updates` grows by this much a step


class InjectedFailure(RuntimeError):
    """Raised by `--fail-at-step`, to test the emergency save."""


@dataclass
class Options:
    run_dir: Path
    steps: int = 20
    step_seconds: float = 0.5
    regime: str = "rising"
    samples_per_step: int = 16
    eval_every: int = 5
    table_every: int = 4
    checkpoint_every: int = 5
    keep_checkpoints: int = 3
    seed: int = 0
    resume: Path | None = None
    fail_at_step: int | None = None
    control_file: str | None = None


class Trainer:
    def __init__(self, options: Options, out: TextIO = sys.stdout) -> None:
        self.options, self.out = options, out
        self.files = RunFiles(options.run_dir, options.keep_checkpoints)
        self.control = TrainingControl(options.control_file)
        self.regime, self.seed = options.regime, options.seed
        self.step, self.timesteps, self.episodes = 0, 0, 0
        self.started = time.monotonic()
        self.signal_name: str | None = None
        self.last: dict[str, float] = {}
        self.first_timesteps = self.first_step = 0

    # -- state ---------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        return {
            "step": self.step, "timesteps": self.timesteps, "episodes": self.episodes,
            "regime": self.regime, "seed": self.seed,
            "samples_per_step": self.options.samples_per_step, "metrics": self.last,
            "hyperparams": {"learning_rate": LEARNING_RATE, "clip_range": CLIP_RANGE,
                            "n_epochs": N_EPOCHS, "group_size": GROUP_SIZE},
        }  # fmt: skip

    def resume_from(self, path: Path) -> None:
        checkpoint, found = load_resume(path)
        self.step, self.timesteps = int(checkpoint["step"]), int(checkpoint["timesteps"])
        self.episodes = int(checkpoint.get("episodes", self.timesteps))
        # The curve is the checkpoint's: its regime and seed win over the command line's.
        kept = {k: checkpoint.get(k, getattr(self, k)) for k in ("regime", "seed")}
        changed = {k: v for k, v in kept.items() if v != getattr(self, k)}
        self.regime, self.seed = kept["regime"], kept["seed"]
        self.emit({"event": "resumed", "from": found.name, "timesteps": self.timesteps,
                   "step": self.step, "from_checkpoint": changed})  # fmt: skip

    def save_latest(self) -> str:
        saved = self.files.save_checkpoint("latest", self.state())
        self.files.write_resume(saved, self.state())
        return saved

    # -- output --------------------------------------------------------------------------------

    def emit(self, line: dict[str, Any]) -> None:
        self.out.write(json.dumps(line) + "\n")
        self.out.flush()

    def enter(self, phase: str) -> None:
        """A phase begins: a progress line without timesteps (so no point, only the phase)."""
        self.emit({"event": "progress", "phase": phase})

    def fps(self) -> float:
        busy = time.monotonic() - self.started - self.control.paused_seconds
        done = self.timesteps - self.first_timesteps
        return round(done / busy, 2) if busy > 0 else 0.0

    # -- the run -------------------------------------------------------------------------------

    def run(self) -> int:
        options = self.options
        if options.resume is not None:
            try:
                self.resume_from(options.resume)
            except (OSError, ValueError, KeyError, TypeError) as error:
                print(f"demo_trainer: --resume: {error!r}", file=sys.stderr, flush=True)
                return 2  # nothing written: the run directory's recovery pointer stays as it was
        self.first_timesteps, self.first_step = self.timesteps, self.step
        total = self.timesteps + options.steps * options.samples_per_step
        self.files.start_episodes()
        if options.resume is None or not (self.files.checkpoints / "baseline.json").exists():
            self.files.save_checkpoint("baseline", self.state())
        self.save_latest()
        previous = {
            signal.SIGTERM: signal.signal(signal.SIGTERM, self.on_signal),
            signal.SIGINT: signal.signal(signal.SIGINT, self.on_signal),
        }
        try:
            for _ in range(options.steps):
                if self.signal_name or self.control.check():
                    return self.stop()
                self.run_step(total)
            self.save_latest()
            self.emit({"event": "done", "timesteps": self.timesteps})
            return 0
        except Exception as error:  # any failure: save what can be resumed
            return self.fail(error)
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)

    def on_signal(self, number: int, frame: FrameType | None) -> None:
        """The fallback for runners that do not write the control file: stop at the next step."""
        self.signal_name = signal.Signals(number).name

    def run_step(self, total: int) -> None:
        options, step = self.options, self.step
        # A resume from the failure's checkpoint (or later) gets past it, as a fixed bug would.
        passed = options.resume is not None and self.first_step >= (options.fail_at_step or 0)
        if step == options.fail_at_step and not passed:
            raise InjectedFailure(f"--fail-at-step {step}")
        pause = max(0.0, options.step_seconds)
        curve = metrics(self.regime, self.timesteps, self.seed, options.samples_per_step)
        records = train_records(self.seed, step, self.timesteps, options.samples_per_step,
                                curve["ep_rew_mean"])  # fmt: skip
        self.enter("rollout")
        time.sleep(pause * 0.6)  # generating the rollout
        write_jsonl(self.files.step_file("train", step), records)
        self.append_episodes(records)
        self.timesteps += options.samples_per_step
        self.step += 1
        self.enter("update")
        time.sleep(pause * 0.3)  # the PPO update
        self.last = metrics(self.regime, self.timesteps, self.seed, options.samples_per_step)
        phase = "update"
        if options.eval_every > 0 and self.step % options.eval_every == 0:
            phase = "eval"
            self.enter("eval")
            time.sleep(pause * 0.1)
            found = eval_records(self.seed, step, self.timesteps, options.samples_per_step,
                                 self.last["ep_rew_mean"])  # fmt: skip
            write_jsonl(self.files.step_file("eval", step), found)
            self.last["eval_reward"] = round(mean_reward(found), 4)
        line = {"event": "progress", "timesteps": self.timesteps, "total_timesteps": total,
                "phase": phase, **{k: self.last[k] for k in PROGRESS_KEYS},
                "fps": self.fps()}  # fmt: skip
        self.emit(line)
        if options.table_every > 0 and self.step % options.table_every == 0:
            self.print_table(records, line)
        self.save_latest()
        if options.checkpoint_every > 0 and self.step % options.checkpoint_every == 0:
            self.files.save_numbered(self.state())

    def append_episodes(self, records: list[dict[str, Any]]) -> None:
        elapsed = time.monotonic() - self.started - self.control.paused_seconds
        rows = []
        for record in records:
            self.episodes += 1
            reward = record["reward"]
            value = float(reward) if isinstance(reward, int | float) else 0.0
            rows.append((self.episodes, value, int(record["response_length"]), elapsed))
        self.files.append_episodes(rows)

    def print_table(self, records: list[dict[str, Any]], line: dict[str, Any]) -> None:
        lengths = [r["response_length"] for r in records]
        values: dict[str, object] = {
            "rollout/ep_len_mean": float(sum(lengths) / max(1, len(lengths))),
            "rollout/ep_rew_mean": line["ep_rew_mean"],
            "time/fps": int(line["fps"]),
            "time/iterations": self.step,
            "time/time_elapsed": int(time.monotonic() - self.started),
            "time/total_timesteps": self.timesteps,
            "train/n_updates": self.step * N_EPOCHS,
            "train/loss": round(self.last["value_loss"] / 2 + self.last["policy_gradient_loss"], 5),
        }
        values.update((f"train/{k}", v) for k, v in self.last.items() if k not in
                      ("ep_rew_mean", "eval_reward"))  # fmt: skip
        if "eval_reward" in self.last:
            values["eval/mean_reward"] = self.last.pop("eval_reward")
        self.out.write(format_table(values) + "\n")
        self.out.flush()

    def stop(self) -> int:
        """A graceful stop: save the model and say what stopped it and where to resume from."""
        saved = self.save_latest()
        self.files.write_record("stopped.json", {
            "stopped_by": "signal" if self.signal_name else "control_file",
            "stopped_by_signal": self.signal_name is not None, "stop_signal": self.signal_name,
            "step": self.step, "timesteps": self.timesteps, "recovery_checkpoint": saved,
            "at": time.time(),
        })  # fmt: skip
        self.emit({"event": "stopped", "timesteps": self.timesteps, "checkpoint": saved})
        return 0

    def fail(self, error: Exception) -> int:
        """Save an emergency checkpoint, point resume.json at it, record the failure."""
        frames = traceback.extract_tb(error.__traceback__)
        # File names only: the log is shown in the viewer, which shows no absolute path.
        where = [f"{Path(f.filename).name}:{f.lineno} in {f.name}" for f in frames]
        saved = self.files.save_checkpoint("emergency", self.state())
        self.files.write_resume(saved, self.state())
        self.files.write_record("training_failure.json", {
            "error": type(error).__name__, "message": str(error), "where": where,
            "step": self.step, "timesteps": self.timesteps, "recovery_checkpoint": saved,
            "at": time.time(),
        })  # fmt: skip
        print(f"training failed: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        for line in where:
            print(f"  at {line}", file=sys.stderr, flush=True)
        return 1
