"""The "any Python loop" recipe of docs/training.md, copied as written (`train_loop.py` and
`loop.toml`), hosted by the job manager with a real child: progress, a pause the loop
acknowledges, a stop it obeys, and a resume from the `resume.json` it keeps."""

from __future__ import annotations

import pytest

from rollouts.training.manager import Manager
from rollouts.training.specfile import load_spec
from tests.support.recipes import write_recipes
from tests.support.training import until

pytestmark = pytest.mark.e2e


def test_the_plain_loop_recipe_runs_pauses_stops_and_resumes(tmp_path):
    write_recipes(tmp_path, "train_loop.py", "loop.toml")
    manager = Manager(load_spec(tmp_path / "loop.toml"))
    job = manager.start({})
    until(lambda: len(manager.snapshot({})["metrics"]["points"]) >= 3, what="three points")
    assert manager.snapshot({})["progress"]["total"] == 64 * 200
    job.pause()
    until(lambda: job.status() == "paused", what="the loop's ack")
    job.resume()
    job.stop()
    assert job.wait(20)
    stopped = manager.snapshot({})
    assert stopped["job"]["outcome"] == "stopped" and stopped["job"]["exit_code"] == 0
    reached = stopped["recovery"]["resume"]["timesteps"]
    resumed = manager.start({"steps": reached // 64 + 3}, resume_latest=True)
    assert resumed.wait(20)
    final = manager.snapshot({})
    assert final["job"]["outcome"] == "finished"
    assert [a["start_timesteps"] for a in final["metrics"]["attempts"]] == [0, reached]
    own = [p["timesteps"] for p in final["metrics"]["points"] if p["attempt"] == 1]
    assert own == [reached + 64, reached + 128, reached + 192]
