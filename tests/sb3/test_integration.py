"""`rollouts.integrations.sb3` with the real stable-baselines3 PPO, in this process: the saves
(atomic, sidecars, keep-K, `resume.json` naming a zip that `PPO.load` opens), the progress lines
with the logger's values, a resume, the emergency checkpoint on an exception raised inside
learn(), and pause / stop through the control file (learn() in a thread)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rollouts.control import TrainingControl, ack_path, write_control
from tests.support.training import until

pytestmark = pytest.mark.sb3


def tiny_ppo(env: Any = "CartPole-v1") -> Any:
    from stable_baselines3 import PPO

    return PPO(
        "MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=2, seed=0, device="cpu", verbose=1
    )


def progress_lines(out: str) -> list[dict[str, Any]]:
    found = [json.loads(line) for line in out.splitlines() if line.startswith('{"event"')]
    return [line for line in found if line["event"] == "progress" and "timesteps" in line]


def test_checkpoints_keep_k_resume_json_and_progress_with_sb3s_values(tmp_path, capsys):
    import gymnasium as gym
    from stable_baselines3 import PPO

    from rollouts.integrations import sb3

    model = tiny_ppo()
    callback = sb3.RelaxCallback(
        tmp_path,
        stem="ppo",
        recovery_every=100,
        checkpoint_every=128,
        checkpoint_keep=2,
        read_control=False,
    )
    sb3.learn(model, 640, callback=callback)
    out = capsys.readouterr().out
    directory = tmp_path / "checkpoints"
    names = sorted(p.name for p in directory.iterdir())
    stems = ["ppo_512", "ppo_640", "ppo_baseline", "ppo_final", "ppo_latest"]
    assert names == sorted(f"{s}.{ext}" for s in stems for ext in ("json", "zip"))  # no temp file
    for stem in stems:
        sidecar = json.loads((directory / f"{stem}.json").read_text())
        assert sidecar["model"] == f"{stem}.zip"
        assert sidecar["ppo_hyperparams"]["n_steps"] == 64
        assert sidecar["ppo_hyperparams"]["clip_range"] == 0.2
        assert (
            PPO.load(directory / sidecar["model"], device="cpu").num_timesteps
            == (sidecar["timesteps"])
        )
    resume = json.loads((tmp_path / "resume.json").read_text())
    assert resume["checkpoint"] == "checkpoints/ppo_final.zip" and resume["timesteps"] == 640
    points = progress_lines(out)
    assert [p["timesteps"] for p in points] == [64 * n for n in range(1, 11)]
    assert all(p["total_timesteps"] == 640 and p["phase"] == "update" for p in points)
    assert "approx_kl" not in points[0]  # no update yet at the first rollout's end
    for key in ("approx_kl", "explained_variance", "value_loss", "entropy_loss", "fps"):
        assert all(key in p for p in points[1:]), key
    assert "ep_rew_mean" in points[-1]
    assert out.count("| train/") == 9  # SB3's own tables went on as before

    # a resume: the checkpoint's hyperparameters win over the command line's, and say so
    env = gym.make("CartPole-v1")
    resumed = sb3.resume(directory / "ppo_512.json", env, {"n_steps": 128}, device="cpu")
    assert resumed.num_timesteps == 512
    again = sb3.RelaxCallback(tmp_path, stem="ppo", read_control=False)
    sb3.learn(resumed, 128, callback=again, reset_num_timesteps=False)
    out = capsys.readouterr().out
    said = [json.loads(line) for line in out.splitlines() if line.startswith('{"event"')]
    assert said[0] == {
        "event": "hyperparams_from_checkpoint",
        "checkpoint": "ppo_512.zip",
        "overridden": {"n_steps": {"requested": 128, "checkpoint": 64}},
    }
    assert said[1] == {"event": "resumed", "model": "ppo_512.zip", "timesteps": 512}
    points = progress_lines(out)
    assert [(p["timesteps"], p["total_timesteps"]) for p in points] == [(576, 640), (640, 640)]
    assert json.loads((directory / "ppo_baseline.json").read_text())["timesteps"] == 0  # kept


def test_an_exception_inside_learn_saves_an_emergency_checkpoint_then_re_raises(tmp_path):
    import gymnasium as gym
    from stable_baselines3 import PPO

    from rollouts.integrations import sb3

    class Breaks(gym.Wrapper):
        def __init__(self, env: Any) -> None:
            super().__init__(env)
            self.steps = 0

        def step(self, action: Any) -> Any:
            self.steps += 1
            if self.steps == 150:
                raise RuntimeError("the simulator crashed")
            return self.env.step(action)

    model = tiny_ppo(Breaks(gym.make("CartPole-v1")))
    callback = sb3.RelaxCallback(tmp_path, stem="ppo", read_control=False)
    with pytest.raises(RuntimeError, match="the simulator crashed"):
        sb3.learn(model, 640, callback=callback)
    failure = json.loads((tmp_path / "training_failure.json").read_text())
    assert failure["error"] == "RuntimeError" and failure["message"] == "the simulator crashed"
    assert failure["timesteps"] == 149  # the step that raised was not counted
    assert failure["recovery_checkpoint"] == "checkpoints/ppo_emergency.zip"
    resume = json.loads((tmp_path / "resume.json").read_text())
    assert resume["checkpoint"] == failure["recovery_checkpoint"]
    sidecar = json.loads((tmp_path / "checkpoints" / "ppo_emergency.json").read_text())
    assert (sidecar["kind"], sidecar["error"], sidecar["timesteps"]) == (
        "emergency",
        "RuntimeError",
        149,
    )
    assert PPO.load(tmp_path / resume["checkpoint"], device="cpu").num_timesteps == 149


def acknowledged(control: Path) -> bool:
    try:
        return json.loads(ack_path(control).read_text()).get("paused") is True
    except (OSError, ValueError):
        return False


def test_a_pause_blocks_at_a_step_boundary_and_a_stop_ends_learn_with_the_model_saved(tmp_path):
    from stable_baselines3 import PPO

    from rollouts.integrations import sb3

    control = tmp_path / "control.json"
    callback = sb3.RelaxCallback(
        tmp_path / "run",
        stem="ppo",
        poll_every=16,
        recovery_every=0,
        checkpoint_every=0,
        control=TrainingControl(control),
    )
    model = tiny_ppo()
    failures: list[BaseException] = []

    def train() -> None:
        try:
            sb3.learn(model, 1_000_000, callback=callback)
        except BaseException as exc:
            failures.append(exc)

    thread = threading.Thread(target=train, daemon=True)
    thread.start()
    try:
        until(lambda: model.num_timesteps >= 100, timeout=60, what="training")
        write_control(control, pause=True)
        until(lambda: acknowledged(control), timeout=30, what="the ack of the pause")
        frozen = model.num_timesteps
        assert frozen % 16 == 0  # a poll boundary
        time.sleep(0.6)
        assert model.num_timesteps == frozen  # blocked in TrainingControl.check
        write_control(control, pause=False)
        until(lambda: model.num_timesteps > frozen, timeout=30, what="training again")
        assert not acknowledged(control)
    finally:
        write_control(control, stop=True)
        thread.join(60)
    assert not thread.is_alive() and failures == []
    stopped_at = model.num_timesteps
    assert stopped_at % 16 == 0 and stopped_at < 1_000_000
    final = json.loads((tmp_path / "run" / "checkpoints" / "ppo_final.json").read_text())
    assert (final["stopped"], final["stop_reason"], final["timesteps"]) == (
        True,
        "control_file",
        stopped_at,
    )
    assert final["recovery_model"] == "checkpoints/ppo_final.zip"
    resume = json.loads((tmp_path / "run" / "resume.json").read_text())
    assert resume["checkpoint"] == "checkpoints/ppo_final.zip"
    assert PPO.load(tmp_path / "run" / resume["checkpoint"]).num_timesteps == stopped_at
