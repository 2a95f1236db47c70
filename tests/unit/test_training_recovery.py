"""What "resume from the latest checkpoint" resumes from: `resume.json` when it points at a file
in the run directory, else the newest checkpoint (a dangling or outside pointer is not trusted),
else nothing."""

from __future__ import annotations

import json
import os

import pytest

from rollouts.training.recovery import checkpoints, resume_target
from rollouts.training.specfile import load_spec
from tests.support.servers import REPO_ROOT


@pytest.fixture
def spec():
    return load_spec(REPO_ROOT / "examples" / "demo-train.toml")


def checkpoint(run_dir, name, timesteps, mtime):
    path = run_dir / "checkpoints" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"timesteps": timesteps}))
    os.utime(path, (mtime, mtime))


def pointer(run_dir, target, timesteps=64):
    (run_dir / "resume.json").write_text(json.dumps({"checkpoint": target, "timesteps": timesteps}))


def test_nothing_to_resume_from(spec, tmp_path):
    assert resume_target(spec, tmp_path) is None
    checkpoint(tmp_path, "baseline.json", 0, 1_000)
    assert resume_target(spec, tmp_path) is None  # the baseline is where a run began


def test_the_pointer_wins_when_its_file_is_there(spec, tmp_path):
    checkpoint(tmp_path, "step-5.json", 80, 2_000)  # newer than the pointer's target
    checkpoint(tmp_path, "latest.json", 64, 1_000)
    pointer(tmp_path, "checkpoints/latest.json")
    assert resume_target(spec, tmp_path) == {
        "checkpoint": "checkpoints/latest.json",
        "timesteps": 64,
    }


@pytest.mark.parametrize(
    "target",
    ["checkpoints/gone.json", "../outside.json", "checkpoints/../../outside.json", "/etc/hostname"],
)
def test_a_dangling_or_outside_pointer_falls_back_to_the_newest_checkpoint(spec, tmp_path, target):
    run_dir = tmp_path / "run"
    (tmp_path / "outside.json").write_text("{}")  # exists, but outside the run directory
    checkpoint(run_dir, "baseline.json", 0, 3_000)
    checkpoint(run_dir, "step-5.json", 80, 2_000)
    checkpoint(run_dir, "step-10.json", 160, 2_500)
    pointer(run_dir, target)
    assert resume_target(spec, run_dir) == {
        "checkpoint": "checkpoints/step-10.json",
        "timesteps": 160,
    }


def model(run_dir, stem, timesteps, mtime):
    """An SB3-style checkpoint: the model zip and its sidecar JSON of the same stem."""
    zipped = run_dir / "checkpoints" / f"{stem}.zip"
    zipped.parent.mkdir(parents=True, exist_ok=True)
    zipped.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    checkpoint(run_dir, f"{stem}.json", timesteps, mtime)
    os.utime(zipped, (mtime, mtime))


def test_a_model_and_its_sidecar_are_one_checkpoint_and_the_scan_hands_the_model(spec, tmp_path):
    model(tmp_path, "ppo_baseline", 0, 1_000)
    model(tmp_path, "ppo_2048", 2048, 2_000)
    model(tmp_path, "ppo_4096", 4096, 3_000)
    listed = checkpoints(spec, tmp_path)
    assert listed == [
        {
            "name": "checkpoints/ppo_4096.zip",
            "sidecar": "checkpoints/ppo_4096.json",
            "timesteps": 4096,
            "kind": "checkpoint",
        },
        {
            "name": "checkpoints/ppo_2048.zip",
            "sidecar": "checkpoints/ppo_2048.json",
            "timesteps": 2048,
            "kind": "checkpoint",
        },
        {
            "name": "checkpoints/ppo_baseline.zip",
            "sidecar": "checkpoints/ppo_baseline.json",
            "timesteps": 0,
            "kind": "baseline",
        },
    ]
    # no resume.json: the newest model, never its sidecar, is what --resume gets
    assert resume_target(spec, tmp_path) == {
        "checkpoint": "checkpoints/ppo_4096.zip",
        "timesteps": 4096,
    }


def test_a_json_alone_is_its_own_checkpoint(spec, tmp_path):
    checkpoint(tmp_path, "latest.json", 64, 1_000)
    assert checkpoints(spec, tmp_path) == [
        {"name": "checkpoints/latest.json", "sidecar": None, "timesteps": 64, "kind": "latest"}
    ]
