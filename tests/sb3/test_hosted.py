"""A real stable-baselines3 PPO (`examples/sb3_ppo.py` through `examples/sb3-ppo.toml`) hosted
by the viewer's own code: the job manager in this process, then `manage.py train` as users run
it. Start, SB3's table metrics on the points, a pause shown as paused only once acknowledged,
resume, a stop with the final model saved, `resume_latest` from that checkpoint, a forced kill of
a script that ignores the control file, a restarted viewer that accepts the next start."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rollouts.control import ack_path
from rollouts.training.manager import Manager
from rollouts.training.specfile import load_spec
from tests.sb3.conftest import TINY, write_sb3_spec
from tests.support.servers import get_json, process_group_members, run_visualize
from tests.support.training import post_train, stopped_after, until

pytestmark = [pytest.mark.sb3, pytest.mark.e2e]

FIRST_POINTS = 120.0  # a child imports torch and SB3 first (several seconds on a busy machine)
MODEL = "ppo_cartpole"


def acknowledged(run_dir: Path) -> bool:
    try:
        return json.loads(ack_path(run_dir / "control.json").read_text()).get("paused") is True
    except (OSError, ValueError):
        return False


def with_diagnostics(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    """The points that carry SB3's table metrics (the update's diagnostics)."""
    return [
        p
        for p in snapshot["metrics"]["points"]
        if {"approx_kl", "explained_variance", "value_loss"} <= set(p["metrics"])
    ]


def check_checkpoints(snapshot: dict[str, Any]) -> None:
    """One entry per model + sidecar, each named by its model zip."""
    entries = snapshot["recovery"]["checkpoints"]
    assert entries, "no checkpoint listed"
    for entry in entries:
        assert entry["name"].endswith(".zip"), entry
        assert entry["sidecar"] == entry["name"][: -len(".zip")] + ".json", entry
    kinds = {entry["kind"] for entry in entries}
    assert {"baseline", "latest"} <= kinds


def test_a_real_sb3_run_under_the_job_manager_stop_then_resume_latest(tmp_path):
    manager = Manager(load_spec(write_sb3_spec(tmp_path)))
    job = manager.start({**TINY, "total_timesteps": 1_000_000})
    run_dir = job.run_dir
    with stopped_after(job, 40):
        until(lambda: with_diagnostics(manager.snapshot({})), FIRST_POINTS, "SB3 table metrics")
        snapshot = manager.snapshot({})
        assert snapshot["progress"]["total"] == 1_000_000
        assert all(p["attempt"] == 0 for p in snapshot["metrics"]["points"])
        assert {"ep_rew_mean", "fps"} <= set(snapshot["metrics"]["points"][-1]["metrics"])

        job.pause()

        def paused() -> bool:
            status = manager.snapshot({})["job"]["status"]
            assert status in ("running", "pausing", "paused"), status
            if status == "paused":  # only once the script has acknowledged
                assert acknowledged(run_dir)
            return status == "paused"

        until(paused, 30, "paused")
        time.sleep(0.5)  # what the script printed before it blocked is read by now
        frozen = manager.snapshot({})["progress"]["timesteps"]
        time.sleep(1.0)
        assert manager.snapshot({})["progress"]["timesteps"] == frozen
        job.resume()
        until(lambda: manager.snapshot({})["progress"]["timesteps"] > frozen, 30, "progress")
        assert manager.snapshot({})["job"]["status"] == "running"
        job.stop()
        assert job.wait(40)
    stopped = manager.snapshot({})
    record = stopped["job"]
    assert (record["status"], record["exit_code"], record["force_killed"]) == ("exited", 0, False)
    assert record["outcome"] == "stopped"
    final = json.loads((run_dir / "checkpoints" / f"{MODEL}_final.json").read_text())
    assert final["stopped"] is True and final["stop_reason"] == "control_file"
    stopped_at = final["timesteps"]
    assert stopped["recovery"]["resume"]["checkpoint"] == f"checkpoints/{MODEL}_final.zip"
    check_checkpoints(stopped)

    resumed = manager.start({"total_timesteps": 128}, resume_latest=True)
    with stopped_after(resumed, 40):
        assert resumed.run_dir == run_dir
        assert resumed.record["command"][-2:] == [
            "--resume",
            f"runs/{run_dir.name}/checkpoints/{MODEL}_final.zip",
        ]
        assert resumed.wait(FIRST_POINTS)
    snapshot = manager.snapshot({"log_tail": 4000})
    assert (snapshot["job"]["status"], snapshot["job"]["exit_code"]) == ("exited", 0)
    assert snapshot["job"]["outcome"] == "finished"
    attempts = snapshot["metrics"]["attempts"]
    assert [a["index"] for a in attempts] == [0, 1]
    assert attempts[1]["start_timesteps"] == stopped_at
    second = [p["timesteps"] for p in snapshot["metrics"]["points"] if p["attempt"] == 1]
    assert second and min(second) > stopped_at and max(second) == stopped_at + 128
    assert snapshot["progress"]["timesteps"] == stopped_at + 128
    assert snapshot["progress"]["total"] == stopped_at + 128
    lines = snapshot["log"]["lines"]
    said = [line["text"] for line in lines if line["text"].startswith('{"event": "resumed"')]
    assert len(said) == 1 and f'"timesteps": {stopped_at}' in said[0]  # each line once
    assert len({line["n"] for line in lines}) == len(lines)


def test_a_script_ignoring_the_control_file_is_killed_and_leaves_a_checkpoint(tmp_path):
    from stable_baselines3 import PPO

    manager = Manager(load_spec(write_sb3_spec(tmp_path, grace=2.0)))
    job = manager.start({**TINY, "total_timesteps": 1_000_000, "ignore_control": True})
    pgid = job.record["pid"]
    latest = job.run_dir / "checkpoints" / f"{MODEL}_latest.zip"
    with stopped_after(job, 40):
        until(latest.exists, FIRST_POINTS, "the rolling recovery checkpoint")
        began = time.monotonic()
        job.stop()
        assert job.wait(40)
        assert time.monotonic() - began >= 2.0  # the grace period first
    snapshot = manager.snapshot({})
    record = snapshot["job"]
    assert (record["status"], record["force_killed"]) == ("killed", True)
    assert record["outcome"] == "forced"
    forced = snapshot["recovery"]["forced_stop"]
    checkpoint = forced["recovery"]["checkpoint"]
    assert checkpoint.endswith(".zip"), forced
    model = PPO.load(job.run_dir / checkpoint, device="cpu")
    assert model.num_timesteps == forced["recovery"]["timesteps"] > 0
    until(lambda: process_group_members(pgid) == [], 10, "an empty process group")


def api(server: Any, name: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    if body is None:
        return get_json(server.url(f"/api/train/{name}?log_tail=4000"))
    return post_train(server, name, body)


def test_through_manage_py_train_then_a_restarted_viewer_resumes_from_the_checkpoint(tmp_path):
    spec = write_sb3_spec(tmp_path)
    launcher = (sys.executable, "manage.py", "train")
    with run_visualize(spec, "--no-browser", launcher=launcher) as server:

        def state() -> Any:
            return api(server, "state")[1]

        status, started = api(server, "start", {"values": {**TINY, "total_timesteps": 1_000_000}})
        assert status == 200, started
        run_dir = tmp_path / "runs" / started["job"]["id"]
        until(lambda: with_diagnostics(state()), FIRST_POINTS, "SB3 table metrics")
        assert api(server, "start", {})[0] == 409  # one job at a time
        assert api(server, "pause", {})[0] == 200

        def paused() -> bool:
            status = state()["job"]["status"]
            if status == "paused":
                assert acknowledged(run_dir)
            return status == "paused"

        until(paused, 30, "paused")
        assert api(server, "resume", {})[0] == 200
        until(lambda: state()["job"]["status"] == "running", 30, "running again")
        assert api(server, "stop", {})[0] == 200
        until(lambda: state()["job"]["status"] == "exited", 40, "a graceful stop")
        snapshot = state()
        assert snapshot["job"]["outcome"] == "stopped"
        assert snapshot["recovery"]["resume"]["checkpoint"] == f"checkpoints/{MODEL}_final.zip"
        check_checkpoints(snapshot)
    stopped_at = json.loads((run_dir / "checkpoints" / f"{MODEL}_final.json").read_text())[
        "timesteps"
    ]

    with run_visualize(spec, "--no-browser", launcher=launcher) as server:
        assert api(server, "state")[1]["job"]["status"] == "exited"
        body = {"values": {"total_timesteps": 128}, "resume_latest": True}
        status, started = api(server, "start", body)
        assert status == 200, started  # a restarted viewer accepts the next start
        until(
            lambda: api(server, "state")[1]["job"]["status"] in ("exited", "failed"),
            FIRST_POINTS,
            "the resumed run to finish",
        )
        snapshot = api(server, "state")[1]
        assert (snapshot["job"]["status"], snapshot["job"]["outcome"]) == ("exited", "finished")
        assert snapshot["metrics"]["attempts"][-1]["start_timesteps"] == stopped_at
        last = snapshot["metrics"]["points"][-1]
        assert (last["timesteps"], last["attempt"]) == (stopped_at + 128, 1)
