"""The job's TensorBoard directory as the training page's third progress source (issue 17):
a real job (a child Python writing an event file with tensorboardX, as SB3's logger does, at
its timesteps) hosted by a `Manager`, and the source's rules on files written here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rollouts.training.convergence import convergence
from rollouts.training.manager import Manager
from rollouts.training.progress import Progress
from rollouts.training.scalars import TensorBoardSource
from rollouts.training.specfile import load_spec, parse_spec
from tests.support.events import writer
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

TICKS = [2048 * n for n in range(1, 7)]
REWARDS = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
KL = [0.01, 0.01, 0.02, 0.02, 0.03, 0.09]  # the latest is above the rule's 0.05


def write_sb3_like(board: Path, upto: int = len(TICKS)) -> None:
    w = writer(board)
    for tick, reward, kl in list(zip(TICKS, REWARDS, KL, strict=True))[:upto]:
        w.add_scalar("rollout/ep_rew_mean", reward, tick)
        w.add_scalar("train/approx_kl", kl, tick)
        w.add_scalar("train/explained_variance", 0.5, tick)
    w.close()


def spec_in(tmp_path: Path, tensorboard: str | None = "tb") -> Any:
    job: dict[str, Any] = {"command": ["python", "x.py"]}
    if tensorboard is not None:
        job["tensorboard"] = tensorboard
    return parse_spec({"job": job}, tmp_path / "spec.toml")


def test_each_logged_step_becomes_a_point_once_a_later_one_came(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "1"
    write_sb3_like(run_dir / "tb")
    source, progress = TensorBoardSource(spec_in(tmp_path), run_dir), Progress()
    assert source.feed(progress) == len(TICKS) - 1  # the newest step may still get tags
    assert [p.timesteps for p in progress.snapshot()] == TICKS[:-1]
    assert source.feed(progress, final=True) == 1  # the job ended: the last one too
    points = progress.snapshot()
    assert [p.metrics["ep_rew_mean"] for p in points] == REWARDS
    assert {p.source for p in points} == {"tensorboard"}
    reading = convergence(points, "ep_rew_mean")
    assert reading["reading"] == "kl too large"
    assert reading["numbers"]["approx_kl"] == pytest.approx(0.09)
    found = source.source()
    assert found is not None and found["directory"] == "tb" and found["found"]


def test_stdout_keeps_its_ticks_and_nothing_is_named_nothing_is_read(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "1"
    write_sb3_like(run_dir / "tb")
    progress = Progress()
    progress.feed('{"event": "progress", "timesteps": 2048, "ep_rew_mean": 42.0}')
    TensorBoardSource(spec_in(tmp_path), run_dir).feed(progress, final=True)
    points = progress.snapshot()
    assert points[0].source == "json" and points[0].metrics["ep_rew_mean"] == 42.0
    assert [p.timesteps for p in points] == TICKS
    unnamed = TensorBoardSource(spec_in(tmp_path, None), run_dir)
    assert unnamed.feed(Progress(), final=True) == 0 and unnamed.source() is None


def test_a_named_directory_linking_out_of_the_run_is_not_read(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "1"
    run_dir.mkdir(parents=True)
    write_sb3_like(tmp_path / "elsewhere")
    (run_dir / "tb").symlink_to(tmp_path / "elsewhere")
    source = TensorBoardSource(spec_in(tmp_path), run_dir)
    assert source.feed(Progress(), final=True) == 0
    assert source.source() == {
        "found": False,
        "directory": "tb",
        "files": [],
        "files_total": 0,
        "message": None,
    }


TRAINER = """
import sys
from pathlib import Path
sys.path.insert(0, {repo!r})
from tests.support.events import writer
w = writer(Path(sys.argv[1]) / "tb")
for n, reward in enumerate([1.0, 2.0, 3.0, 4.0], start=1):
    w.add_scalar("rollout/ep_rew_mean", reward, 1000 * n)
    w.add_scalar("train/approx_kl", 0.2, 1000 * n)
w.close()
"""


def test_a_hosted_job_s_tensorboard_directory_feeds_the_training_state(tmp_path: Path) -> None:
    repo = str(Path(__file__).resolve().parents[2])
    (tmp_path / "trainer.py").write_text(TRAINER.format(repo=repo))
    (tmp_path / "spec.toml").write_text(
        '[job]\ncommand = ["{python}", "trainer.py", "{run_dir}"]\ntensorboard = "tb"\n'
        'main_metric = "ep_rew_mean"\n'
    )
    manager = Manager(load_spec(tmp_path / "spec.toml"))
    job = manager.start({})
    job.wait(60)
    wait_for(
        lambda: manager.snapshot({})["job"]["status"],
        "the job's end read by the manager",
        until=lambda status: status != "running",
    )
    state = manager.snapshot({})
    assert [p["timesteps"] for p in state["metrics"]["points"]] == [1000, 2000, 3000, 4000]
    assert [p["metrics"]["ep_rew_mean"] for p in state["metrics"]["points"]] == [1.0, 2.0, 3.0, 4.0]
    assert state["reading"]["reading"] == "kl too large"
    assert state["tensorboard"]["directory"] == "tb" and state["tensorboard"]["found"]
