"""The stable-baselines3 recipe of docs/training.md, copied as written (`train_ppo.py` and
`ppo.toml`), hosted with the real library: SB3's diagnostics on the points, the total from the
spec's field, a stop that saves the final model, and a resume from it."""

from __future__ import annotations

import pytest

from rollouts.training.manager import Manager
from rollouts.training.specfile import load_spec
from tests.support.recipes import write_recipes
from tests.support.training import stopped_after, until

pytestmark = [pytest.mark.sb3, pytest.mark.e2e]


def test_the_sb3_recipe_runs_stops_with_its_model_and_resumes(tmp_path):
    write_recipes(tmp_path, "train_ppo.py", "ppo.toml")
    manager = Manager(load_spec(tmp_path / "ppo.toml"))
    job = manager.start({})
    with stopped_after(job, 60):
        until(
            lambda: any(
                "approx_kl" in p["metrics"] for p in manager.snapshot({})["metrics"]["points"]
            ),
            timeout=120,
            what="SB3's diagnostics on a point",
        )
        progress = manager.snapshot({})["progress"]
        assert progress["total"] == 50000 and 0 < progress["fraction"] < 1
        job.stop()
        assert job.wait(60)
    stopped = manager.snapshot({})
    assert stopped["job"]["outcome"] == "stopped"
    assert stopped["recovery"]["resume"]["checkpoint"] == "checkpoints/model_final.zip"
    assert (job.run_dir / "checkpoints" / "model_final.zip").is_file()
    reached = stopped["recovery"]["resume"]["timesteps"]
    resumed = manager.start({"total_timesteps": 256}, resume_latest=True)
    with stopped_after(resumed, 60):
        assert resumed.wait(120)
    final = manager.snapshot({})
    assert final["job"]["outcome"] == "finished", final["log"]["lines"][-5:]
    own = [p["timesteps"] for p in final["metrics"]["points"] if p["attempt"] == 1]
    assert own and own[-1] == reached + 256
