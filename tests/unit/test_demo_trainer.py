"""The demo trainer's pure parts: curves, records, the SB3 table, its files; and one loop in
this process (no sleeping) for what the loop decides. The child processes are in
tests/e2e/test_demo_trainer.py."""

from __future__ import annotations

import io
import json
from itertools import pairwise
from pathlib import Path

import pytest

from rollouts.control import TrainingControl, read_control, write_control
from rollouts.demo_trainer import REGIMES, Options, Trainer, metrics
from rollouts.demo_trainer.curves import KL_LIMIT
from rollouts.demo_trainer.files import RunFiles, atomic_write, load_resume
from rollouts.demo_trainer.samples import eval_records, mean_reward, train_records
from rollouts.demo_trainer.table import format_table
from rollouts.store.reading import trend_reading


def test_metrics_are_a_function_of_regime_timesteps_and_seed():
    for regime in REGIMES:
        assert metrics(regime, 160, seed=3) == metrics(regime, 160, seed=3)
        assert metrics(regime, 160, seed=3) != metrics(regime, 160, seed=4)
        assert metrics(regime, 160) != metrics(regime, 176)
    with pytest.raises(ValueError, match="regime must be one of"):
        metrics("sideways", 0)


def test_the_regimes_rise_stay_flat_or_push_the_kl_past_its_limit():
    def series(regime: str, key: str) -> list[float]:
        return [metrics(regime, t)[key] for t in range(16, 16 * 41, 16)]

    rising, flat = series("rising", "ep_rew_mean"), series("plateau", "ep_rew_mean")
    assert rising[-1] - rising[0] > 0.2 and all(b > a - 0.03 for a, b in pairwise(rising))
    assert max(flat) - min(flat) < 0.1 and abs(sum(flat[:20]) - sum(flat[20:])) / 20 < 0.02
    assert max(series("rising", "approx_kl")) < KL_LIMIT
    assert max(series("plateau", "approx_kl")) < KL_LIMIT
    assert series("kl", "approx_kl")[-1] > KL_LIMIT > series("kl", "approx_kl")[0]


@pytest.mark.parametrize("seed", range(4))
def test_the_trends_reading_names_the_rising_and_the_plateau_regimes(seed):
    # 20 steps of 16 samples: the demo-train defaults. The KL regime is read from approx_kl.
    def rewards(regime: str) -> list[float]:
        return [metrics(regime, 16 * i, seed)["ep_rew_mean"] for i in range(1, 21)]

    assert trend_reading(rewards("rising"))["reading"] == "rising"
    assert trend_reading(rewards("plateau"))["reading"] == "plateau"


def test_the_share_of_correct_answers_follows_the_reward():
    low = train_records(0, step=2, timesteps=32, samples=64, reward=0.1)
    high = train_records(0, step=2, timesteps=32, samples=64, reward=0.9)
    assert mean_reward(high) - mean_reward(low) > 0.5
    assert {r["rollout_id"] for r in low} == {2} and [r["sample_index"] for r in low] == list(
        range(64)
    )
    assert train_records(0, 2, 32, 8, 0.5) == train_records(0, 2, 32, 8, 0.5)
    evals = eval_records(0, step=4, timesteps=80, samples=16, reward=0.5)
    assert len(evals) == 12 and {r["dataset"] for r in evals} == {"gsm8k", "math500", "中文数学"}


def test_the_table_looks_like_stable_baselines3s():
    text = format_table(
        {"rollout/ep_rew_mean": 0.123456, "time/total_timesteps": 64, "train/approx_kl": 0.0123}
    )
    lines = text.split("\n")
    assert lines[0] == lines[-1] and set(lines[0]) == {"-"}
    assert {len(line) for line in lines} == {len(lines[0])}
    assert lines[1].startswith("| rollout/ ") and lines[1].endswith(" |")
    assert lines[2].split("|")[1:3] == ["    ep_rew_mean     ", " 0.123  "]
    assert "|    total_timesteps | 64     |" in text


def test_an_atomic_write_that_fails_keeps_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "resume.json"
    atomic_write(target, b'{"old": 1}')

    def disk_full(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("rollouts.demo_trainer.files.os.fsync", disk_full)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, b'{"new": 2}')
    assert target.read_bytes() == b'{"old": 1}'
    assert [p.name for p in tmp_path.iterdir()] == ["resume.json"]


def test_numbered_checkpoints_keep_the_last_k_and_never_the_rolling_ones(tmp_path):
    files = RunFiles(tmp_path, keep=2)
    state = {"timesteps": 0, "step": 0, "regime": "rising", "seed": 0}
    files.save_checkpoint("baseline", state)
    for step in (2, 4, 10, 12):
        files.save_numbered({**state, "step": step, "timesteps": step * 16})
    files.save_checkpoint("latest", state)
    assert sorted(p.name for p in files.checkpoints.iterdir()) == [
        "baseline.json", "latest.json", "step-10.json", "step-12.json",
    ]  # fmt: skip
    assert files.checkpoint_files()[-2:] == ["checkpoints/step-10.json", "checkpoints/step-12.json"]


def test_resume_accepts_a_checkpoint_a_resume_json_or_a_run_directory(tmp_path):
    files = RunFiles(tmp_path, keep=3)
    state = {"timesteps": 48, "step": 3, "regime": "kl", "seed": 5}
    files.write_resume(files.save_checkpoint("latest", state), state)
    for target in (tmp_path, tmp_path / "resume.json", tmp_path / "checkpoints/latest.json"):
        found, path = load_resume(target)
        assert (found["timesteps"], found["regime"], path.name) == (48, "kl", "latest.json")
    (tmp_path / "other.json").write_text('{"something": "else"}')
    with pytest.raises(ValueError, match="not a demo trainer checkpoint"):
        load_resume(tmp_path / "other.json")


def run_in_process(tmp_path: Path, **kwargs: object) -> tuple[int, list[dict[str, object]]]:
    options = Options(run_dir=tmp_path / "run", step_seconds=0, samples_per_step=4, **kwargs)  # type: ignore[arg-type]
    out = io.StringIO()
    code = Trainer(options, out).run()
    lines = [json.loads(x) for x in out.getvalue().splitlines() if x.startswith("{")]
    lines = [x for x in lines if x["event"] != "progress" or "timesteps" in x]
    return code, lines


def test_a_stop_already_requested_saves_before_the_first_step(tmp_path):
    write_control(tmp_path / "control.json", stop=True)
    code, lines = run_in_process(tmp_path, steps=5, control_file=str(tmp_path / "control.json"))
    assert code == 0 and [x["event"] for x in lines] == ["stopped"]
    stopped = json.loads((tmp_path / "run/stopped.json").read_text())
    assert stopped["timesteps"] == 0 and stopped["stopped_by"] == "control_file"


def test_a_resumed_loop_takes_the_checkpoints_regime_and_seed(tmp_path):
    assert run_in_process(tmp_path, steps=2, regime="kl", seed=7)[0] == 0
    code, lines = run_in_process(tmp_path, steps=1, resume=tmp_path / "run")
    assert code == 0 and lines[0]["event"] == "resumed"
    assert lines[0]["from_checkpoint"] == {"regime": "kl", "seed": 7}
    assert lines[1]["timesteps"] == 12
    assert lines[1]["approx_kl"] == metrics("kl", 12, seed=7)["approx_kl"]


def test_the_control_files_api(tmp_path, monkeypatch):
    monkeypatch.delenv("RELAX_CONTROL_FILE", raising=False)
    path = tmp_path / "c.json"
    assert read_control(path) == {"pause": False, "stop": False}
    write_control(path, pause=True)
    write_control(path, stop=True)
    assert read_control(path) == {"pause": True, "stop": True}
    assert TrainingControl(path).check() is True
    assert TrainingControl(None).check() is False
    path.write_text("{half")
    assert read_control(path) == {"pause": False, "stop": False}


def test_a_bad_resume_target_exits_2_and_writes_nothing(tmp_path):
    (tmp_path / "junk.json").write_text('{"timesteps": "many"}')
    for target in (tmp_path / "junk.json", tmp_path / "missing.json"):
        assert run_in_process(tmp_path, steps=1, resume=target)[0] == 2
    assert not (tmp_path / "run").exists()


def test_an_injected_failure_fires_until_a_resume_starts_at_or_past_it(tmp_path):
    assert run_in_process(tmp_path, steps=2, fail_at_step=4)[0] == 0
    code, lines = run_in_process(tmp_path, steps=5, fail_at_step=4, resume=tmp_path / "run")
    assert code == 1 and lines[-1]["timesteps"] == 16  # steps 2 and 3 ran, step 4 raised
    failure = json.loads((tmp_path / "run/training_failure.json").read_text())
    assert (failure["step"], failure["error"]) == (4, "InjectedFailure")
    code, lines = run_in_process(tmp_path, steps=1, fail_at_step=4, resume=tmp_path / "run")
    assert code == 0 and lines[-1]["timesteps"] == 20
