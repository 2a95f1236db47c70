"""`rollouts.integrations.sb3` without stable-baselines3: it imports in a venv without the sb3
extra, and what does not need SB3 (the helpers, the checkpoint rules, the callback's hooks
driven by a stand-in model) works. The real library is driven in `tests/sb3/`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rollouts.control import TrainingControl, ack_path, write_control
from rollouts.integrations import sb3
from tests.support.servers import REPO_ROOT

BLOCKED = """
import sys
for name in ("stable_baselines3", "torch", "gymnasium"):
    sys.modules[name] = None  # `import name` now raises ImportError, as without the extra
import rollouts.integrations.sb3 as sb3
assert sb3.logger_metrics({"train/approx_kl": 0.5}) == {"approx_kl": 0.5}
try:
    sb3.RelaxCallback
except ImportError:
    print("callback: ImportError")
loaded = sorted(n for n in ("stable_baselines3", "torch") if sys.modules.get(n) is not None)
print("loaded:", loaded)
"""


def test_it_imports_without_stable_baselines3_and_asks_for_it_only_when_used():
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED], cwd=REPO_ROOT, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["callback: ImportError", "loaded: []"]


class Schedule:
    """What SB3 keeps a constant hyperparameter as (a callable of the progress remaining)."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __call__(self, progress_remaining: float) -> float:
        return self.value


class FakeModel:
    """The parts of an SB3 model the hooks use; `save` writes a stand-in zip."""

    def __init__(self, fail_save: bool = False) -> None:
        self.num_timesteps = 0
        self._total_timesteps = 1000
        self.n_steps, self.batch_size, self.learning_rate = 64, 32, 3e-4
        self.clip_range = Schedule(0.2)
        self.logger = SimpleNamespace(name_to_value={"train/approx_kl": 0.02, "train/loss": 1.5})
        self.ep_info_buffer = [{"r": 10.0, "l": 10, "t": 0.1}, {"r": 20.0, "l": 20, "t": 0.2}]
        self.fail_save = fail_save

    def save(self, file: Any) -> None:
        file.write(b"PK\x03\x04 half a zip")
        if self.fail_save:
            raise OSError("disk full")
        file.write(f" at {self.num_timesteps}".encode())


def test_the_helpers_read_sb3_values_as_plain_json():
    values = {"train/approx_kl": 0.5, "train/n_updates": 10, "rollout/x": float("nan"), "s": "a"}
    assert sb3.logger_metrics(values) == {"approx_kl": 0.5, "n_updates": 10.0}
    assert sb3.episode_metrics([{"r": 1.0, "l": 2}, {"r": 3.0, "l": 4}]) == {
        "ep_rew_mean": 2.0,
        "ep_len_mean": 3.0,
    }
    assert sb3.episode_metrics(None) == {}
    params = sb3.hyperparams(FakeModel())
    assert params == {"n_steps": 64, "batch_size": 32, "learning_rate": 3e-4, "clip_range": 0.2}
    assert sb3.overridden({"n_steps": 128, "learning_rate": 0.0003, "gamma": 0.9}, params) == {
        "n_steps": {"requested": 128, "checkpoint": 64}
    }


def test_model_path_follows_a_resume_json_a_sidecar_or_a_run_directory(tmp_path):
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "resume.json").write_text('{"checkpoint": "checkpoints/m_latest.zip"}')
    (tmp_path / "checkpoints" / "m_64.json").write_text('{"model": "m_64.zip"}')
    assert sb3.model_path(tmp_path) == tmp_path / "checkpoints" / "m_latest.zip"
    assert sb3.model_path(tmp_path / "resume.json") == tmp_path / "checkpoints" / "m_latest.zip"
    assert sb3.model_path(tmp_path / "checkpoints" / "m_64.json") == (
        tmp_path / "checkpoints" / "m_64.zip"
    )
    assert sb3.model_path("a/b.zip") == Path("a/b.zip")
    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(ValueError, match="names no model"):
        sb3.model_path(tmp_path / "other.json")


def test_a_save_that_fails_leaves_the_previous_checkpoint_whole_and_no_temporary_file(tmp_path):
    saver = sb3.Checkpoints(tmp_path, tmp_path / "checkpoints", "m")
    model = FakeModel()
    model.num_timesteps = 64
    saver.save(model, "latest", 64)
    before = (tmp_path / "checkpoints" / "m_latest.zip").read_bytes()
    with pytest.raises(OSError, match="disk full"):
        saver.save(FakeModel(fail_save=True), "latest", 128)
    assert (tmp_path / "checkpoints" / "m_latest.zip").read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == [
        "m_latest.json",
        "m_latest.zip",
    ]
    assert json.loads((tmp_path / "resume.json").read_text())["timesteps"] == 64


def drive(hooks: sb3.Hooks, model: FakeModel, steps: int) -> bool:
    """What SB3's learn() does with a callback, minus the learning: True if it ran them all."""
    for _ in range(steps):
        model.num_timesteps += 1
        hooks.num_timesteps = model.num_timesteps
        hooks.n_calls += 1
        if not hooks._on_step():
            return False
        if model.num_timesteps % model.n_steps == 0:
            hooks._on_rollout_end()
            hooks._on_rollout_start()
    return True


def hooks_on(tmp_path: Path, model: FakeModel, **options: Any) -> sb3.Hooks:
    control = TrainingControl(tmp_path / "control.json")
    hooks = sb3.Hooks(tmp_path / "run", stem="m", control=control, **options)
    hooks.model, hooks.num_timesteps, hooks.n_calls = model, 0, 0
    hooks._on_training_start()
    hooks._on_rollout_start()
    return hooks


def lines(capsys: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_the_hooks_checkpoint_keep_k_and_print_progress_with_the_logger_values(tmp_path, capsys):
    model = FakeModel()
    hooks = hooks_on(tmp_path, model, recovery_every=100, checkpoint_every=128, checkpoint_keep=2)
    assert drive(hooks, model, 640)
    hooks._on_training_end()
    directory = tmp_path / "run" / "checkpoints"
    names = sorted(p.name for p in directory.iterdir())
    stems = ["m_512", "m_640", "m_baseline", "m_final", "m_latest"]  # 128..384: past the last 2
    assert names == sorted(f"{stem}.{ext}" for stem in stems for ext in ("json", "zip"))
    sidecar = json.loads((directory / "m_640.json").read_text())
    assert sidecar["model"] == "m_640.zip" and sidecar["kind"] == "checkpoint"
    assert sidecar["timesteps"] == 640 and sidecar["ppo_hyperparams"]["clip_range"] == 0.2
    resume = json.loads((tmp_path / "run" / "resume.json").read_text())
    assert resume["checkpoint"] == "checkpoints/m_final.zip" and resume["timesteps"] == 640
    final = json.loads((directory / "m_final.json").read_text())
    assert final["stopped"] is False and "checkpoints/m_640.zip" in final["checkpoint_files"]
    said = lines(capsys)
    points = [line for line in said if line["event"] == "progress" and "timesteps" in line]
    assert [p["timesteps"] for p in points] == [64 * n for n in range(1, 11)]
    assert points[0]["approx_kl"] == 0.02 and points[0]["ep_rew_mean"] == 15.0
    assert points[0]["total_timesteps"] == 1000 and points[0]["phase"] == "update"
    assert said[0] == {"event": "progress", "phase": "collect", "total_timesteps": 1000}
    assert said[-1] == {"event": "done", "timesteps": 640, "checkpoint": "checkpoints/m_final.zip"}


def test_a_stop_request_ends_at_a_poll_boundary_and_saves_the_final_model(tmp_path, capsys):
    model = FakeModel()
    hooks = hooks_on(tmp_path, model, poll_every=16)
    assert drive(hooks, model, 40)
    write_control(tmp_path / "control.json", stop=True)
    assert not drive(hooks, model, 100)
    assert model.num_timesteps == 48  # the next multiple of poll_every
    hooks._on_training_end()
    final = json.loads((tmp_path / "run" / "checkpoints" / "m_final.json").read_text())
    assert (final["stopped"], final["stop_reason"], final["timesteps"]) == (
        True,
        "control_file",
        48,
    )
    assert lines(capsys)[-1]["event"] == "stopped"


def test_without_the_control_file_nothing_is_read(tmp_path):
    write_control(tmp_path / "control.json", pause=True)
    model = FakeModel()
    hooks = hooks_on(tmp_path, model, poll_every=1, read_control=False)
    assert drive(hooks, model, 10)  # a pause would have blocked here
    assert not ack_path(tmp_path / "control.json").exists()


def test_a_failure_saves_an_emergency_checkpoint_then_training_failure_json(tmp_path, capsys):
    model = FakeModel()
    hooks = hooks_on(tmp_path, model)
    drive(hooks, model, 30)
    hooks.failed(model, RuntimeError("boom"))
    run = tmp_path / "run"
    failure = json.loads((run / "training_failure.json").read_text())
    assert failure["error"] == "RuntimeError" and failure["message"] == "boom"
    assert failure["timesteps"] == 30
    assert failure["recovery_checkpoint"] == "checkpoints/m_emergency.zip"
    assert (
        json.loads((run / "resume.json").read_text())["checkpoint"]
        == failure["recovery_checkpoint"]
    )
    assert lines(capsys)[-1]["event"] == "failed"
    # the emergency save failing too: the last good checkpoint is the way back
    hooks.failed(FakeModel(fail_save=True), ValueError("worse"))
    failure = json.loads((run / "training_failure.json").read_text())
    assert failure["recovery_checkpoint"] == "checkpoints/m_emergency.zip"


def test_learn_needs_the_callback():
    with pytest.raises(TypeError, match="RelaxCallback"):
        sb3.hooks_in([object()])
