"""stable-baselines3 under the viewer's training host: one callback does what the host needs.

    callback = sb3.RelaxCallback("runs/x", checkpoint_every=20_000)  # from rollouts.integrations
    sb3.learn(PPO("MlpPolicy", env, verbose=1), 50_000, callback=callback)

Why: the control file is read every `poll_every` env steps, so a pause blocks at a step boundary
and is acknowledged (the page says "paused" only then) and a stop ends `learn()` there with the
final model saved. A progress line at each rollout end carries the logger's values of the last
update (a line with the reward alone leaves the KL and EV readings blind), and phase lines draw
the timeline. A baseline, a rolling `<stem>_latest.zip` every `recovery_every` steps and the last
`checkpoint_keep` numbered `<stem>_<timesteps>.zip` bound what a kill -9 loses; each zip is
atomic and has a sidecar with the effective hyperparameters, and `resume.json` names the zip.
`learn()` wraps `model.learn` because a callback never sees its exceptions. SB3 is imported only
when `RelaxCallback` is first asked for or a model loaded: this imports without the sb3 extra.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from rollouts.control import TrainingControl, atomic_write, atomic_write_json

HYPERPARAMS = (
    "n_steps", "batch_size", "n_epochs", "learning_rate", "gamma", "gae_lambda", "clip_range",
    "clip_range_vf", "ent_coef", "vf_coef", "max_grad_norm", "target_kl", "normalize_advantage",
    "n_envs", "seed", "device",
)  # fmt: skip
NUMBERED = re.compile(r"^(?P<stem>.+)_(?P<ticks>\d+)\.zip$")


def emit(event: str, **fields: Any) -> None:
    """One JSON line on stdout, flushed: the viewer reads stdout as it is written."""
    print(json.dumps({"event": event, **fields}), flush=True)


def number(value: Any) -> float | None:
    """A finite float from an int, float or numpy scalar; None for anything else."""
    with contextlib.suppress(TypeError, ValueError):
        if not isinstance(value, bool | str | bytes) and math.isfinite(found := float(value)):
            return found
    return None


def plain(value: Any) -> Any:
    """A hyperparameter as JSON: a schedule (SB3 wraps constants in one) as its starting value."""
    if callable(value):
        with contextlib.suppress(Exception):
            value = value(1.0)
    if value is None or isinstance(value, bool | int | str):
        return value
    return number(value) if number(value) is not None else str(value)


def hyperparams(model: Any) -> dict[str, Any]:
    """The PPO hyperparameters `model` trains with (after a load: the checkpoint's)."""
    return {name: plain(getattr(model, name)) for name in HYPERPARAMS if hasattr(model, name)}


def logger_metrics(name_to_value: Mapping[str, Any]) -> dict[str, float]:
    """SB3 logger values without their section (`train/approx_kl` -> `approx_kl`), numbers only."""
    found = {str(key).rpartition("/")[2]: number(value) for key, value in name_to_value.items()}
    return {key: value for key, value in found.items() if key and value is not None}


def episode_metrics(infos: Iterable[Mapping[str, Any]] | None) -> dict[str, float]:
    """`ep_rew_mean` and `ep_len_mean` over SB3's episode buffer (Monitor's `r` and `l`)."""
    done = [(float(i["r"]), float(i["l"])) for i in infos or () if "r" in i and "l" in i]
    if not done:
        return {}
    return {
        "ep_rew_mean": sum(r for r, _ in done) / len(done),
        "ep_len_mean": sum(n for _, n in done) / len(done),
    }


def overridden(requested: Mapping[str, Any], used: Mapping[str, Any]) -> dict[str, Any]:
    """The requested values a checkpoint replaces: {name: {"requested", "checkpoint"}}."""
    return {
        key: {"requested": value, "checkpoint": used[key]}
        for key, value in requested.items()
        if value is not None and key in used and not _same(value, used[key])
    }


def _same(a: Any, b: Any) -> bool:
    x, y = number(a), number(b)
    return math.isclose(x, y, rel_tol=1e-9) if x is not None and y is not None else a == b


def model_path(path: str | os.PathLike[str]) -> Path:
    """The model zip `path` names: a zip itself, or what a sidecar (`model`), a `resume.json`
    or a run directory's `resume.json` (`checkpoint`, relative to the run dir) points at."""
    target = Path(path)
    if target.is_dir():
        target = target / "resume.json"
    if target.suffix != ".json":
        return target
    data = json.loads(target.read_text(encoding="utf-8"))
    if isinstance(data, dict) and isinstance(data.get("checkpoint"), str):
        return target.parent / data["checkpoint"]
    if isinstance(data, dict) and isinstance(data.get("model"), str):
        return target.with_name(data["model"])
    raise ValueError(f"{target.name} names no model (neither `checkpoint` nor `model`)")


class Checkpoints:
    """Model zips with their sidecars, the keep-K rule and `resume.json`; every write atomic."""

    def __init__(self, run_dir: Path, directory: Path, stem: str = "model", keep: int = 3) -> None:
        self.run_dir, self.directory, self.stem, self.keep = run_dir, directory, stem, keep
        self.last: str | None = None  # the newest model saved, relative to the run dir

    def path(self, label: str | int) -> Path:
        return self.directory / f"{self.stem}_{label}.zip"

    def relative(self, path: Path) -> str:
        return Path(os.path.relpath(path, self.run_dir)).as_posix()

    def numbered(self) -> list[Path]:
        """The numbered checkpoints, oldest first."""
        matches = [NUMBERED.match(p.name) for p in self.directory.glob(f"{self.stem}_*.zip")]
        found = sorted((int(m["ticks"]), m[0]) for m in matches if m and m["stem"] == self.stem)
        return [self.directory / name for _, name in found]

    def models(self) -> list[str]:
        return sorted(self.relative(p) for p in self.directory.glob(f"{self.stem}_*.zip"))

    def save(self, model: Any, kind: str, timesteps: int, **extra: Any) -> Path:
        """`model` as `<stem>_<timesteps or kind>.zip`, its sidecar, then `resume.json`."""
        target = self.path(timesteps if kind == "checkpoint" else kind)
        self.directory.mkdir(parents=True, exist_ok=True)
        atomic_write(target, model.save)  # a kill -9 mid-save leaves the previous zip whole
        params, now = hyperparams(model), time.time()
        sidecar = {"model": target.name, "timesteps": timesteps, "kind": kind}
        sidecar.update(ppo_hyperparams=params, saved_at=now, **extra)
        atomic_write_json(target.with_suffix(".json"), sidecar)
        if kind == "checkpoint" and self.keep > 0:  # baseline, latest, final: never removed
            for old in self.numbered()[: -self.keep]:
                for path in (old, old.with_suffix(".json")):
                    path.unlink(missing_ok=True)
        self.last = self.relative(target)
        pointer = {"checkpoint": self.last, "timesteps": timesteps, "kind": kind}
        atomic_write_json(self.run_dir / "resume.json", {**pointer, "ppo_hyperparams": params})
        return target


class Hooks:
    """The callback's behaviour, apart from SB3's `BaseCallback` (which sets `model`,
    `num_timesteps` and `n_calls`), so that it imports, and is tested, without SB3."""

    model: Any
    num_timesteps: int
    n_calls: int

    def __init__(
        self,
        run_dir: str | os.PathLike[str],
        *,
        stem: str = "model",
        checkpoints: str = "checkpoints",
        poll_every: int = 32,
        recovery_every: int = 2000,
        checkpoint_every: int = 20000,
        checkpoint_keep: int = 3,
        control: TrainingControl | None = None,
        read_control: bool = True,
    ) -> None:
        self.run_dir = Path(run_dir)
        self.saver = Checkpoints(self.run_dir, self.run_dir / checkpoints, stem, checkpoint_keep)
        self.poll_every, self.recovery_every = max(1, poll_every), recovery_every
        self.checkpoint_every = checkpoint_every
        self.control = control if control is not None else TrainingControl()
        if not read_control:
            self.control.path = None  # never reads the file: a stop must come as a signal
        self.stop_reason: str | None = None  # "control_file" or a signal's name
        self._start, self._recovered, self._numbered, self._total = 0, 0, 0, 0
        self._began, self._paused = 0.0, 0.0  # fps leaves out the time paused

    def _on_training_start(self) -> None:
        self._total = int(getattr(self.model, "_total_timesteps", 0) or 0)
        self._start = self._recovered = self._numbered = int(self.model.num_timesteps)
        self._began, self._paused = time.monotonic(), self.control.paused_seconds
        if not self.saver.path("baseline").exists():  # a resume keeps the first baseline
            self.saver.save(self.model, "baseline", self._start)

    def _on_rollout_start(self) -> None:
        emit("progress", phase="collect", total_timesteps=self._total)

    def _on_step(self) -> bool:
        ticks = self.num_timesteps
        if self.recovery_every > 0 and ticks - self._recovered >= self.recovery_every:
            self.saver.save(self.model, "latest", ticks)
            self._recovered = ticks
        every = self.checkpoint_every
        if every > 0 and ticks // every > self._numbered // every:
            self.saver.save(self.model, "checkpoint", ticks)
            self._numbered = ticks
        polled = self.stop_reason is None and self.n_calls % self.poll_every == 0
        if polled and self.control.check():  # blocks while paused (and writes the ack file)
            self.stop_reason = "control_file"
        return self.stop_reason is None

    def _on_rollout_end(self) -> None:
        ticks = self.num_timesteps
        line: dict[str, Any] = logger_metrics(self.model.logger.name_to_value)
        line.update(episode_metrics(self.model.ep_info_buffer))
        seconds = time.monotonic() - self._began - (self.control.paused_seconds - self._paused)
        if seconds > 0:
            line["fps"] = round((ticks - self._start) / seconds, 1)
        line.update(timesteps=ticks, total_timesteps=self._total, phase="update")
        emit("progress", **line)

    def _on_training_end(self) -> None:
        """learn() finished or was stopped: the final model, which resume.json then names."""
        ticks, stopped = self.num_timesteps, self.stop_reason is not None
        final = self.saver.relative(self.saver.path("final"))
        files = sorted({*self.saver.models(), final})
        self.saver.save(
            self.model,
            "final",
            ticks,
            stopped=stopped,
            stop_reason=self.stop_reason,
            checkpoint_files=files,
            recovery_model=final,
        )
        emit("stopped" if stopped else "done", timesteps=ticks, checkpoint=final)

    def failed(self, model: Any, exc: BaseException) -> None:
        """An exception in learn(): an emergency checkpoint, then `training_failure.json`."""
        ticks = int(getattr(model, "num_timesteps", 0) or 0)
        try:
            recovery: str | None = self.saver.relative(
                self.saver.save(model, "emergency", ticks, error=type(exc).__name__)
            )
        except Exception as problem:  # keep the last good checkpoint as the way back
            print(f"emergency checkpoint failed: {problem!r}", file=sys.stderr, flush=True)
            recovery = self.saver.last
        failure = {"error": type(exc).__name__, "message": str(exc), "timesteps": ticks}
        failure.update(recovery_checkpoint=recovery, at=time.time())
        atomic_write_json(self.run_dir / "training_failure.json", failure)
        emit("failed", error=type(exc).__name__, timesteps=ticks, recovery_checkpoint=recovery)


@functools.cache
def callback_class() -> type[Any]:
    """`RelaxCallback`: `Hooks` on SB3's `BaseCallback` (SB3 imported on the first call)."""
    from stable_baselines3.common.callbacks import BaseCallback

    class RelaxCallback(Hooks, BaseCallback):
        __doc__ = Hooks.__doc__

        def __init__(self, run_dir: str | os.PathLike[str], **options: Any) -> None:
            BaseCallback.__init__(self, verbose=0)
            Hooks.__init__(self, run_dir, **options)

    return RelaxCallback


def __getattr__(name: str) -> Any:
    if name == "RelaxCallback":
        return callback_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def hooks_in(callback: Any) -> Hooks:
    """Our callback in `callback` (itself, or inside a list or SB3's CallbackList)."""
    inner = getattr(callback, "callbacks", callback if isinstance(callback, list) else [])
    for found in (callback, *inner):
        if isinstance(found, Hooks):
            return found
    raise TypeError("learn() needs a RelaxCallback (alone, or in a list or CallbackList)")


@contextlib.contextmanager
def stop_on_signals(hooks: Hooks) -> Iterator[None]:
    """SIGTERM / SIGINT during learn(): a graceful stop at the next step (the fallback for a
    host that cannot write the control file); a second one interrupts at once."""

    def handler(signum: int, frame: Any) -> None:
        if hooks.stop_reason is not None:
            raise KeyboardInterrupt
        hooks.stop_reason = signal.Signals(signum).name

    main = threading.current_thread() is threading.main_thread()  # else signals cannot be set
    wanted = (signal.SIGTERM, signal.SIGINT) if main else ()
    previous = {s: signal.signal(s, handler) for s in wanted}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def learn(model: Any, total_timesteps: int, callback: Any, **kwargs: Any) -> Any:
    """`model.learn(...)`; on an exception inside it: the emergency checkpoint, `resume.json`
    and `training_failure.json`, then the exception goes on (a callback cannot catch it)."""
    hooks = hooks_in(callback)
    with stop_on_signals(hooks):
        try:
            return model.learn(total_timesteps, callback=callback, **kwargs)
        except Exception as exc:
            hooks.failed(model, exc)
            raise


def resume(
    path: str | os.PathLike[str],
    env: Any,
    requested: Mapping[str, Any] | None = None,
    algorithm: Any = None,
    **load_kwargs: Any,
) -> Any:
    """The model at `path` (see `model_path`), to continue with `reset_num_timesteps=False`,
    with the checkpoint's hyperparameters: a line names those that override `requested`."""
    if algorithm is None:
        from stable_baselines3 import PPO

        algorithm = PPO
    target = model_path(path)
    model = algorithm.load(os.fspath(target), env=env, **load_kwargs)
    changed = overridden(requested or {}, hyperparams(model))
    if changed:
        emit("hyperparams_from_checkpoint", checkpoint=target.name, overridden=changed)
    emit("resumed", model=target.name, timesteps=int(model.num_timesteps))
    return model
